//go:build !initrd

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/configdrive"
	"github.com/earlyinit/earlyinit/internal/datasource/nocloud"
	"github.com/earlyinit/earlyinit/internal/instance"
)

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: `make deps` installs it (scripts/deps.sh)", tool)
		}
	}
}

func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "MTOOLS_SKIP_CHECK=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// extract copies an image's files into a new directory, with xorriso
// (Rock Ridge) or mtools.
func extract(t *testing.T, img string, iso bool) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "x")
	if iso {
		t.Cleanup(func() { // osirrox keeps the image's read-only modes
			filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
				if err == nil && fi.IsDir() {
					os.Chmod(p, 0o755)
				}
				return nil
			})
		})
		runTool(t, "osirrox", "-indev", img, "-extract", "/", dir)
	} else {
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		runTool(t, "mcopy", "-s", "-n", "-i", img, "::/", dir)
	}
	return dir
}

// listTree is every file under dir with its content.
func listTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// cloudInitPython is a python3 that imports cloudinit (cloud-init 22.4.2,
// the oracle); the test fails without one.
func cloudInitPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import cloudinit").Run() == nil {
			return py
		}
	}
	t.Fatal("no python3 with cloudinit to read the seed as cloud-init does: make deps installs cloud-init")
	return ""
}

// cloudInitReads reads the seed in dir with cloud-init's own readers:
// NoCloud's util.read_seeded, or the config drive's ConfigDriveReader.
func cloudInitReads(t *testing.T, dir string, config2 bool) map[string]any {
	t.Helper()
	script := `
import json, sys
from cloudinit import util
from cloudinit.sources.helpers import openstack
d = sys.argv[1]
if sys.argv[2] == "nocloud":
    md, ud, vd = util.read_seeded(d + "/")
    out = {"metadata": md, "userdata": ud.decode(), "vendordata": vd.decode() if vd else None}
else:
    r = openstack.ConfigDriveReader(d).read_v2()
    out = {k: r.get(k) for k in ("metadata", "userdata", "vendordata", "networkdata")}
    if isinstance(out["userdata"], bytes):
        out["userdata"] = out["userdata"].decode()
print(json.dumps(out))
`
	kind := "nocloud"
	if config2 {
		kind = "config-2"
	}
	out := runTool(t, cloudInitPython(t), "-c", script, dir, kind)
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("cloud-init's reader: %v\n%s", err, out)
	}
	return m
}

func writeInputs(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	mkseedUser    = "#cloud-config\nhostname: seeded\nruncmd: [[touch, /run/x]]\n"
	mkseedVendor  = "#cloud-config\nfinal_message: vendor\n"
	mkseedNet     = "version: 2\nethernets:\n  id0:\n    match: {macaddress: \"52:54:00:12:34:56\"}\n    dhcp4: true\n"
	mkseedNetJSON = `{"links": [{"id": "l0", "type": "phy", "ethernet_mac_address": "52:54:00:12:34:56"}], "networks": [{"id": "n0", "link": "l0", "type": "ipv4_dhcp"}], "services": []}`
)

