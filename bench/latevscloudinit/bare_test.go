package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestBakeBare: alice as the user-data makes her, in a root where uid
// 1000 is taken, and cloud-init's generator masked.
func TestBakeBare(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to alice: root only")
	}
	dir := t.TempDir()
	for f, s := range map[string]string{
		"etc/passwd":  "root:x:0:0:root:/root:/bin/bash\nuser:x:1000:1000::/home/user:/bin/sh\n",
		"etc/group":   "root:x:0:\nsudo:x:27:\nuser:x:1000:\n",
		"etc/shadow":  "root:*:19000:0:99999:7:::\n",
		"etc/gshadow": "root:*::\nsudo:*::\n",
	} {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "etc/sudoers.d"), 0o755)
	if err := bakeBare(dir); err != nil {
		t.Fatal(err)
	}
	read := func(f string) string { b, _ := os.ReadFile(filepath.Join(dir, f)); return string(b) }
	for f, want := range map[string]string{
		"etc/passwd":                      "alice:x:1001:1001:Alice:/home/alice:/bin/bash\n",
		"etc/group":                       "sudo:x:27:alice\n",
		"etc/gshadow":                     "sudo:*::alice\n",
		"etc/shadow":                      "alice:!:",
		"home/alice/.ssh/authorized_keys": aliceKey + "\n",
		"etc/sudoers.d/90-bench-bare":     "alice ALL=(ALL) NOPASSWD:ALL\n",
	} {
		if got := read(f); !strings.Contains(got, want) {
			t.Errorf("%s: %q lacks %q", f, got, want)
		}
	}
	if !strings.Contains(read("etc/group"), "alice:x:1001:\n") {
		t.Errorf("no group alice: %q", read("etc/group"))
	}
	fi, err := os.Stat(filepath.Join(dir, "home/alice/.ssh/authorized_keys"))
	if err != nil || fi.Sys().(*syscall.Stat_t).Uid != 1001 || fi.Mode().Perm() != 0o600 {
		t.Errorf("authorized_keys: %v %v", fi, err)
	}
	if l, err := os.Readlink(filepath.Join(dir, "etc/systemd/system-generators/cloud-init-generator")); err != nil || l != "/dev/null" {
		t.Errorf("generator not masked: %q %v", l, err)
	}
}

// TestReportOverheads: medians, overheads over bare, the ratio, and the
// summary as the last line.
func TestReportOverheads(t *testing.T) {
	ci := &variant{name: "A cloud-init"}
	ei := &variant{name: "B earlyinit", disabled: true}
	bare := &variant{name: bareName, disabled: true, bare: true}
	var results []*result
	for v, ats := range map[*variant][]float64{ci: {55.9, 60, 50}, ei: {28.8, 30, 27, 40}, bare: {20, 21.5, 19}} {
		for i, at := range ats {
			results = append(results, &result{v: v, n: i + 1, powered: true, prov: &provisioned{at: at}})
		}
	}
	results = append(results, &result{v: bare, n: 9, err: os.ErrDeadlineExceeded, prov: &provisioned{at: 1}}) // failed: not counted
	var b strings.Builder
	reportOverheads(&b, results, []*variant{ci, ei, bare})
	out := b.String()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if last := lines[len(lines)-1]; last != "provisioned: bare 20.0 s, earlyinit 29.4 s, cloud-init 55.9 s; overhead earlyinit 9.4 s, cloud-init 35.9 s" {
		t.Errorf("last line %q\n%s", last, out)
	}
	for _, want := range []string{"ratio of the overheads, A cloud-init / B earlyinit: 3.82", "B earlyinit               29.4 s  (median of 4, 0 on a busy host)"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	// Without bare, nothing.
	b.Reset()
	reportOverheads(&b, results, []*variant{ci, ei})
	if b.Len() != 0 {
		t.Errorf("without bare: %q", b.String())
	}
}
