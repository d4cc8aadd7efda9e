package selinux

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/roottest"
	"golang.org/x/sys/unix"
)

// recLog records what OpenRoot logs.
type recLog struct{ lines []string }

func (l *recLog) Printf(format string, args ...any) {
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}
func (l *recLog) Errorf(format string, args ...any) {
	l.lines = append(l.lines, "ERROR "+fmt.Sprintf(format, args...))
}
func (l *recLog) Debugf(format string, args ...any) {}

func labelOf(t *testing.T, p string) string {
	t.Helper()
	buf := make([]byte, 256)
	n, err := unix.Lgetxattr(p, rootfs.XattrSELinux, buf)
	if errors.Is(err, unix.ENODATA) {
		return ""
	}
	if err != nil {
		t.Fatalf("lgetxattr %s: %v", p, err)
	}
	return string(buf[:n])
}

// TestOpenRoot writes through OpenRoot's Root into a root with Debian's
// policy and reads the labels back.
func TestOpenRoot(t *testing.T) {
	roottest.Require(t) // security.* xattrs
	root := debianRoot(t)
	log := &recLog{}
	r, err := OpenRoot(root, log)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"selinux: labels from policy default (5621 entries)"}; !slices.Equal(log.lines, want) {
		t.Errorf("log %q, want %q", log.lines, want)
	}
	if err := r.WriteFile("/etc/hostname", []byte("vm\n"), 0o644, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("/var/lib/cloud/instances/iid/user-data.txt", nil, 0o600, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteFile("/home/debian/.ssh/authorized_keys", []byte("ssh-ed25519 AAAA\n"), 0o600, 1000, 1000); err != nil {
		t.Fatal(err)
	}
	if err := r.Symlink("/dev/null", "/etc/systemd/network/99-default.link"); err != nil {
		t.Fatal(err)
	}
	if err := r.MkdirAll("/run/earlyinit", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		"/etc/hostname":                              "system_u:object_r:net_conf_t:s0",
		"/etc/systemd/network":                       "system_u:object_r:net_conf_t:s0",
		"/etc/systemd/network/99-default.link":       "system_u:object_r:net_conf_t:s0",
		"/var/lib":                                   "system_u:object_r:var_lib_t:s0",
		"/var/lib/cloud/instances/iid":               "system_u:object_r:var_lib_t:s0",
		"/var/lib/cloud/instances/iid/user-data.txt": "system_u:object_r:var_lib_t:s0",
		"/home":                             "system_u:object_r:home_root_t:s0",
		"/home/debian":                      "unconfined_u:object_r:user_home_dir_t:s0",
		"/home/debian/.ssh":                 "unconfined_u:object_r:ssh_home_t:s0",
		"/home/debian/.ssh/authorized_keys": "unconfined_u:object_r:ssh_home_t:s0",
		"/run/earlyinit":                    "",
	} {
		w := want
		if w != "" {
			w += "\x00"
		}
		if got := labelOf(t, r.Path(p)); got != w {
			t.Errorf("%s: label %q, want %q", p, got, w)
		}
	}
	// /etc existed (the policy is in it): not relabelled.
	if got := labelOf(t, r.Path("/etc")); got != "" {
		t.Errorf("/etc relabelled: %q", got)
	}

	// The same root again: the same policy, not loaded or logged again.
	log2 := &recLog{}
	r2, err := OpenRoot(root, log2)
	if err != nil {
		t.Fatal(err)
	}
	if len(log2.lines) != 0 {
		t.Errorf("second OpenRoot logged %q", log2.lines)
	}
	if err := r2.WriteFile("/etc/hosts", nil, 0o644, 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := labelOf(t, r2.Path("/etc/hosts")); got != "system_u:object_r:net_conf_t:s0\x00" {
		t.Errorf("/etc/hosts through the second Root: %q", got)
	}

	// A changed file_contexts.local is loaded again. Its expression
	// RE2 cannot run is skipped, and logged, when the first path that
	// could match it is written.
	local := filepath.Join(root, ContextsDir("default"), "file_contexts.local")
	os.WriteFile(local, []byte("/etc/hosts -- system_u:object_r:local_t:s0\n/etc/(x)\\1 u:r:x_t:s0\n"), 0o644)
	log3 := &recLog{}
	r3, _ := OpenRoot(root, log3)
	if !slices.Equal(log3.lines, []string{"selinux: labels from policy default (5623 entries)"}) {
		t.Errorf("after a change, log %q", log3.lines)
	}
	p3 := r3.Labeler().(*Policy)
	if c, _ := p3.Lookup("/etc/hosts", 0); c != "system_u:object_r:local_t:s0" {
		t.Errorf("after a change, /etc/hosts is %q", c)
	}
	if err := r3.WriteFile("/etc/xx", nil, 0o644, 0, 0); err != nil {
		t.Fatal(err)
	}
	if got := labelOf(t, r3.Path("/etc/xx")); got != "system_u:object_r:etc_t:s0\x00" {
		t.Errorf("/etc/xx: label %q, want /etc/.*'s", got)
	}
	const skipped = `ERROR selinux: /etc/selinux/default/contexts/files/file_contexts.local line 2 "/etc/(x)\\1": backreference \1: not supported by RE2: entry skipped`
	if !slices.Equal(log3.lines[1:], []string{skipped}) {
		t.Errorf("writing /etc/xx logged %q, want %q", log3.lines[1:], skipped)
	}
	if w := p3.Warning(); !strings.HasPrefix(w, "1 file_contexts entries skipped") {
		t.Errorf("warning %q", w)
	}
}

func TestOpenRootWithoutPolicy(t *testing.T) {
	// No SELinux: no labeler, no log.
	root := t.TempDir()
	log := &recLog{}
	r, err := OpenRoot(root, log)
	if err != nil {
		t.Fatal(err)
	}
	if r.Labeler() != nil || len(log.lines) != 0 {
		t.Errorf("no SELinux: labeler %v, log %q", r.Labeler(), log.lines)
	}
	writeConfig(t, root, "SELINUX=disabled\n")
	r, err = OpenRoot(root, log)
	if err != nil || r.Labeler() != nil || len(log.lines) != 0 {
		t.Errorf("disabled: %v, labeler %v, log %q", err, r.Labeler(), log.lines)
	}

	// A policy that does not load: logged once, the Root has no labeler
	// and writes as before.
	writeConfig(t, root, "SELINUX=enforcing\nSELINUXTYPE=gone\n")
	r, err = OpenRoot(root, log)
	if err != nil || r.Labeler() != nil {
		t.Fatalf("broken policy: %v, labeler %v", err, r.Labeler())
	}
	want := []string{"ERROR selinux: SELINUX=enforcing, SELINUXTYPE=gone, but /etc/selinux/gone/contexts/files/file_contexts is missing: files are written without labels"}
	if !slices.Equal(log.lines, want) {
		t.Errorf("log %q, want %q", log.lines, want)
	}
	OpenRoot(root, log)
	if len(log.lines) != 1 {
		t.Errorf("logged again: %q", log.lines)
	}
	if err := r.WriteFile("/etc/hostname", []byte("x\n"), 0o644, -1, -1); err != nil {
		t.Error(err)
	}

	// A bad config, with a nil log.
	writeConfig(t, root, "SELINUX=yes\n")
	if r, err := OpenRoot(root, nil); err != nil || r.Labeler() != nil {
		t.Errorf("bad config: %v, labeler %v", err, r.Labeler())
	}

	if _, err := OpenRoot(filepath.Join(root, "missing"), log); err == nil {
		t.Error("OpenRoot of a missing directory: no error")
	}
}
