package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// netConvertStderr runs net-convert with args and returns its exit code
// and what it wrote on stderr.
func netConvertStderr(t *testing.T, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stderr
	os.Stderr = w
	code := netConvert(args)
	os.Stderr = old
	w.Close()
	out, _ := io.ReadAll(r)
	return code, string(out)
}

// TestNetConvertWarnings: what is skipped, changed or cannot be rendered is
// printed on stderr, one line each, and the files are still written.
func TestNetConvertWarnings(t *testing.T) {
	in := filepath.Join(t.TempDir(), "network.yaml")
	if err := os.WriteFile(in, []byte(`version: 2
ethernets:
  eth0: {match: {macaddress: "52:54:00:00:00:01"}, set-name: eth0, wakeonlan: true, dhcp4: true, link-local: [ipv4]}
bonds:
  bond0: {interfaces: [eth0, eth1]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	code, stderr := netConvertStderr(t, "-p", in, "-k", "yaml", "-d", dir, "-O", "networkd")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		in + `: warning: interface "eth1" is used as a member or link but not defined`,
		in + ": warning: networkd cannot express, so does not render: ethernets.eth0.link-local; addressing (eth0: a bond member or bridge port has no addresses, DHCP, router advertisements, routing rules or DNS of its own); wakeonlan (eth0: only a .link file carries it, and none is written without a root with systemd-udevd)\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	if n := strings.Count(stderr, "\n"); n != 2 {
		t.Errorf("%d lines on stderr, want 2:\n%s", n, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "etc/systemd/network/10-cloud-init-eth1.network")); err != nil {
		t.Errorf("files not written: %v", err)
	}
}
