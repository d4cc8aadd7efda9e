package configdrive

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// ConvertVendorData extracts the cloud-init payload from an OpenStack
// vendor_data.json or vendor_data2.json document (name is the file, for
// errors), as cloud-init's convert_vendordata does:
//
//   - a string is the payload;
//   - a list holds payload parts, each a string; they are joined into one
//     multipart/mixed MIME message, one part each, which user-data
//     processing splits again (cloud-init hands the list itself to its
//     UserDataProcessor, which treats each element as a part);
//   - an object's "cloud-init" value is converted the same way, once (a
//     nested object is an error); other keys are for other consumers;
//   - null, false, 0, "", [] and {} mean no vendor data (nil).
//
// A value of any other type is an error; cloud-init would log a warning and
// drop the vendor data.
func ConvertVendorData(name string, b []byte) ([]byte, error) {
	v, err := jsondoc.Decode(name, b)
	if err != nil {
		return nil, err
	}
	out, err := convertVendorData(v, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return out, nil
}

func convertVendorData(v any, top bool) ([]byte, error) {
	where := ""
	if !top {
		where = `"cloud-init": `
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case bool:
		if !v {
			return nil, nil
		}
	case json.Number:
		if f, err := v.Float64(); err == nil && f == 0 {
			return nil, nil
		}
	case string:
		if v == "" {
			return nil, nil
		}
		return []byte(v), nil
	case []any:
		if len(v) == 0 {
			return nil, nil
		}
		var parts []string
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("%slist element %d: want a string, got %s", where, i, scalar.JSONNoun(e))
			}
			if s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) == 0 {
			return nil, nil
		}
		return mimeMultipart(parts), nil
	case map[string]any:
		if len(v) == 0 {
			return nil, nil
		}
		if top {
			return convertVendorData(v["cloud-init"], false)
		}
		return nil, fmt.Errorf(`"cloud-init": cannot be an object`)
	}
	return nil, fmt.Errorf("%swant a string, a list or an object, got %s", where, scalar.JSONNoun(v))
}

// mimeMultipart joins parts into one multipart/mixed message. A part that is
// itself a MIME document (cloud-init's test: "mime-version:" in its first
// 4096 bytes) goes in with its own headers; any other gets the
// text/x-not-multipart type cloud-init gives it, so its content type is
// found from how it starts (#cloud-config, #!, ...). parts must not
// be empty.
// The boundary is derived from the content, so the output is deterministic,
// and is checked not to occur in it.
func mimeMultipart(parts []string) []byte {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	sum := hex.EncodeToString(h.Sum(nil))[:24]
	boundary := ""
	for i := 0; ; i++ {
		boundary = fmt.Sprintf("==earlyinit-vendor-data-%s-%d==", sum, i)
		clash := false
		for _, p := range parts {
			if strings.Contains(p, boundary) {
				clash = true
				break
			}
		}
		if !clash {
			break
		}
	}

	var b bytes.Buffer
	fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=\"%s\"\nMIME-Version: 1.0\n\n", boundary)
	for _, p := range parts {
		fmt.Fprintf(&b, "--%s\n", boundary)
		head := p
		if len(head) > 4096 {
			head = head[:4096]
		}
		if !strings.Contains(strings.ToLower(head), "mime-version:") {
			b.WriteString("Content-Type: text/x-not-multipart\n\n")
		}
		// The newline before a boundary belongs to the boundary, so the
		// part keeps its own trailing newline, if it has one.
		b.WriteString(p)
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "--%s--\n", boundary)
	return b.Bytes()
}
