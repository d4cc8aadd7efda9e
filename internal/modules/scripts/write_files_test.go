package scripts

import (
	"encoding/base64"
	"io/fs"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

func TestWriteFiles(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte("binary\x00data"))
	gzb64 := base64.StdEncoding.EncodeToString(coretest.Gzipped("zipped\n"))
	te := coretest.NewEnv(t, `write_files:
  - path: /etc/plain
    content: "hello\n"
  - path: /opt/app/b64
    encoding: b64
    content: `+b64+`
    permissions: '0600'
    owner: alice:adm
  - path: /opt/app/gz
    encoding: gz+b64
    content: |
      `+gzb64[:10]+`
      `+gzb64[10:]+`
    permissions: 0755
  - path: /etc/appended
    content: "more\n"
    append: true
    permissions: '0640'
  - path: /home/alice/late
    content: "later\n"
    owner: alice:alice
    defer: true
`)
	te.Write("/etc/appended", "first\n", 0o644)
	te.Write("/etc/passwd", coretest.BasePasswd+"alice:x:1001:1001::/home/alice:/bin/sh\n", 0o644)
	if err := te.RunFunc(WriteFiles); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/etc/plain", "hello\n", 0o644, 0, 0)
	te.WantFile("/opt/app/b64", "binary\x00data", 0o600, 1001, 4)
	te.WantFile("/opt/app/gz", "zipped\n", 0o755, 0, 0)
	te.WantFile("/etc/appended", "first\nmore\n", 0o640, 0, 0)
	if te.Root.Exists("/home/alice/late") {
		t.Error("deferred file written in the boot stage")
	}
	// Deferred: the group exists by then.
	te.Write("/etc/group", coretest.BaseGroup+"alice:x:1001:\n", 0o644)
	if err := te.RunFunc(WriteFilesDeferred); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/home/alice/late", "later\n", 0o644, 1001, 1001)
	if got := te.Read("/etc/plain"); got != "hello\n" {
		t.Errorf("deferred rewrote /etc/plain: %q", got)
	}
	te.WantCalls()
}

func TestWriteFilesErrors(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{"write_files: [{path: /x, owner: nobody}]", `no user "nobody"`},
		{"write_files: [{path: /x, owner: 'root:nogroup'}]", `no group "nogroup"`},
		{"write_files: [{path: /x, encoding: b64, content: 'abcde'}]", "bad base64"},
		{"write_files: [{path: /x, encoding: gzip, content: notgzip}]", "bad gzip"},
		{"write_files: [{path: /x, encoding: rot13}]", `encoding "rot13"`},
		{"write_files: [{path: /x, permissions: '0999'}]", "not an octal mode"},
		{"write_files: [{content: x}]", "path is missing"},
	} {
		te := coretest.NewEnv(t, tc.cfg)
		err := te.RunFunc(WriteFiles)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "write_files.0") {
			t.Errorf("%s: err %v, want %q", tc.cfg, err, tc.want)
		}
		if te.Root.Exists("/x") {
			t.Errorf("%s: /x written", tc.cfg)
		}
	}
}

func TestWriteFilesConfined(t *testing.T) {
	te := coretest.NewEnv(t, `write_files: [{path: ../../../../etc/escape, content: x}, {path: relative/f, content: y}]`)
	if err := te.Root.Symlink("/../../..", "/link"); err != nil {
		t.Fatal(err)
	}
	if err := te.RunFunc(WriteFiles); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/etc/escape", "x", 0o644, 0, 0)
	te.WantFile("/relative/f", "y", 0o644, 0, 0)
}

func TestParsePermissions(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want fs.FileMode
		err  bool
	}{
		{nil, 0o644, false},
		{420, 0o644, false},
		{"0644", 0o644, false},
		{"644", 0o644, false},
		{"0o755", 0o755, false},
		{"4755", 0o755 | fs.ModeSetuid, false},
		{"01777", 0o777 | fs.ModeSticky, false},
		{"rw", 0, true},
		{"77777", 0, true},
		{true, 0, true},
	} {
		got, err := ParsePermissions(tc.in, 0o644)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("ParsePermissions(%v) = %v, %v; want %v err %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func FuzzWriteFilesEncoding(f *testing.F) {
	f.Add("b64", base64.StdEncoding.EncodeToString([]byte("x")))
	f.Add("gz+b64", base64.StdEncoding.EncodeToString(coretest.Gzipped("y")))
	f.Add("gzip", string(coretest.Gzipped("z")))
	f.Add("text/plain", "plain")
	f.Fuzz(func(t *testing.T, enc, content string) {
		out, err := core.WriteFilesEncoding(enc, []byte(content))
		if err == nil && len(out) > core.MaxFileSize {
			t.Fatalf("output of %d bytes", len(out))
		}
	})
}

func FuzzParsePasswd(f *testing.F) {
	f.Add(coretest.BasePasswd)
	f.Add("a:x:1:2:g:/h:/s\n#c\n+nis\n")
	f.Add("bad:line\n")
	f.Fuzz(func(t *testing.T, s string) {
		es, err := core.ParsePasswd([]byte(s))
		if err == nil {
			for _, e := range es {
				if e.UID < 0 || e.GID < 0 || strings.Contains(e.Name, ":") {
					t.Fatalf("bad entry %+v", e)
				}
			}
		}
		gs, err := core.ParseGroup([]byte(s))
		if err == nil {
			for _, g := range gs {
				if g.GID < 0 {
					t.Fatalf("bad group %+v", g)
				}
			}
		}
	})
}
