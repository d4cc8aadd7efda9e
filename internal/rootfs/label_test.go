package rootfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/earlyinit/earlyinit/internal/roottest"
	"golang.org/x/sys/unix"
)

// fakeLabeler labels by exact path and type and records what it was asked.
type fakeLabeler struct {
	mu     sync.Mutex
	labels map[string]string // "path type" or "path" -> context
	asked  []string
}

func kindOf(mode fs.FileMode) string {
	switch mode.Type() {
	case 0:
		return "file"
	case fs.ModeDir:
		return "dir"
	case fs.ModeSymlink:
		return "link"
	}
	return "other"
}

func (l *fakeLabeler) Lookup(p string, mode fs.FileMode) (string, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked = append(l.asked, p+" "+kindOf(mode))
	if c, ok := l.labels[p+" "+kindOf(mode)]; ok {
		return c, true
	}
	c, ok := l.labels[p]
	return c, ok
}

// labelOf reads p's security.selinux without following a symlink; "" when
// it has none.
func labelOf(t *testing.T, p string) string {
	t.Helper()
	buf := make([]byte, 256)
	n, err := unix.Lgetxattr(p, XattrSELinux, buf)
	if errors.Is(err, unix.ENODATA) {
		return ""
	}
	if err != nil {
		t.Fatalf("lgetxattr %s: %v", p, err)
	}
	return string(buf[:n])
}

func TestLabels(t *testing.T) {
	roottest.Require(t) // security.* xattrs need CAP_SYS_ADMIN
	modes(t, func(t *testing.T, r *Root) {
		l := &fakeLabeler{labels: map[string]string{
			"/etc":                "u:r:etc_t:s0",
			"/etc/hostname":       "u:r:net_conf_t:s0",
			"/etc/new":            "u:r:new_dir_t:s0",
			"/etc/new/sub":        "u:r:sub_t:s0",
			"/var/log/x.log":      "u:r:log_t:s0",
			"/etc/link link":      "u:r:link_t:s0",
			"/etc/link file":      "u:r:wrong_t:s0", // a symlink is looked up as one
			"/run/real":           "u:r:run_t:s0",
			"/etc/resolv.conf":    "u:r:wrong_t:s0", // the symlink's path, not the file's
			"/var":                "u:r:var_t:s0",
			"/var/log":            "u:r:var_log_t:s0",
			"/etc/keep.conf file": "u:r:kept_t:s0",
		}}
		// Existing things are not relabelled: /etc exists, so does
		// keep.conf for AppendFile.
		os.MkdirAll(r.Path("/etc"), 0o755)
		os.MkdirAll(r.Path("/run"), 0o755)
		mustWrite(t, r.Path("/etc/keep.conf"), "old\n")
		mustSymlink(t, "../run/real", r.Path("/etc/resolv.conf"))
		r.SetLabeler(l)

		if err := r.WriteFile("/etc/hostname", []byte("h\n"), 0o644, -1, -1); err != nil {
			t.Fatal(err)
		}
		if err := r.MkdirAll("/etc/new/sub", 0o700, -1, -1); err != nil {
			t.Fatal(err)
		}
		if err := r.AppendFile("/var/log/x.log", []byte("a\n"), 0o600, -1, -1); err != nil {
			t.Fatal(err)
		}
		if err := r.AppendFile("/etc/keep.conf", []byte("more\n"), 0o600, -1, -1); err != nil {
			t.Fatal(err)
		}
		if err := r.Symlink("hostname", "/etc/link"); err != nil {
			t.Fatal(err)
		}
		if err := r.WriteFile("/etc/resolv.conf", []byte("nameserver 10.0.0.1\n"), 0o644, -1, -1); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct{ path, want string }{
			{"/etc", ""},
			{"/etc/hostname", "u:r:net_conf_t:s0\x00"},
			{"/etc/new", "u:r:new_dir_t:s0\x00"},
			{"/etc/new/sub", "u:r:sub_t:s0\x00"},
			{"/var", "u:r:var_t:s0\x00"},
			{"/var/log", "u:r:var_log_t:s0\x00"},
			{"/var/log/x.log", "u:r:log_t:s0\x00"},
			{"/etc/keep.conf", ""},
			{"/etc/link", "u:r:link_t:s0\x00"},
			{"/run/real", "u:r:run_t:s0\x00"},
			{"/etc/resolv.conf", ""},
		} {
			if got := labelOf(t, r.Path(c.path)); got != c.want {
				t.Errorf("%s: label %q, want %q", c.path, got, c.want)
			}
		}
		// The symlink's target (/etc/hostname) kept its own label.
		if got := labelOf(t, r.Path("/etc/hostname")); got != "u:r:net_conf_t:s0\x00" {
			t.Errorf("symlink labelled its target: /etc/hostname is %q", got)
		}
		for _, want := range []string{"/etc/hostname file", "/etc/new dir", "/etc/new/sub dir", "/var dir", "/var/log dir", "/var/log/x.log file", "/etc/link link", "/run/real file"} {
			if !slices.Contains(l.asked, want) {
				t.Errorf("labeler was not asked %q; asked %q", want, l.asked)
			}
		}
		for _, a := range l.asked {
			if strings.Contains(a, ".earlyinit-") || strings.Contains(a, "keep.conf") || strings.HasPrefix(a, "/etc ") {
				t.Errorf("labeler asked about %q: temporary names and existing files are not labelled", a)
			}
		}
	})
}