// TestMkseed builds each kind of seed, reads it back with xorriso or
// mtools, blkid, earlyinit's probe and datasource reader, and cloud-init's
// reader.
func TestMkseed(t *testing.T) {
	needTools(t, "osirrox", "mcopy", "blkid", "fsck.vfat")
	in := writeInputs(t, map[string]string{
		"ud": mkseedUser, "vd": mkseedVendor, "nc": mkseedNet, "nd.json": mkseedNetJSON,
		"md":      "instance-id: iid-given\nlocal-hostname: given\n",
		"md.json": `{"uuid": "11111111-2222-3333-4444-555555555555", "hostname": "given.example", "public_keys": {"k": "ssh-ed25519 AAAA k"}}`,
		"vd.json": `{"cloud-init": "#cloud-config\nfinal_message: from json\n"}`,
	})
	p := func(name string) string { return filepath.Join(in, name) }
	for _, tc := range []struct {
		name    string
		args    []string // before OUTPUT
		after   []string // after OUTPUT (USER-DATA [META-DATA], and flags getopt-style)
		iso     bool
		config2 bool
		files   map[string]string
		iid     string
		host    string
		network bool
		size    int64 // vfat
	}{
		{
			name: "iso defaults", iso: true, after: []string{p("ud")},
			files: map[string]string{"user-data": mkseedUser, "meta-data": "{\n\"instance-id\": \"iid-local01\"\n}\n"},
			iid:   "iid-local01",
		},
		{
			name: "iso all flags", iso: true,
			args:  []string{"-N", p("nc"), "-V", p("vd"), "-H", "web-1.example.com", "--instance-id", "i-0abc"},
			after: []string{p("ud")},
			files: map[string]string{"user-data": mkseedUser, "vendor-data": mkseedVendor, "network-config": mkseedNet,
				"meta-data": "{\n\"instance-id\": \"i-0abc\",\n\"local-hostname\": \"web-1.example.com\"\n}\n"},
			iid: "i-0abc", host: "web-1.example.com", network: true,
		},
		{
			name: "vfat with meta-data, flags after the operands",
			args: []string{"-f", "vfat"}, after: []string{p("ud"), p("md"), "--network-config", p("nc")},
			files: map[string]string{"user-data": mkseedUser, "meta-data": "instance-id: iid-given\nlocal-hostname: given\n", "network-config": mkseedNet},
			iid:   "iid-given", host: "given", network: true, size: 4 << 20,
		},
		{
			name: "config-2 iso", iso: true, config2: true,
			args: []string{"--config-2", "-N", p("nd.json"), "-V", p("vd")}, after: []string{p("ud"), p("md.json")},
			files: map[string]string{
				"openstack/latest/user_data":         mkseedUser,
				"openstack/latest/meta_data.json":    `{"uuid": "11111111-2222-3333-4444-555555555555", "hostname": "given.example", "public_keys": {"k": "ssh-ed25519 AAAA k"}}`,
				"openstack/latest/network_data.json": mkseedNetJSON,
				"openstack/latest/vendor_data.json":  "{\"cloud-init\":\"#cloud-config\\nfinal_message: vendor\\n\"}\n",
			},
			iid: "11111111-2222-3333-4444-555555555555", host: "given.example", network: true,
		},
		{
			name: "config-2 vfat 64 MB", config2: true,
			args: []string{"--config-2", "-f", "vfat", "-H", "cas-vm", "--instance-id", "5f0a1c52", "-V", p("vd.json")}, after: []string{p("ud")},
			files: map[string]string{
				"openstack/latest/user_data":        mkseedUser,
				"openstack/latest/meta_data.json":   "{\n  \"hostname\": \"cas-vm\",\n  \"name\": \"cas-vm\",\n  \"uuid\": \"5f0a1c52\"\n}\n",
				"openstack/latest/vendor_data.json": `{"cloud-init": "#cloud-config\nfinal_message: from json\n"}`,
			},
			iid: "5f0a1c52", host: "cas-vm", size: 64 << 20,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "seed.img")
			args := append(append(append([]string{"mkseed"}, tc.args...), out), tc.after...)
			code, stdout, stderr := captureAll(t, args...)
			if code != 0 || stdout != "" || stderr != "" {
				t.Fatalf("%v: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
			}

			label := map[bool]string{false: "cidata", true: "config-2"}[tc.config2]
			typ := "iso9660"
			if !tc.iso {
				label, typ = strings.ToUpper(label), "vfat"
				runTool(t, "fsck.vfat", "-n", out)
				if fi, err := os.Stat(out); err != nil || fi.Size() != tc.size {
					t.Errorf("image size: %v, %v; want %d", fi, err, tc.size)
				}
			}
			b := runTool(t, "blkid", "-p", "-o", "export", out)
			if !strings.Contains(b, "TYPE="+typ+"\n") || !strings.Contains(b, "LABEL="+label+"\n") {
				t.Errorf("blkid: want TYPE=%s LABEL=%s:\n%s", typ, label, b)
			}
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			fi, _ := f.Stat()
			if got, err := blockdev.Probe(f, fi.Size()); err != nil || got.Type != typ || got.Label != label {
				t.Errorf("blockdev.Probe = %+v, %v", got, err)
			}

			dir := extract(t, out, tc.iso)
			got := listTree(t, dir)
			for name, want := range tc.files {
				if got[name] != want {
					t.Errorf("%s = %q, want %q", name, got[name], want)
				}
			}
			for name := range got {
				if _, ok := tc.files[name]; !ok {
					t.Errorf("unexpected file %s", name)
				}
			}

			// earlyinit's reader.
			var d *instance.Data
			if tc.config2 {
				d, err = configdrive.Read(datasource.DriveFS(dir, 0))
			} else {
				d, err = nocloud.Read(datasource.DriveFS(dir, 0))
			}
			if err != nil {
				t.Fatalf("earlyinit's reader: %v", err)
			}
			if d.InstanceID != tc.iid || d.LocalHostname != tc.host || string(d.UserData) != mkseedUser || (d.Network != nil) != tc.network {
				t.Errorf("earlyinit reads instance-id %q, hostname %q, user-data %q, network %q", d.InstanceID, d.LocalHostname, d.UserData, d.Network)
			}

			// cloud-init's.
			ci := cloudInitReads(t, dir, tc.config2)
			md, _ := ci["metadata"].(map[string]any)
			idKey, hostKey := "instance-id", "local-hostname"
			if tc.config2 {
				idKey, hostKey = "uuid", "hostname"
			}
			if md[idKey] != tc.iid || (tc.host != "" && md[hostKey] != tc.host) || ci["userdata"] != mkseedUser {
				t.Errorf("cloud-init reads %v", ci)
			}
		})
	}
}

