package userdata

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"mime/multipart"
	"net/textproto"
	"strings"
	"testing"
)

func gz(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type mpart struct {
	header  map[string]string
	content []byte
}

// buildMIME writes a multipart/mixed message with mime/multipart.
func buildMIME(t testing.TB, parts []mpart) []byte {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		for k, v := range p.header {
			h.Set(k, v)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pw.Write(p.content); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return []byte(fmt.Sprintf("Content-Type: multipart/mixed; boundary=%q\nMIME-Version: 1.0\n\n%s", w.Boundary(), body.Bytes()))
}

// got is a comparable view of a part.
type got struct{ Type, Filename, Content, MergeType string }

func view(parts []Part) []got {
	var out []got
	for _, p := range parts {
		out = append(out, got{p.Type, p.Filename, string(p.Content), p.MergeType})
	}
	return out
}

func sameParts(t *testing.T, parts []Part, want []got) {
	t.Helper()
	g := view(parts)
	if fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("parts:\n got %q\nwant %q", g, want)
	}
}

func hasWarning(ws []Warning, sub string) bool {
	for _, w := range ws {
		if strings.Contains(string(w), sub) {
			return true
		}
	}
	return false
}

const cc = "#cloud-config\nhostname: h1\n"

// handMIME is the kind of message `cloud-init devel make-mime` writes.
const handMIME = `Content-Type: multipart/mixed; boundary="===============4291038100093149247=="
MIME-Version: 1.0

--===============4291038100093149247==
Content-Type: text/cloud-config; charset="us-ascii"
MIME-Version: 1.0
Content-Transfer-Encoding: 7bit
Content-Disposition: attachment; filename="config.yaml"

#cloud-config
runcmd:
  - echo hi

--===============4291038100093149247==
Content-Type: text/x-shellscript; charset="us-ascii"
MIME-Version: 1.0
Content-Transfer-Encoding: base64
Content-Disposition: attachment; filename="run.sh"

IyEvYmluL3NoCmVjaG8gaGVsbG8K

--===============4291038100093149247==
Content-Type: text/plain; charset="utf-8"
Content-Transfer-Encoding: quoted-printable

#cloud-boothook
echo caf=C3=A9 > /tmp/x
--===============4291038100093149247==--
`

func TestDecode(t *testing.T) {
	tests := []struct {
		name  string
		raw   []byte
		want  []got
		warns []string
	}{
		{name: "empty", raw: nil},
		{name: "blank", raw: []byte(" \n\n")},
		{name: "cloud-config", raw: []byte(cc), want: []got{{TypeCloudConfig, "part-001", cc, ""}}},
		{name: "cloud-config after blank lines, any case", raw: []byte("\n  #Cloud-Config\na: 1\n"),
			want: []got{{TypeCloudConfig, "part-001", "\n  #Cloud-Config\na: 1\n", ""}}},
		{name: "shell script", raw: []byte("#!/bin/sh\necho hi\n"), want: []got{{TypeShellScript, "part-001", "#!/bin/sh\necho hi\n", ""}}},
		{name: "boothook", raw: []byte("#cloud-boothook\necho hi\n"), want: []got{{TypeBoothook, "part-001", "#cloud-boothook\necho hi\n", ""}}},
		{name: "include", raw: []byte("#include\nhttp://a/b\n"), want: []got{{TypeInclude, "", "#include\nhttp://a/b\n", ""}}},
		{name: "include-once", raw: []byte("#include-once http://a/b\n"), want: []got{{TypeInclude, "", "#include-once http://a/b\n", ""}}},
		{name: "gzip cloud-config", raw: gz(t, []byte(cc)), want: []got{{TypeCloudConfig, "part-001", cc, ""}}},
		{name: "corrupt gzip used as is", raw: []byte{0x1f, 0x8b, 'x'}, warns: []string{"does not inflate", "unhandled non-multipart"}},
		{name: "unknown text", raw: []byte("hello world\n"), warns: []string{`unhandled non-multipart user-data (12 bytes, no known #type line)`}},
		{name: "part-handler", raw: []byte("#part-handler\ndef list_types(): pass\n"), warns: []string{"part-handlers"}},
		{name: "jinja", raw: []byte("## template: jinja\n#cloud-config\n"), want: []got{{TypeJinja, "part-001", "## template: jinja\n#cloud-config\n", ""}}},
		{name: "jsonp", raw: []byte("#cloud-config-jsonp\n[]"), warns: []string{"jsonp"}},
		{name: "hand-written MIME", raw: []byte(handMIME), want: []got{
			{TypeCloudConfig, "config.yaml", "#cloud-config\nruncmd:\n  - echo hi\n", ""},
			{TypeShellScript, "run.sh", "#!/bin/sh\necho hello\n", ""},
			{TypeBoothook, "part-003", "#cloud-boothook\necho café > /tmp/x", ""},
		}},
		{name: "mime-version not first: header does not parse", raw: []byte("#cloud-config\n# MIME-Version: 1.0\na: 1\n"),
			want:  []got{{TypeCloudConfig, "part-001", "#cloud-config\n# MIME-Version: 1.0\na: 1\n", ""}},
			warns: []string{"header does not parse"}},
		{name: "single-part MIME message", raw: []byte("Content-Type: text/x-shellscript\nMIME-Version: 1.0\nMerge-Type: x\n\n#!/bin/sh\n"),
			want: []got{{TypeShellScript, "part-001", "#!/bin/sh\n", "x"}}},
		{name: "archive", raw: []byte(`#cloud-config-archive
- "#!/bin/sh\necho one"
- type: text/cloud-config
  content: "a: 1"
  filename: cfg
  Merge-Type: list(append)+dict(recurse_array)+str()
- content: "b: 2"
- content: "#include http://x/y"
- type: text/cloud-boothook
  content: "echo boot"
- 42
- type: text/plain
  content: "plain"
`), want: []got{
			{TypeShellScript, "part-001", "#!/bin/sh\necho one", ""},
			{TypeCloudConfig, "cfg", "a: 1", "list(append)+dict(recurse_array)+str()"},
			{TypeCloudConfig, "part-003", "b: 2", ""},
			{TypeInclude, "", "#include http://x/y", ""},
			{TypeBoothook, "part-004", "echo boot", ""},
		}, warns: []string{"entry 5 is a integer", "unhandled content-type text/plain"}},
		{name: "archive not a list", raw: []byte("#cloud-config-archive\na: 1\n"), warns: []string{"must be a YAML list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parts, warns, err := Decode(tt.raw)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			sameParts(t, parts, tt.want)
			for _, w := range tt.warns {
				if !hasWarning(warns, w) {
					t.Errorf("no warning containing %q in %q", w, warns)
				}
			}
			if len(tt.warns) == 0 && len(warns) > 0 {
				t.Errorf("unexpected warnings %q", warns)
			}
		})
	}
}

func TestDecodeBuiltMIME(t *testing.T) {
	inner := buildMIME(t, []mpart{
		{map[string]string{"Content-Type": "text/x-shellscript"}, []byte("#!/bin/sh\necho inner\n")},
		{map[string]string{"Content-Type": "text/cloud-config", "Merge-Type": "list(append)"}, []byte("c: 3\n")},
	})
	ih, ibody, err := readHeader(inner)
	if err != nil {
		t.Fatal(err)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("#cloud-config\nb: 2\n"))
	raw := buildMIME(t, []mpart{
		{map[string]string{"Content-Type": "text/cloud-config", "Content-Disposition": `attachment; filename="a.yaml"`}, []byte("a: 1\n")},
		{map[string]string{"Content-Type": "text/plain", "Content-Transfer-Encoding": "base64"}, []byte(b64[:10] + "\n" + b64[10:])},
		{map[string]string{"Content-Type": ih.Get("Content-Type")}, ibody},
		{map[string]string{"Content-Type": "application/x-gzip", "Content-Disposition": `attachment; filename="z"`}, gz(t, []byte("#cloud-boothook\necho z\n"))},
		{map[string]string{"Content-Type": "text/x-shellscript; name=\"byname.sh\""}, []byte("#cloud-config\nd: 4\n")},
		{map[string]string{"Content-Type": "text/x-shellscript-per-boot"}, []byte("#!/bin/sh\necho boot\n")},
		{map[string]string{"Content-Type": "application/octet-stream"}, []byte{0, 1, 2}},
		{map[string]string{"Content-Type": "text/x-include-url"}, []byte("http://example.com/x\n")},
		{map[string]string{"Content-Type": "text/x-shellscript"}, []byte("echo no shebang\n")},
	})
	parts, warns, err := Decode(gz(t, raw))
	if err != nil {
		t.Fatal(err)
	}
	sameParts(t, parts, []got{
		{TypeCloudConfig, "a.yaml", "a: 1\n", ""},
		{TypeCloudConfig, "part-002", "#cloud-config\nb: 2\n", ""},
		{TypeShellScript, "part-003", "#!/bin/sh\necho inner\n", ""},
		{TypeCloudConfig, "part-004", "c: 3\n", "list(append)"},
		{TypeBoothook, "z", "#cloud-boothook\necho z\n", ""},
		{TypeCloudConfig, "byname.sh", "#cloud-config\nd: 4\n", ""},
		{TypeShellScriptPerBoot, "part-007", "#!/bin/sh\necho boot\n", ""},
		{TypeInclude, "", "http://example.com/x\n", ""},
		{TypeShellScript, "part-009", "echo no shebang\n", ""},
	})
	for _, w := range []string{"unhandled content-type application/octet-stream", "does not start with #!"} {
		if !hasWarning(warns, w) {
			t.Errorf("no warning %q in %q", w, warns)
		}
	}
}

func TestDecodeMIMEErrors(t *testing.T) {
	// No closing boundary: the last part still counts.
	cut := "Content-Type: multipart/mixed; boundary=XX\nMIME-Version: 1.0\n\n--XX\nContent-Type: text/cloud-config\n\na: 1\n--XX\nContent-Type: text/x-shellscript\n\n#!/bin/sh\n"
	parts, _, err := Decode([]byte(cut))
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0].Type != TypeCloudConfig || parts[1].Type != TypeShellScript || !strings.HasPrefix(string(parts[1].Content), "#!/bin/sh") {
		t.Errorf("cut message: %q", view(parts))
	}

	noBoundary := "Content-Type: multipart/mixed\nMIME-Version: 1.0\n\nfoo\n"
	parts, warns, err := Decode([]byte(noBoundary))
	if err != nil || len(parts) != 0 || !hasWarning(warns, "without a boundary") {
		t.Errorf("no boundary: %q %q %v", view(parts), warns, err)
	}

	badB64 := "Content-Type: text/cloud-config\nContent-Transfer-Encoding: base64\nMIME-Version: 1.0\n\n!!!!\n"
	parts, warns, err = Decode([]byte(badB64))
	if err != nil || len(parts) != 0 || !hasWarning(warns, "base64") {
		t.Errorf("bad base64: %q %q %v", view(parts), warns, err)
	}

	badGz := buildMIME(t, []mpart{{map[string]string{"Content-Type": "application/gzip"}, []byte("not gzip")}})
	parts, warns, err = Decode(badGz)
	if err != nil || len(parts) != 0 || !hasWarning(warns, "does not inflate") {
		t.Errorf("bad gzip part: %q %q %v", view(parts), warns, err)
	}

	// Deep nesting is bounded.
	msg := []byte("#!/bin/sh\n")
	hdr := "text/x-shellscript"
	for i := 0; i < maxMIMEDepth+2; i++ {
		b := fmt.Sprintf("b%d", i)
		msg = []byte(fmt.Sprintf("--%s\nContent-Type: %s\n\n%s\n--%s--\n", b, hdr, msg, b))
		hdr = "multipart/mixed; boundary=" + b
	}
	msg = append([]byte("Content-Type: "+hdr+"\nMIME-Version: 1.0\n\n"), msg...)
	parts, warns, err = Decode(msg)
	if err != nil || len(parts) != 0 || !hasWarning(warns, "nested deeper") {
		t.Errorf("deep nesting: %q %q %v", view(parts), warns, err)
	}
}

