// Package userdata decodes cloud-init user-data and vendor-data: it splits a
// payload into parts (gzip, MIME multipart, #cloud-config, shell scripts,
// boothooks, #include lists, #cloud-config-archive), merges the
// cloud-config parts as cloud-init does, and validates cloud-config against
// the schema of the keys earlyinit knows.
//
// The reference is cloud-init 22.4: cloudinit/user_data.py,
// cloudinit/handlers/, cloudinit/mergers/ and
// config/schemas/schema-cloud-config-v1.json. Everything here is a pure
// function of bytes; fetching #include URLs goes through a caller-supplied
// function.
package userdata

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// Content types of the parts Decode returns.
const (
	TypeCloudConfig        = "text/cloud-config"
	TypeShellScript        = "text/x-shellscript"
	TypeShellScriptPerBoot = "text/x-shellscript-per-boot"
	TypeShellScriptPerInst = "text/x-shellscript-per-instance"
	TypeShellScriptPerOnce = "text/x-shellscript-per-once"
	TypeBoothook           = "text/cloud-boothook"
	TypeInclude            = "text/x-include-url"
	typeIncludeOnce        = "text/x-include-once-url"
	typeArchive            = "text/cloud-config-archive"
	typePartHandler        = "text/part-handler"
	typeJinja              = "text/jinja2"
	typeJSONPatch          = "text/cloud-config-jsonp"
	typeNotMultipart       = "text/x-not-multipart"
	typePlain              = "text/plain"
	typeOctet              = "application/octet-stream"
	archiveDefaultType     = TypeCloudConfig
)

// MaxSize bounds user-data after decompression: a gzip payload (or part)
// that inflates past it, in total over one Decode, is an error.
const MaxSize = 16 << 20

// maxMIMEDepth bounds multipart nesting.
const maxMIMEDepth = 16

// Part is one decoded piece of user-data.
type Part struct {
	// Type is one of the Type* constants.
	Type string
	// Filename is the part's MIME filename, or cloud-init's "part-NNN"
	// (numbered from 001 in the order cloud-init attaches parts) when it
	// has none.
	Filename string
	// Content is the payload, transfer-decoded and decompressed. For
	// TypeInclude it is the include text; see IncludeURLs.
	Content []byte
	// MergeType is the part's Merge-Type (or X-Merge-Type) header, which
	// chooses how a cloud-config part merges; see Merge.
	MergeType string
	// Vendor is set on the parts of vendor-data (VendorParts,
	// Vendor2Parts): their scripts are kept apart from user-data's.
	Vendor bool

	autoName bool
}

// Warning is a problem that does not stop the boot: a part skipped, a
// content type earlyinit does not handle, a URL that could not be fetched.
type Warning string

// Decode splits raw user-data into parts, as cloud-init's
// UserDataProcessor does:
//
//   - gzip (magic 1f 8b) is inflated first, up to MaxSize; a corrupt gzip
//     stream is used as it is, as cloud-init does, with a warning;
//   - a payload with "MIME-Version:" in its first 4096 bytes is a MIME
//     message: multipart/* parts are walked depth first (nested too), with
//     Content-Transfer-Encoding base64 or quoted-printable decoded and
//     parts of a gzip content type inflated;
//   - any other payload, and MIME parts of type text/plain or
//     text/x-shellscript, are typed by their first characters: #cloud-config,
//     #!, #cloud-boothook, #include, #include-once, #cloud-config-archive...
//   - #cloud-config-archive is a YAML list of {type, content, filename}
//     (or plain strings) whose entries become parts;
//   - #include and #include-once become one TypeInclude part, fetched later
//     by FetchIncludes.
//
// Empty (or all-blank) user-data has no parts. A `## template: jinja`
// part is kept as TypeJinja, for RenderJinja. Content earlyinit cannot
// handle (unknown types, part-handlers, JSON patches) is dropped with a
// warning. The error is only for user-data past MaxSize.
func Decode(raw []byte) ([]Part, []Warning, error) {
	return decode(raw, MaxSize)
}

// decode is Decode with limit in place of MaxSize.
func decode(raw []byte, limit int) ([]Part, []Warning, error) {
	d := &decoder{budget: limit, limit: limit}
	if err := d.blob(raw); err != nil {
		return nil, d.warns, err
	}
	return d.parts, d.warns, nil
}

type decoder struct {
	parts []Part
	warns []Warning
	// budget is what is left of limit (MaxSize) for inflated data.
	budget, limit int
	// attached counts parts as cloud-init attaches them, for part-NNN names.
	attached int
}

func (d *decoder) warnf(format string, args ...any) {
	d.warns = append(d.warns, Warning(fmt.Sprintf(format, args...)))
}

// ErrTooBig is the error for user-data that inflates past MaxSize.
var ErrTooBig = errors.New("user-data too big")