func TestNoLabel(t *testing.T) {
	roottest.Require(t)
	modes(t, func(t *testing.T, r *Root) {
		write := func(r *Root) {
			t.Helper()
			if err := r.WriteFile("/etc/a", []byte("x"), 0o644, -1, -1); err != nil {
				t.Fatal(err)
			}
			if err := r.MkdirAll("/d/e", 0o755, -1, -1); err != nil {
				t.Fatal(err)
			}
			if err := r.AppendFile("/f", []byte("x"), 0o644, -1, -1); err != nil {
				t.Fatal(err)
			}
			if err := r.Symlink("a", "/etc/l"); err != nil {
				t.Fatal(err)
			}
		}
		check := func() {
			t.Helper()
			for _, p := range []string{"/etc", "/etc/a", "/d", "/d/e", "/f", "/etc/l"} {
				if got := labelOf(t, r.Path(p)); got != "" {
					t.Errorf("%s: label %q, want none", p, got)
				}
			}
		}
		// No labeler: no xattr at all.
		write(r)
		check()
		// A labeler with no label for these paths: none either.
		for _, p := range []string{"/etc", "/etc/a", "/d", "/f", "/etc/l"} {
			os.RemoveAll(r.Path(p))
		}
		r.SetLabeler(&fakeLabeler{labels: map[string]string{"/other": "u:r:x_t:s0"}})
		write(r)
		check()
	})
}

func TestLabelFailure(t *testing.T) {
	roottest.Require(t)
	// A value over XATTR_SIZE_MAX (64 KiB) fails setxattr with E2BIG on
	// every filesystem and kernel.
	huge := strings.Repeat("x", 70000)
	modes(t, func(t *testing.T, r *Root) {
		mustWrite(t, r.Path("/etc/hostname"), "old\n")
		os.Symlink("old", r.Path("/etc/l"))
		r.SetLabeler(&fakeLabeler{labels: map[string]string{
			"/etc/hostname": huge, "/etc/l": huge, "/etc/d": huge, "/new": huge, "/a.log": huge,
		}})
		before := tree(t, r.Dir())
		for _, c := range []struct {
			name string
			do   func() error
		}{
			{"/etc/hostname", func() error { return r.WriteFile("/etc/hostname", []byte("new\n"), 0o644, -1, -1) }},
			{"/etc/l", func() error { return r.Symlink("new", "/etc/l") }},
			{"/a.log", func() error { return r.AppendFile("/a.log", []byte("x"), 0o644, -1, -1) }},
			{"/etc/d", func() error { return r.MkdirAll("/etc/d", 0o755, -1, -1) }},
			{"/new", func() error { return r.WriteFile("/new/file", []byte("x"), 0o644, -1, -1) }},
		} {
			err := c.do()
			if err == nil || !errors.Is(err, unix.E2BIG) || !strings.Contains(err.Error(), "label "+c.name+" ") {
				t.Errorf("%s: error %.200v, want E2BIG naming %s", c.name, err, c.name)
			}
		}
		// The old file and link are untouched and no temporary is left.
		// A directory or file created before its label failed stays, as
		// after a failed chown.
		if b, _ := os.ReadFile(r.Path("/etc/hostname")); string(b) != "old\n" {
			t.Errorf("/etc/hostname is %q after a failed label", b)
		}
		if tg, _ := os.Readlink(r.Path("/etc/l")); tg != "old" {
			t.Errorf("/etc/l -> %q after a failed label", tg)
		}
		var extra []string
		for _, p := range tree(t, r.Dir()) {
			if !slices.Contains(before, p) && p != "a.log" && p != "etc/d" && p != "new" {
				extra = append(extra, p)
			}
		}
		if len(extra) > 0 {
			t.Errorf("left behind: %q", extra)
		}
	})
}

// TestLabelTmpfs labels on a tmpfs, the initramfs's /run and a root some
// images have for /tmp.
func TestLabelTmpfs(t *testing.T) {
	dir := roottest.Tmpfs(t, "1m")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	r.SetLabeler(&fakeLabeler{labels: map[string]string{"/f": "a:b:c:s0", "/l": "a:b:l:s0", "/d": "a:b:d:s0"}})
	if err := r.WriteFile("/f", nil, 0o600, -1, -1); err != nil {
		t.Fatal(err)
	}
	if err := r.Symlink("f", "/l"); err != nil {
		t.Fatal(err)
	}
	if err := r.MkdirAll("/d", 0o700, -1, -1); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"f": "a:b:c:s0\x00", "l": "a:b:l:s0\x00", "d": "a:b:d:s0\x00"} {
		if got := labelOf(t, filepath.Join(dir, p)); got != want {
			t.Errorf("%s: %q, want %q", p, got, want)
		}
	}
}