func TestDecodeGzipBomb(t *testing.T) {
	// The real limit, once: 16 MiB + 1 of zeros is a 16 KiB bomb.
	bomb := gz(t, make([]byte, MaxSize+1))
	if len(bomb) > 1<<20 {
		t.Fatalf("bomb is %d bytes, meant to be small", len(bomb))
	}
	if _, _, err := Decode(bomb); !errors.Is(err, ErrTooBig) {
		t.Errorf("top-level bomb: err = %v, want ErrTooBig", err)
	}
	if _, _, err := Decode(make([]byte, MaxSize+1)); !errors.Is(err, ErrTooBig) {
		t.Errorf("raw user-data past MaxSize: err = %v, want ErrTooBig", err)
	}

	// The accounting, with a small limit.
	const limit = 4096
	script := func(n int) []byte {
		return append([]byte("#!/bin/sh\n"), bytes.Repeat([]byte{'#'}, n-10)...)
	}
	parts, _, err := decode(gz(t, script(limit)), limit)
	if err != nil || len(parts) != 1 || len(parts[0].Content) != limit {
		t.Errorf("payload of exactly the limit: %d parts, err %v", len(parts), err)
	}
	if _, _, err := decode(gz(t, script(limit+1)), limit); !errors.Is(err, ErrTooBig) {
		t.Errorf("payload of limit+1: err = %v, want ErrTooBig", err)
	}
	half := gz(t, script(limit*3/4))
	one := buildMIME(t, []mpart{{map[string]string{"Content-Type": "application/gzip"}, half}})
	if _, _, err := decode(one, limit); err != nil {
		t.Errorf("one part of 3/4 the limit: %v", err)
	}
	two := buildMIME(t, []mpart{
		{map[string]string{"Content-Type": "application/gzip"}, half},
		{map[string]string{"Content-Type": "application/gzip"}, half},
	})
	if _, _, err := decode(two, limit); !errors.Is(err, ErrTooBig) {
		t.Errorf("two parts of 3/4 the limit: err = %v, want ErrTooBig", err)
	}
	// Archive entries count too: aliases cannot repeat a string past it.
	archive := "#cloud-config-archive\n- &big \"#!/bin/sh " + strings.Repeat("x", 1000) + "\"\n" + strings.Repeat("- *big\n", 5)
	if _, _, err := decode([]byte(archive), limit); !errors.Is(err, ErrTooBig) {
		t.Errorf("archive of aliases: err = %v, want ErrTooBig", err)
	}
	if parts, _, err := decode([]byte(archive), 8*limit); err != nil || len(parts) != 6 {
		t.Errorf("archive of aliases under a larger limit: %d parts, err %v", len(parts), err)
	}
	// A gzipped message holding a gzipped part inflates twice, within the limit.
	if _, _, err := decode(gz(t, one), limit); err != nil {
		t.Errorf("gzipped message with one part: %v", err)
	}
}