// TestMkseedRefuses: bad inputs are refused before anything is written,
// each error naming the file, key and reason; an existing OUTPUT is left
// as it was.
func TestMkseedRefuses(t *testing.T) {
	in := writeInputs(t, map[string]string{
		"ud":        mkseedUser,
		"badud":     "#cloud-config\nusers: 5\nbogus_key: 1\n",
		"badyaml":   "#cloud-config\nruncmd: [\n",
		"md-noiid":  "local-hostname: h\n",
		"md-list":   "- a\n",
		"nc-bad":    "version: 2\nethernets: [1]\n",
		"nd.json":   mkseedNetJSON,
		"vd-bad":    `{"cloud-init": 5}`,
		"mime":      "Content-Type: multipart/mixed; boundary=\"XX\"\nMIME-Version: 1.0\n\n--XX\nContent-Type: text/cloud-config\nContent-Disposition: attachment; filename=\"bad.yaml\"\n\n#cloud-config\nruncmd: 7\n--XX--\n",
		"script":    "#!/bin/sh\necho hi\n",
		"warn-only": "#cloud-config\nsnap: {commands: [ls]}\n",
	})
	p := func(name string) string { return filepath.Join(in, name) }
	for _, tc := range []struct {
		name string
		args []string // OUTPUT is prepended
		code int
		want []string // in stderr
	}{
		{"no operands", nil, 2, []string{"want OUTPUT USER-DATA [META-DATA]"}},
		{"too many", []string{p("ud"), p("ud"), p("ud")}, 2, []string{"want OUTPUT USER-DATA [META-DATA]"}},
		{"bad format", []string{"-f", "ext4", p("ud")}, 2, []string{`-f "ext4": want iso9660 (or iso) or vfat`}},
		{"-H with META-DATA", []string{"-H", "h", p("ud"), p("md-noiid")}, 2, []string{"cannot go with META-DATA " + p("md-noiid")}},
		{"missing file", []string{p("nope")}, 1, []string{"nope: no such file"}},
		{"schema errors", []string{p("badud")}, 1, []string{
			p("badud") + ":2:8: users: expected list or map or string, got integer 5",
			p("badud") + ":3:1: bogus_key: unknown key"}},
		{"bad yaml", []string{p("badyaml")}, 1, []string{p("badyaml") + ":", "invalid YAML"}},
		{"mime part", []string{p("mime")}, 1, []string{p("mime") + ": bad.yaml:", "runcmd"}},
		{"vendor-data checked too", []string{"-V", p("badud"), p("ud")}, 1, []string{p("badud") + ":3:1: bogus_key: unknown key"}},
		{"no instance-id", []string{p("ud"), p("md-noiid")}, 1, []string{"meta-data from " + p("md-noiid"), `"instance-id": missing or empty`}},
		{"meta-data not a map", []string{p("ud"), p("md-list")}, 1, []string{"meta-data from " + p("md-list")}},
		{"bad network-config", []string{"-N", p("nc-bad"), p("ud")}, 1, []string{p("nc-bad") + ": ", "ethernets: want a mapping"}},
		{"config-2 wants network_data.json", []string{"--config-2", "-N", p("nc-bad"), p("ud")}, 1, []string{p("nc-bad") + ": not JSON"}},
		{"nocloud refuses network_data.json", []string{"-N", p("nd.json"), p("ud")}, 1, []string{p("nd.json") + ": "}},
		{"bad vendor_data.json", []string{"--config-2", "-V", p("vd-bad"), p("ud")}, 1, []string{p("vd-bad") + `: "cloud-init": want a string`}},
		{"bad hostname", []string{"-H", "a;reboot", p("ud")}, 1, []string{`-H: local-hostname "a;reboot": invalid character ';'`}},
		{"bad instance-id", []string{"--instance-id", "../../etc", p("ud")}, 1, []string{`--instance-id "../../etc": an instance id`}},
		{"control in instance-id", []string{"--instance-id", "a\nb: c", p("ud")}, 1, []string{`--instance-id "a\nb: c"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "seed.iso")
			if err := os.WriteFile(out, []byte("old"), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"mkseed"}
			if tc.args != nil {
				args = append(append(args, out), tc.args...)
			}
			code, _, stderr := captureAll(t, args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if b, _ := os.ReadFile(out); string(b) != "old" {
				t.Errorf("OUTPUT was changed")
			}
			if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
				t.Errorf("left behind: %v", ents)
			}
		})
	}

	// Not cloud-config: taken as it is. Warnings are printed, not fatal.
	for _, ud := range []string{"script", "warn-only"} {
		out := filepath.Join(t.TempDir(), "seed.iso")
		code, _, stderr := captureAll(t, "mkseed", out, p(ud))
		if code != 0 {
			t.Errorf("%s: exit %d:\n%s", ud, code, stderr)
		}
		if ud == "warn-only" && (!strings.Contains(stderr, "mkseed: warning: "+p(ud)+":2:") || !strings.Contains(stderr, "snap: not supported by earlyinit")) {
			t.Errorf("%s: no warning:\n%s", ud, stderr)
		}
	}

	// OUTPUT that is not a regular file is not replaced.
	dirOut := t.TempDir()
	if code, _, stderr := captureAll(t, "mkseed", dirOut, p("ud")); code != 1 || !strings.Contains(stderr, "is not a regular file") {
		t.Errorf("OUTPUT a directory: exit %d:\n%s", code, stderr)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink("/dev/null", link); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := captureAll(t, "mkseed", link, p("ud")); code != 1 || !strings.Contains(stderr, "is not a regular file") {
		t.Errorf("OUTPUT a symlink: exit %d:\n%s", code, stderr)
	}
}

// TestMkseedReproducible: with SOURCE_DATE_EPOCH, the same inputs give the
// same image, dated then.
func TestMkseedReproducible(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "1700000000")
	in := writeInputs(t, map[string]string{"ud": mkseedUser})
	var imgs [][]byte
	for _, f := range []string{"iso", "iso", "vfat", "vfat"} {
		out := filepath.Join(t.TempDir(), "seed")
		if code, _, stderr := captureAll(t, "mkseed", "-f", f, out, filepath.Join(in, "ud")); code != 0 {
			t.Fatalf("exit %d:\n%s", code, stderr)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		imgs = append(imgs, b)
	}
	if !bytes.Equal(imgs[0], imgs[1]) || !bytes.Equal(imgs[2], imgs[3]) {
		t.Error("two images of the same inputs differ")
	}
	if !bytes.Contains(imgs[0], []byte("2023111422132000")) {
		t.Error("the ISO is not dated SOURCE_DATE_EPOCH (2023-11-14 22:13:20)")
	}
}
