//go:build !initrd

package main

import (
	"archive/tar"
	"bytes"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// seedFiles extracts the files of a seed image: ISO 9660 with isoinfo
// (Rock Ridge names), vfat with mcopy, a tar with archive/tar.
func seedFiles(t *testing.T, img, fs string) map[string]string {
	t.Helper()
	files := map[string]string{}
	switch fs {
	case "iso9660":
		for _, l := range strings.Split(runTool(t, "isoinfo", "-R", "-f", "-i", img), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				files[strings.TrimPrefix(l, "/")] = runTool(t, "isoinfo", "-R", "-i", img, "-x", l)
			}
		}
	case "vfat":
		dir := t.TempDir()
		runTool(t, "mcopy", "-s", "-n", "-i", img, "::/", dir)
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(dir, p)
				files[strings.ToLower(rel)] = string(b)
			}
			return nil
		})
	default:
		b, err := os.ReadFile(img)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(bytes.NewReader(b))
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", img, err)
			}
			if h.Typeflag == tar.TypeReg {
				c, _ := io.ReadAll(tr)
				files[h.Name] = string(c)
			}
		}
	}
	return files
}

// TestMkseedAgainstCloudLocalds: for the same flags, earlyinit mkseed's
// image holds the same files as cloud-localds's (Debian's
// cloud-image-utils), byte for byte, but for meta-data: the same keys
// and values read as YAML, and with -i earlyinit's also has
// network-interfaces, the key NoCloud reads (cloud-localds writes only
// interfaces, which nothing reads).
func TestMkseedAgainstCloudLocalds(t *testing.T) {
	if _, err := exec.LookPath("cloud-localds"); err != nil {
		t.Fatal("cloud-localds is not installed (make deps installs cloud-image-utils and genisoimage): the comparison needs it")
	}
	needTools(t, "genisoimage", "isoinfo", "mkfs.vfat", "mcopy")
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	for n, c := range map[string]string{
		"ud":  "#cloud-config\nhostname: seeded\nruncmd: [ls]\n",
		"md":  "instance-id: iid-given\nlocal-hostname: given\n",
		"eni": "auto eth0\niface eth0 inet static\n\taddress 10.0.0.2/24\n\tgateway 10.0.0.1\n",
		"nc":  "version: 2\nethernets:\n  eth0:\n    dhcp4: true\n",
		"vd":  "#cloud-config\nruncmd: [echo vendor]\n",
	} {
		if err := os.WriteFile(p(n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		args []string // flags; then OUTPUT USER-DATA [META-DATA]
		meta bool
		fs   string
	}{
		{"defaults", nil, false, "iso9660"},
		{"hostname dsmode", []string{"-H", "host-1", "-m", "local"}, false, "iso9660"},
		{"interfaces", []string{"--interfaces", p("eni"), "--hostname=h2"}, false, "iso9660"},
		{"network vendor", []string{"-N", p("nc"), "-V", p("vd")}, true, "iso9660"},
		{"vfat", []string{"-f", "vfat", "-N", p("nc"), "-H", "v"}, false, "vfat"},
		{"iso long names", []string{"--filesystem", "iso", "--network-config", p("nc"), "--vendor-data", p("vd"), "--dsmode", "net"}, false, "iso9660"},
		{"tar", []string{"-d", "tar", "-H", "t"}, false, "tar"},
		{"tar-seed-local", []string{"--disk-format", "tar-seed-local", "-N", p("nc")}, true, "tar"},
		{"tar-seed-net", []string{"-d", "tar-seed-net"}, false, "tar"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			operands := []string{p("ud")}
			if tc.meta {
				operands = append(operands, p("md"))
			}
			ci, ei := filepath.Join(out, "ci.img"), filepath.Join(out, "ei.img")
			runTool(t, "cloud-localds", append(append(slices.Clone(tc.args), ci), operands...)...)
			// earlyinit's flags after the operands: getopt allows it too.
			if code, _, stderr := captureAll(t, append(append([]string{"mkseed", ei}, operands...), tc.args...)...); code != 0 {
				t.Fatalf("mkseed: exit %d:\n%s", code, stderr)
			}
			want, got := seedFiles(t, ci, tc.fs), seedFiles(t, ei, tc.fs)
			if !slices.Equal(slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want))) {
				t.Fatalf("files %v, cloud-localds's %v", slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(want)))
			}
			for name, w := range want {
				g := got[name]
				if !strings.HasSuffix(name, "meta-data") {
					if g != w {
						t.Errorf("%s: %q, cloud-localds's %q", name, g, w)
					}
					continue
				}
				var gm, wm map[string]any
				if err := yaml.Unmarshal([]byte(g), &gm); err != nil {
					t.Fatalf("%s: %v\n%s", name, err, g)
				}
				if err := yaml.Unmarshal([]byte(w), &wm); err != nil {
					t.Fatalf("cloud-localds's %s: %v\n%s", name, err, w)
				}
				if wm["interfaces"] != nil {
					if gm["network-interfaces"] != wm["interfaces"] {
						t.Errorf("%s: network-interfaces %q, want cloud-localds's interfaces %q", name, gm["network-interfaces"], wm["interfaces"])
					}
					delete(gm, "network-interfaces")
				}
				if !maps.Equal(gm, wm) {
					t.Errorf("%s: %v, cloud-localds's %v\n%s\ncloud-localds's:\n%s", name, gm, wm, g, w)
				}
				if wm["interfaces"] == nil && g != w {
					t.Errorf("%s: %q, cloud-localds's %q (the same bytes without -i)", name, g, w)
				}
			}
		})
	}
}