// gunzip inflates data, charging the output to d's budget.
func (d *decoder) gunzip(data []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	n, err := io.Copy(&out, io.LimitReader(zr, int64(d.budget)+1))
	if err != nil {
		return nil, err
	}
	if n > int64(d.budget) {
		return nil, fmt.Errorf("%w: inflates past %d bytes", ErrTooBig, d.limit)
	}
	d.budget -= int(n)
	return out.Bytes(), nil
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// blob is cloud-init's convert_string followed by _process_msg.
func (d *decoder) blob(raw []byte) error {
	if len(raw) > d.limit {
		return fmt.Errorf("%w: %d bytes, more than %d", ErrTooBig, len(raw), d.limit)
	}
	if isGzip(raw) {
		out, err := d.gunzip(raw)
		switch {
		case errors.Is(err, ErrTooBig):
			return err
		case err != nil:
			d.warnf("user-data starts like gzip but does not inflate (%v): using it as it is", err)
		default:
			raw = out
		}
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	head := raw
	if len(head) > 4096 {
		head = head[:4096]
	}
	if bytes.Contains(bytes.ToLower(head), []byte("mime-version:")) {
		if h, body, err := readHeader(raw); err == nil {
			return d.mime(h, body, 0)
		} else {
			d.warnf("user-data mentions MIME-Version but its header does not parse (%v): reading it as one part", err)
		}
	}
	return d.leaf(typeNotMultipart, "", "", raw)
}

// gzipType tells the content types cloud-init inflates (DECOMP_TYPES).
func gzipType(ctype string) bool {
	switch ctype {
	case "application/gzip",
		"application/gzip-compressed",
		"application/gzipped",
		"application/x-compress",
		"application/x-compressed",
		"application/x-gunzip",
		"application/x-gzip",
		"application/x-gzip-compressed":
		return true
	}
	return false
}

// sniffedType tells the declared types cloud-init re-types by content.
func sniffedType(ctype string) bool {
	switch ctype {
	case typePlain, typeNotMultipart, TypeShellScript:
		return true
	}
	return false
}

// prefixes maps content starts to types, longest first (INCLUSION_SRCH).
var prefixes = []struct{ prefix, typ string }{
	{"#cloud-config-archive", typeArchive},
	{"text/x-shellscript-per-instance", TypeShellScriptPerInst},
	{"text/x-shellscript-per-boot", TypeShellScriptPerBoot},
	{"text/x-shellscript-per-once", TypeShellScriptPerOnce},
	{"#cloud-config-jsonp", typeJSONPatch},
	{"#cloud-boothook", TypeBoothook},
	{"#include-once", typeIncludeOnce},
	{"#cloud-config", TypeCloudConfig},
	{"#part-handler", typePartHandler},
	{"## template: jinja", typeJinja},
	{"#include", TypeInclude},
	{"#!", TypeShellScript},
}

// sniff is handlers.type_from_starts_with: the type the payload's first
// characters announce, case-insensitively, after leading white space.
func sniff(payload []byte) string {
	p := bytes.TrimLeft(payload, " \t\r\n\v\f")
	if len(p) > 64 {
		p = p[:64]
	}
	lc := strings.ToLower(string(p))
	for _, e := range prefixes {
		if strings.HasPrefix(lc, e.prefix) {
			return e.typ
		}
	}
	return ""
}

// leaf handles one non-multipart part: the body of _process_msg's loop.
func (d *decoder) leaf(ctype, filename, mergeType string, payload []byte) error {
	if gzipType(ctype) {
		out, err := d.gunzip(payload)
		if errors.Is(err, ErrTooBig) {
			return err
		}
		if err != nil {
			d.warnf("part %s: %s does not inflate (%v): skipped", partName(filename), ctype, err)
			return nil
		}
		payload, ctype = out, typePlain
	}
	if sniffedType(ctype) {
		if t := sniff(payload); t != "" {
			ctype = t
		} else if ctype == TypeShellScript {
			d.warnf("part %s: text/x-shellscript does not start with #!", partName(filename))
		}
	}
	switch ctype {
	case TypeInclude, typeIncludeOnce:
		d.parts = append(d.parts, Part{Type: TypeInclude, Filename: filename, Content: payload})
		return nil
	case typeArchive:
		return d.archive(filename, payload)
	}
	d.attach(ctype, filename, mergeType, payload)
	return nil
}

// attach keeps a part of a type earlyinit handles and warns about others,
// numbering it as cloud-init's _attach_part does either way.
func (d *decoder) attach(ctype, filename, mergeType string, payload []byte) {
	d.attached++
	p := Part{Type: ctype, Filename: filename, Content: payload, MergeType: mergeType}
	if p.Filename == "" {
		p.Filename = fmt.Sprintf("part-%03d", d.attached)
		p.autoName = true
	}
	switch ctype {
	case TypeCloudConfig, TypeShellScript, TypeShellScriptPerBoot, TypeShellScriptPerInst,
		TypeShellScriptPerOnce, TypeBoothook, TypeJinja:
		d.parts = append(d.parts, p)
	case typePartHandler:
		d.warnf("part %s: part-handlers (Python code) are not supported by earlyinit: skipped", p.Filename)
	case typeJSONPatch:
		d.warnf("part %s: #cloud-config-jsonp is not supported by earlyinit: skipped", p.Filename)
	default:
		if len(bytes.TrimSpace(payload)) == 0 {
			return
		}
		what := "content-type " + ctype
		if ctype == typeNotMultipart {
			what = "non-multipart user-data"
		}
		// Never the content itself: user-data may hold secrets, and
		// warnings reach logs and status.json.
		d.warnf("part %s: unhandled %s (%d bytes, no known #type line): skipped", p.Filename, what, len(payload))
	}
}

func partName(filename string) string {
	if filename == "" {
		return "(unnamed)"
	}
	return filename
}

// archive explodes a #cloud-config-archive: a YAML list whose entries are
// strings (content) or maps with content, type, filename and headers.
// Unlike cloud-init, an entry typed (or starting) #include is kept as an
// include, so FetchIncludes expands it; cloud-init would drop it as an
// unhandled type.
//
// The entries' content counts against the size limit: YAML aliases could
// otherwise repeat one big string without end.
func (d *decoder) archive(filename string, payload []byte) error {
	v, err := loadYAML(payload)
	if err != nil {
		d.warnf("part %s: #cloud-config-archive: %v: skipped", partName(filename), err)
		return nil
	}
	if v == nil {
		return nil
	}
	entries, ok := v.([]any)
	if !ok {
		d.warnf("part %s: #cloud-config-archive must be a YAML list, not %s: skipped", partName(filename), scalar.TypeName(v))
		return nil
	}
	for i, e := range entries {
		where := fmt.Sprintf("part %s: #cloud-config-archive entry %d", partName(filename), i)
		if err := d.archiveEntry(where, e); err != nil {
			return err
		}
	}
	return nil
}

// archiveEntry makes archive entry e, named where in warnings, a part, or
// skips it with a warning; the error is only for the size limit.
func (d *decoder) archiveEntry(where string, e any) error {
	if s, ok := e.(string); ok {
		e = map[string]any{"content": s}
	}
	m, ok := e.(map[string]any)
	if !ok {
		d.warnf("%s is a %s, not a map or a string: skipped", where, scalar.TypeName(e))
		return nil
	}
	content, binary, ok := d.archiveContent(where, m)
	if !ok {
		return nil
	}
	if len(content) > d.budget {
		return fmt.Errorf("%w: #cloud-config-archive entries add up to more than %d bytes", ErrTooBig, d.limit)
	}
	d.budget -= len(content)
	ctype, ok := d.archiveType(where, m, content, binary)
	if !ok {
		return nil
	}
	fn := ""
	if f, ok := m["filename"]; ok && f != nil {
		fn = fmt.Sprint(f)
	}
	switch ctype {
	case TypeInclude, typeIncludeOnce:
		d.parts = append(d.parts, Part{Type: TypeInclude, Filename: fn, Content: content})
	case typeArchive:
		d.warnf("%s: a #cloud-config-archive inside an archive is not expanded: skipped", where)
	default:
		d.attach(ctype, fn, archiveMergeType(m), content)
	}
	return nil
}

// archiveContent is entry m's content and whether it is binary (YAML
// !!binary); ok is false, after a warning, when it is neither.
func (d *decoder) archiveContent(where string, m map[string]any) (content []byte, binary, ok bool) {
	switch c := m["content"].(type) {
	case nil:
	case string:
		content = []byte(c)
	case []byte:
		content, binary = c, true
	default:
		d.warnf("%s: content is a %s, not a string: skipped", where, scalar.TypeName(c))
		return nil, false, false
	}
	return content, binary, true
}

// archiveType is entry m's content type: its type key, else the type its
// content announces, else cloud-config (octet-stream for binary content);
// ok is false, after a warning, when the type key is not a MIME type.
func (d *decoder) archiveType(where string, m map[string]any, content []byte, binary bool) (string, bool) {
	ctype := ""
	if t, ok := m["type"]; ok && t != nil {
		s, ok := t.(string)
		if !ok || !strings.Contains(s, "/") {
			d.warnf("%s: its type is not a MIME type: skipped", where)
			return "", false
		}
		ctype = strings.ToLower(strings.TrimSpace(s))
	}
	if ctype == "" {
		ctype = sniff(content)
	}
	if ctype == "" {
		ctype = archiveDefaultType
		if binary {
			ctype = typeOctet
		}
	}
	return ctype, true
}

// archiveMergeType is entry m's merge-type (or x-merge-type) key, in any
// case, "" if none is a string.
func archiveMergeType(m map[string]any) string {
	mergeType := ""
	for k, v := range m {
		switch strings.ToLower(k) {
		case "merge-type", "x-merge-type":
			if s, ok := v.(string); ok {
				mergeType = s
			}
		}
	}
	return mergeType
}
