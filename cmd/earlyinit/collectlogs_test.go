//go:build !initrd

package main

import (
	"archive/tar"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCollectLogs: the tarball (0600) has the logs, the run directory's
// files and the network files; the user-data and the unredacted instance
// data only with -u; no link is followed, neither in the root nor where
// the tarball is written.
func TestCollectLogs(t *testing.T) {
	root := statusRoot(t)
	for name, content := range map[string]string{
		"var/log/earlyinit.log":                                              "log\n",
		"var/log/earlyinit-output.log":                                       "output\n",
		"var/lib/earlyinit/instances/i-1/user-data.txt":                      "#cloud-config\npassword: x\n",
		"run/earlyinit/instance-data.json":                                   `{"v1": {}}`,
		"run/earlyinit/instance-data-sensitive.json":                         `{"secret": "s"}`,
		"run/earlyinit/earlyinit":                                            "the late stages' binary",
		"etc/systemd/network/10-cloud-init-eth0.network":                     "[Match]\n",
		"etc/systemd/network/99-admin.network":                               "not earlyinit's\n",
		"etc/netplan/50-earlyinit.yaml":                                      "network: {}\n",
		"etc/network/interfaces.d/50-earlyinit.cfg":                          "auto eth0\n",
		"etc/sysconfig/network-scripts/ifcfg-eth0":                           "DEVICE=eth0\n",
		"etc/NetworkManager/system-connections/cloud-init-eth0.nmconnection": "[connection]\n",
		"etc/udev/rules.d/70-persistent-net.rules":                           "# rules\n",
	} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink("instances/i-1", filepath.Join(root, "var/lib/earlyinit/instance"))
	outside := filepath.Join(t.TempDir(), "outside")
	os.WriteFile(outside, []byte("outside the root"), 0o644)
	os.Symlink(outside, filepath.Join(root, "run/earlyinit/planted"))
	os.Symlink(outside, filepath.Join(root, "etc/systemd/network/10-cloud-init-link.network"))

	read := func(t *testing.T, tarball string) map[string]string {
		t.Helper()
		fi, err := os.Lstat(tarball)
		if err != nil || fi.Mode() != 0o600 {
			t.Fatalf("%s: %v, mode %v, want a regular file 0600", tarball, err, fi.Mode())
		}
		f, _ := os.Open(tarball)
		defer f.Close()
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(zr)
		got := map[string]string{}
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			_, rel, _ := strings.Cut(h.Name, "/")
			if !strings.HasPrefix(h.Name, "earlyinit-logs-") {
				t.Errorf("%s: not under earlyinit-logs-DATE/", h.Name)
			}
			b, _ := io.ReadAll(tr)
			if h.Typeflag == tar.TypeReg {
				got[rel] = string(b)
			}
		}
		return got
	}
	dir := t.TempDir()
	tarball := filepath.Join(dir, "logs.tar.gz")
	// A link where the tarball goes is replaced, not written through.
	os.Symlink(outside, tarball)
	cliCase{args: []string{"collect-logs", "--root", root, "-t", tarball, "-v"}, code: 0, stderr: []string{"collected file: /var/log/earlyinit.log", "Wrote " + tarball}, noStdout: true}.check(t)
	if b, _ := os.ReadFile(outside); string(b) != "outside the root" {
		t.Errorf("the link's target was written: %q", b)
	}
	got := read(t, tarball)
	for name, want := range map[string]string{
		"earlyinit.log":                    "log\n",
		"earlyinit-output.log":             "output\n",
		"version":                          "",
		"status.txt":                       "status: error\n",
		"run/earlyinit/status.json":        "",
		"run/earlyinit/boot.json":          "",
		"run/earlyinit/instance-data.json": `{"v1": {}}`,
		"network/etc/systemd/network/10-cloud-init-eth0.network":                     "[Match]\n",
		"network/etc/netplan/50-earlyinit.yaml":                                      "network: {}\n",
		"network/etc/network/interfaces.d/50-earlyinit.cfg":                          "auto eth0\n",
		"network/etc/sysconfig/network-scripts/ifcfg-eth0":                           "DEVICE=eth0\n",
		"network/etc/NetworkManager/system-connections/cloud-init-eth0.nmconnection": "[connection]\n",
		"network/etc/udev/rules.d/70-persistent-net.rules":                           "# rules\n",
	} {
		g, ok := got[name]
		if !ok || !strings.HasPrefix(g, want) {
			t.Errorf("%s: %q (there: %v), want %q", name, g, ok, want)
		}
	}
	for _, name := range []string{"user-data.txt", "run/earlyinit/instance-data-sensitive.json", "run/earlyinit/earlyinit", "run/earlyinit/planted",
		"network/etc/systemd/network/99-admin.network", "network/etc/systemd/network/10-cloud-init-link.network"} {
		if _, ok := got[name]; ok {
			t.Errorf("%s collected", name)
		}
	}
	for name, content := range got {
		if strings.Contains(content, "outside the root") {
			t.Errorf("%s: a link was followed", name)
		}
	}
	if os.Getuid() == 0 {
		cliCase{args: []string{"collect-logs", "--root", root, "-t", tarball, "--include-userdata"}, code: 0, noStdout: true}.check(t)
		got = read(t, tarball)
		if got["user-data.txt"] != "#cloud-config\npassword: x\n" || got["run/earlyinit/instance-data-sensitive.json"] != `{"secret": "s"}` {
			t.Errorf("-u: user-data %q, sensitive %q", got["user-data.txt"], got["run/earlyinit/instance-data-sensitive.json"])
		}
	}
	for _, c := range []cliCase{
		{args: []string{"collect-logs", "x"}, code: 2, stderr: []string{"takes no operands"}, noStdout: true},
		{args: []string{"collect-logs", "--root", root, "-t", filepath.Join(dir, "nosuch", "x.tar.gz")}, code: 1, stderr: []string{"--tarfile"}, noStdout: true},
	} {
		c.check(t)
	}
	if !slices.Contains(verbNames(), "collect-logs") {
		t.Error("collect-logs is not a verb")
	}
}