// TestMkseedFlags: cloud-localds's flags with its meaning, earlyinit's
// own long ones, and what goes with what.
func TestMkseedFlags(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	os.WriteFile(p("ud"), []byte("#cloud-config\nruncmd: [ls]\n"), 0o644)
	os.WriteFile(p("md"), []byte("instance-id: x\n"), 0o644)
	os.WriteFile(p("eni"), []byte("auto eth0\niface eth0 inet dhcp\n"), 0o644)
	os.WriteFile(p("bad-eni"), []byte("iface eth0 inet bogus-method\n"), 0o644)
	tarMeta := func(t *testing.T, img, name string) string {
		t.Helper()
		return seedFiles(t, img, "tar")[name]
	}
	out := filepath.Join(t.TempDir(), "seed.tar")
	cliCase{args: []string{"mkseed", "-d", "tar", "-i", p("eni"), "-m", "local", "-H", "h", "--instance-id", "iid-9", out, p("ud")}, code: 0, noStdout: true, noStderr: true}.check(t)
	want := "{\n\"instance-id\": \"iid-9\",\n\"local-hostname\": \"h\",\n\"interfaces\": \"auto eth0\\niface eth0 inet dhcp\",\n\"network-interfaces\": \"auto eth0\\niface eth0 inet dhcp\",\n\"dsmode\": \"local\"\n}\n"
	if got := tarMeta(t, out, "meta-data"); got != want {
		t.Errorf("meta-data %q, want %q", got, want)
	}
	cliCase{args: []string{"mkseed", "-vd", "tar-seed-net", out, p("ud")}, code: 0, stderr: []string{"wrote " + out + " with filesystem=tar-seed-net and diskformat=tar-seed-net\n"}, noStdout: true}.check(t)
	if got := tarMeta(t, out, "var/lib/cloud/seed/nocloud-net/user-data"); got != "#cloud-config\nruncmd: [ls]\n" {
		t.Errorf("tar-seed-net user-data %q", got)
	}
	// OUTPUT - is stdout.
	code, stdout, stderr := captureAll(t, "mkseed", "-d", "tar", "-", p("ud"))
	if code != 0 || stderr != "" || !strings.Contains(stdout, "#cloud-config\nruncmd: [ls]\n") || !strings.Contains(stdout, "\"instance-id\": \"iid-local01\"") {
		t.Errorf("mkseed - : exit %d, stderr %q, %d bytes", code, stderr, len(stdout))
	}
	if _, err := exec.LookPath("qemu-img"); err == nil {
		q := filepath.Join(t.TempDir(), "seed.qcow2")
		cliCase{args: []string{"mkseed", "--disk-format", "qcow2", q, p("ud")}, code: 0, noStdout: true, noStderr: true}.check(t)
		if info := runTool(t, "qemu-img", "info", q); !strings.Contains(info, "file format: qcow2") {
			t.Errorf("qemu-img info:\n%s", info)
		}
	}
	for _, c := range []cliCase{
		{args: []string{"mkseed", "-i", p("eni"), out, p("ud"), p("md")}, code: 2, stderr: []string{"cannot go with META-DATA"}},
		{args: []string{"mkseed", "-m", "local", out, p("ud"), p("md")}, code: 2, stderr: []string{"cannot go with META-DATA"}},
		{args: []string{"mkseed", "--instance-id", "x", out, p("ud"), p("md")}, code: 2, stderr: []string{"cannot go with META-DATA"}},
		{args: []string{"mkseed", "-m", "later", out, p("ud")}, code: 2, stderr: []string{`-m "later": want local, net, pass or disabled`}},
		{args: []string{"mkseed", "--config-2", "-i", p("eni"), out, p("ud")}, code: 2, stderr: []string{"-i and -m are NoCloud's"}},
		{args: []string{"mkseed", "--config-2", "-d", "tar", out, p("ud")}, code: 2, stderr: []string{"not with --config-2"}},
		{args: []string{"mkseed", "-d", "tarball", out, p("ud")}, code: 2, stderr: []string{"the tar formats are tar, tar-seed-local, tar-seed-net"}},
		{args: []string{"mkseed", "-d", "tar", "-f", "vfat", out, p("ud")}, code: 2, stderr: []string{"-d tar is incompatible with -f vfat"}},
		{args: []string{"mkseed", "-i", p("bad-eni"), out, p("ud")}, code: 1, stderr: []string{p("bad-eni") + ": "}},
		{args: []string{"mkseed", "-i", p("missing"), out, p("ud")}, code: 1, stderr: []string{"missing"}},
		{args: []string{"mkseed", out}, code: 2, stderr: []string{"want OUTPUT USER-DATA [META-DATA]"}},
		{args: []string{"mkseed", "-o", "x", out, p("ud")}, code: 2, stderr: []string{"unknown shorthand flag: 'o'"}},
	} {
		c.noStdout = true
		c.check(t)
	}
}
