package userdata

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"strings"
	"testing"
)

func decodeSeeds(f *testing.F) {
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte("#cloud-config\na: 1\n"))
	zw.Close()
	for _, s := range [][]byte{
		nil,
		[]byte(cc),
		[]byte("#!/bin/sh\necho hi\n"),
		[]byte("#cloud-boothook\necho\n"),
		[]byte("#include\nhttp://a/b\n"),
		[]byte("#cloud-config-archive\n- {type: text/x-shellscript, content: '#!/bin/sh'}\n- a: 1\n"),
		[]byte(handMIME),
		[]byte("Content-Type: multipart/mixed; boundary=B\nMIME-Version: 1.0\n\n--B\nContent-Type: multipart/alternative; boundary=C\n\n--C\nContent-Type: application/gzip\nContent-Transfer-Encoding: base64\n\nH4sI\n--C--\n--B--\n"),
		z.Bytes(),
	} {
		f.Add(s)
	}
}

func FuzzDecode(f *testing.F) {
	decodeSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		parts, _, err := Decode(raw)
		if err != nil {
			return
		}
		total := 0
		for _, p := range parts {
			total += len(p.Content)
			switch p.Type {
			case TypeCloudConfig, TypeShellScript, TypeShellScriptPerBoot, TypeShellScriptPerInst,
				TypeShellScriptPerOnce, TypeBoothook, TypeJinja:
				if p.Filename == "" {
					t.Errorf("part of type %s without a filename", p.Type)
				}
			case TypeInclude:
				IncludeURLs(p.Content)
			default:
				t.Errorf("Decode returned a part of type %q", p.Type)
			}
		}
		if total > 2*MaxSize+len(raw) {
			t.Errorf("parts hold %d bytes from %d bytes of input", total, len(raw))
		}
		MergeParts(parts)
	})
}

func FuzzValidate(f *testing.F) {
	for _, s := range []string{
		cc,
		"#cloud-config\nusers:\n  - name: a\n    sudo: false\nwrite_files:\n  - {path: /a, permissions: 0644}\n",
		"#cloud-config\na: &x [1, *x]\n",
		"#cloud-config\n<<: {hostname: a}\nmerge_how: dict(replace)+list(append)\n",
		"#cloud-config\nhostname: !!binary aGk=\nfqdn: !!int 3\ntimezone: !foo x\n",
		"#cloud-config\n? [a]\n: b\n",
		"#cloud-config\n---\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, e := range Validate("f", data) {
			if e.Line < 1 || e.Col < 0 {
				t.Errorf("bad position in %v", e)
			}
			if !strings.HasPrefix(e.Error(), fmt.Sprintf("f:%d:", e.Line)) {
				t.Errorf("Error() = %q", e.Error())
			}
		}
		// MergeParts never fails: bad parts are warnings.
		cfg, _ := MergeParts([]Part{{Type: TypeCloudConfig, Content: data}})
		if cfg == nil {
			t.Error("MergeParts returned nil")
		}
	})
}

func FuzzMergeHow(f *testing.F) {
	for _, s := range []string{defaultPartMergers, defaultMergers, "list(append)+dict(recurse_array,allow_delete)+str(append)", "x(", "dict(no_replace,recurse_str)"} {
		f.Add(s, "a: [1, {b: c}]\nd: x\n", "a: [2]\nd: {e: 1}\ng: null\n")
	}
	f.Fuzz(func(t *testing.T, how, a, b string) {
		specs, err := parseMergeString(how)
		if err != nil {
			return
		}
		m, err := newMerger(specs)
		if err != nil {
			return
		}
		va, _ := loadYAML([]byte(a))
		vb, _ := loadYAML([]byte(b))
		before := fmt.Sprint(va)
		m.merge(va, vb)
		if after := fmt.Sprint(va); after != before {
			t.Errorf("merge modified its input: %s -> %s", before, after)
		}
	})
}

func TestResolvePlain(t *testing.T) {
	// Expected values from PyYAML 6 safe_load (cloud-init's loader).
	for _, tt := range []struct {
		in   string
		want any
	}{
		{"off", false}, {"Yes", true}, {"y", "y"}, {"~", nil}, {"", nil}, {"Null", nil},
		{"0644", 420}, {"09", "09"}, {"1:20", 80}, {"1e3", "1e3"}, {"0x1F", 31}, {"0b101", 5},
		{"+12", 12}, {"-0", 0}, {"012_3", 83}, {"1_000", 1000}, {"2.5", 2.5}, {".5", 0.5},
		{"1:20.5", 80.5}, {"-.inf", math.Inf(-1)}, {"1.0e+3", 1000.0}, {"2023-01-01", "2023-01-01"},
		{"99999999999999999999", "99999999999999999999"}, {"yes please", "yes please"},
	} {
		if got := resolvePlain(tt.in); fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tt.want) {
			t.Errorf("resolvePlain(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
	if v := resolvePlain(".NaN"); v.(float64) == v.(float64) {
		t.Errorf(".NaN = %v", v)
	}
}
