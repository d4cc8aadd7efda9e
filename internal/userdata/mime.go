package userdata

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/textproto"
	"strings"
)

// readHeader splits a MIME message into its header and body.
func readHeader(msg []byte) (textproto.MIMEHeader, []byte, error) {
	br := bufio.NewReader(bytes.NewReader(msg))
	h, err := textproto.NewReader(br).ReadMIMEHeader()
	if err != nil {
		return nil, nil, err
	}
	body, err := io.ReadAll(br)
	if err != nil {
		return nil, nil, err
	}
	return h, body, nil
}

// contentType is email.message's get_content_type: the lower-case media
// type, "text/plain" when missing or malformed, and its parameters.
func contentType(h textproto.MIMEHeader) (string, map[string]string) {
	v := h.Get("Content-Type")
	if v == "" {
		return typePlain, nil
	}
	mt, params, err := mime.ParseMediaType(v)
	if err != nil {
		// Keep what precedes the parameters, as Python does.
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(v, ";", 2)[0]))
		params = nil
	}
	if strings.Count(mt, "/") != 1 {
		return typePlain, params
	}
	return mt, params
}

// filename is email.message's get_filename: Content-Disposition's filename
// parameter, else Content-Type's name.
func filename(h textproto.MIMEHeader, ctParams map[string]string) string {
	if cd := h.Get("Content-Disposition"); cd != "" {
		if _, p, err := mime.ParseMediaType(cd); err == nil && p["filename"] != "" {
			return p["filename"]
		}
	}
	return ctParams["name"]
}

func mergeTypeHeader(h textproto.MIMEHeader) string {
	if v := h.Get("Merge-Type"); v != "" {
		return v
	}
	return h.Get("X-Merge-Type")
}

// mime walks a MIME entity depth first, as email.message.walk does.
func (d *decoder) mime(h textproto.MIMEHeader, body []byte, depth int) error {
	ctype, params := contentType(h)
	if !strings.HasPrefix(ctype, "multipart/") {
		fn := filename(h, params)
		payload, err := transferDecode(h.Get("Content-Transfer-Encoding"), body)
		if err != nil {
			d.warnf("part %s: %v: skipped", partName(fn), err)
			return nil
		}
		return d.leaf(ctype, fn, mergeTypeHeader(h), payload)
	}
	if depth >= maxMIMEDepth {
		d.warnf("MIME multiparts nested deeper than %d: inner parts skipped", maxMIMEDepth)
		return nil
	}
	boundary := params["boundary"]
	if boundary == "" {
		d.warnf("%s without a boundary: skipped", ctype)
		return nil
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for i := 0; ; i++ {
		// NextRawPart, not NextPart: NextPart decodes quoted-printable
		// itself and drops the header, and we decode every encoding alike.
		p, err := mr.NextRawPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			d.warnf("%s: part %d: %v: the rest is skipped", ctype, i+1, err)
			return nil
		}
		data, err := io.ReadAll(p)
		if err != nil {
			// A message cut short (no closing boundary) still yields
			// its last part, as Python's email parser does.
			if len(data) == 0 {
				d.warnf("%s: part %d: %v: the rest is skipped", ctype, i+1, err)
				return nil
			}
			d.warnf("%s: part %d: %v", ctype, i+1, err)
		}
		if err := d.mime(p.Header, data, depth+1); err != nil {
			return err
		}
	}
}

// transferDecode undoes a Content-Transfer-Encoding.
func transferDecode(cte string, body []byte) ([]byte, error) {
	switch strings.ToLower(strings.TrimSpace(cte)) {
	case "", "7bit", "8bit", "binary":
		return body, nil
	case "base64":
		s := strings.TrimRight(strings.Map(dropSpace, string(body)), "=")
		out, err := base64.RawStdEncoding.DecodeString(s)
		if err != nil {
			return nil, fmt.Errorf("base64: %w", err)
		}
		return out, nil
	case "quoted-printable":
		out, err := io.ReadAll(quotedprintable.NewReader(bytes.NewReader(body)))
		if err != nil {
			return nil, fmt.Errorf("quoted-printable: %w", err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported Content-Transfer-Encoding %q", cte)
}
