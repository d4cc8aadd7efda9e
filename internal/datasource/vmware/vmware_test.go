package vmware

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/netcfg"
)

func TestPlatform(t *testing.T) {
	for _, tc := range []struct {
		info dmi.Info
		want bool
	}{
		{dmi.Info{ProductName: "VMware7,1"}, true}, // cloud-init's test_vmware
		{dmi.Info{SysVendor: "VMware, Inc.", ProductName: "VMware Virtual Platform", BIOSVendor: "Phoenix Technologies LTD"}, true},
		{dmi.Info{SysVendor: "VMware, Inc.", ProductName: "VMware20,1", BIOSVendor: "VMware, Inc."}, true},
		{dmi.Info{SysVendor: "VMware, Inc.", ProductName: ""}, true},
		{dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (i440FX + PIIX, 1996)"}, false},
		{dmi.Info{SysVendor: "innotek GmbH", ProductName: "VirtualBox"}, false},
		{dmi.Info{SysVendor: "OpenStack Foundation", ProductName: "OpenStack Nova"}, false},
		{dmi.Info{}, false},
	} {
		if got := Source.Platform(tc.info); got != tc.want {
			t.Errorf("Platform(%+v) = %v, want %v", tc.info, got, tc.want)
		}
	}
}

func gz(t *testing.T, s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestDecode(t *testing.T) {
	const v = "instance-id: cloud-vm\n"
	b64 := base64.StdEncoding.EncodeToString([]byte(v))
	gz64 := base64.StdEncoding.EncodeToString(gz(t, v))
	for _, tc := range []struct {
		enc, in, want, err string
	}{
		{"", v, v, ""},
		{"plain", v, v, ""},
		{"base64", b64, v, ""},
		{"b64", b64, v, ""},
		{"base64", b64[:8] + "\n  " + b64[8:], v, ""},
		{"gzip+base64", gz64, v, ""},
		{"gz+b64", gz64, v, ""},
		{"base64", "%%%", "", "base64"},
		{"gzip+base64", b64, "", "gzip"},
	} {
		got, err := Decode(tc.enc, tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Decode(%q, %q) = %v, want an error with %q", tc.enc, tc.in, err, tc.err)
			}
		case err != nil || string(got) != tc.want:
			t.Errorf("Decode(%q, %q) = %q, %v; want %q", tc.enc, tc.in, got, err, tc.want)
		}
	}
	// A bomb: the decompressed size is bounded.
	big := base64.StdEncoding.EncodeToString(gz(t, strings.Repeat("a", maxValue+1)))
	if _, err := Decode("gzip+base64", big); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("gzip bomb: %v", err)
	}
}

// keys is a GuestInfo over a map; it records what is set.
type keys struct {
	m   map[string]string
	set []string
	err error
}

func (k *keys) Get(_ context.Context, key string) (string, bool, error) {
	if k.err != nil {
		return "", false, k.err
	}
	v, ok := k.m[key]
	return v, ok, nil
}

func (k *keys) Set(_ context.Context, key, value string) error {
	k.set = append(k.set, key+"="+value)
	k.m[key] = value
	return nil
}

const (
	metadataYAML = "instance-id: cloud-vm\nlocal-hostname: cloud-vm\nnetwork:\n  version: 2\n  ethernets:\n    nics:\n      match:\n        name: ens*\n      dhcp4: yes\n"
	userData     = "## template: jinja\n#cloud-config\nusers:\n- default\n"
	vendorData   = "## template: jinja\n#cloud-config\nruncmd:\n- echo \"Hello, world.\"\n"
	productUUID_ = "82343CED-E4C7-423B-8F6B-0D34D19067AB"
)

func uuid() (string, error) { return productUUID_, nil }

// TestRead: cloud-init's test_vmware data through each encoding.
func TestRead(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	plainUD, plainVD := strings.TrimRight(userData, "\n"), strings.TrimRight(vendorData, "\n")
	for _, tc := range []struct {
		name   string
		m      map[string]string
		ud, vd string
	}{
		{"plain", map[string]string{"metadata": metadataYAML, "userdata": userData, "vendordata": vendorData}, plainUD, plainVD},
		{"base64", map[string]string{"metadata": b64(metadataYAML), "metadata.encoding": "base64", "userdata": b64(userData), "userdata.encoding": "b64", "vendordata": vendorData}, userData, plainVD},
		{"gzip", map[string]string{"metadata": base64.StdEncoding.EncodeToString(gz(t, metadataYAML)), "metadata.encoding": "gzip+base64", "userdata": userData, "vendordata": base64.StdEncoding.EncodeToString(gz(t, vendorData)), "vendordata.encoding": "gz+b64"}, plainUD, vendorData},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &Reader{GuestInfo: &keys{m: tc.m}, UUID: uuid}
			d, err := r.Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID != "cloud-vm" || d.LocalHostname != "cloud-vm" || d.Datasource != "vmware" {
				t.Errorf("id %q, hostname %q, ds %q", d.InstanceID, d.LocalHostname, d.Datasource)
			}
			// Plain values lose their trailing line breaks (the tools add
			// one), as in cloud-init; encoded ones keep them.
			if string(d.UserData) != tc.ud || string(d.VendorData) != tc.vd {
				t.Errorf("user-data %q, vendor-data %q", d.UserData, d.VendorData)
			}
			want := "version: 2\nethernets:\n    nics:\n        match:\n            name: ens*\n        dhcp4: yes\n"
			if string(d.Network) != want || d.NetworkFormat != "yaml" {
				t.Errorf("network %s, want %s", d.Network, want)
			}
			if _, err := netcfg.Parse(string(d.NetworkFormat), d.Network, nil); err != nil {
				t.Errorf("netcfg: %v", err)
			}
			nw, _ := d.Meta["network"].(map[string]any)
			if _, ok := nw["config"]; !ok {
				t.Errorf("meta network %v: not under config, as cloud-init keeps it", d.Meta["network"])
			}
			if d.Subplatform != "guestinfo (guestinfo.metadata)" {
				t.Errorf("subplatform %q", d.Subplatform)
			}
		})
	}
}

// TestInstanceIDFromUUID: without instance-id, the SMBIOS UUID, lower case.
func TestInstanceIDFromUUID(t *testing.T) {
	for _, md := range []string{"local-hostname: h\n", "", "---"} {
		r := &Reader{GuestInfo: &keys{m: map[string]string{"metadata": md, "userdata": userData}}, UUID: uuid}
		d, err := r.Read(context.Background())
		if err != nil {
			t.Fatalf("%q: %v", md, err)
		}
		if d.InstanceID != "82343ced-e4c7-423b-8f6b-0d34d19067ab" {
			t.Errorf("%q: instance id %q", md, d.InstanceID)
		}
	}
}

// TestKeysAndNetworkForms: the public key spellings, a network
// configuration given encoded, and numbers kept as written.
func TestKeysAndNetworkForms(t *testing.T) {
	netcfg := "version: 1\nconfig:\n- type: physical\n  name: eth0\n  subnets:\n  - type: dhcp\n"
	md, _ := json.Marshal(map[string]any{
		"instance-id":      "0123",
		"public-keys-data": "ssh-rsa AAAAB3NzaC1yc2EAAAA... test1@vmw.com\nssh-rsa AAAAB3NzaC1yc2EAAAA... test2@vmw.com\n",
		"public_keys":      "ignored, as the first spelling found wins",
		"network":          base64.StdEncoding.EncodeToString([]byte(netcfg)),
		"network.encoding": "base64",
	})
	r := &Reader{GuestInfo: &keys{m: map[string]string{"metadata": string(md)}}, UUID: uuid}
	d, err := r.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ssh-rsa AAAAB3NzaC1yc2EAAAA... test1@vmw.com", "ssh-rsa AAAAB3NzaC1yc2EAAAA... test2@vmw.com"}; !reflect.DeepEqual(d.PublicKeys, want) {
		t.Errorf("keys %q", d.PublicKeys)
	}
	if string(d.Network) != netcfg || d.InstanceID != "0123" {
		t.Errorf("network %q, id %q", d.Network, d.InstanceID)
	}
	if _, ok := d.Meta["network.encoding"]; ok {
		t.Error("network.encoding kept")
	}
	d, err = (&Reader{GuestInfo: &keys{m: map[string]string{"metadata": "instance-id: 0123\n"}}}).Read(context.Background())
	if err != nil || d.InstanceID != "0123" {
		t.Errorf("YAML id %q, %v", d.InstanceID, err)
	}
}

// TestRedact: the keys the metadata names are cleared, and their
// encodings, as cloud-init's guestinfo_redact_keys does.
func TestRedact(t *testing.T) {
	for _, key := range []string{"redact", "cleanup-guestinfo"} {
		k := &keys{m: map[string]string{"metadata": "instance-id: i\n" + key + ":\n- userdata\n- vendordata\n", "userdata": userData}}
		if _, err := (&Reader{GuestInfo: k}).Read(context.Background()); err != nil {
			t.Fatal(err)
		}
		want := []string{"userdata=---", "userdata.encoding= ", "vendordata=---", "vendordata.encoding= "}
		if !reflect.DeepEqual(k.set, want) {
			t.Errorf("%s: set %q, want %q", key, k.set, want)
		}
		// Read again, it finds no user-data.
		d, err := (&Reader{GuestInfo: k}).Read(context.Background())
		if err != nil || d.UserData != nil {
			t.Errorf("after redaction: user-data %q, %v", d.UserData, err)
		}
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := (&Reader{GuestInfo: &keys{m: map[string]string{"metadata": " \n", "userdata": "---\n"}}}).Read(context.Background()); !errors.Is(err, ErrNoData) {
		t.Errorf("nothing set: %v", err)
	}
	for _, tc := range []struct {
		m    map[string]string
		uuid func() (string, error)
		err  error
		want string
	}{
		{m: map[string]string{"metadata": "[1, 2]"}, want: "guestinfo.metadata: line 1: want a mapping"},
		{m: map[string]string{"metadata": "a: [1\n"}, want: "guestinfo.metadata: yaml"},
		{m: map[string]string{"metadata": "%%%", "metadata.encoding": "base64"}, want: "guestinfo.metadata: base64"},
		{m: map[string]string{"metadata": "instance-id: [a]\n"}, want: "guestinfo.metadata: instance-id: want a string"},
		{m: map[string]string{"metadata": "instance-id: i\nnetwork: 5\n"}, want: "guestinfo.metadata: network: want a mapping or an encoded string"},
		{m: map[string]string{"metadata": "instance-id: i\nnetwork: '- a'\n"}, want: "guestinfo.metadata: network: line 1: want a mapping"},
		{m: map[string]string{"metadata": "instance-id: i\npublic-keys: 5\n"}, want: "guestinfo.metadata: public-keys"},
		{m: map[string]string{"userdata": userData}, want: "no instance-id, and no SMBIOS UUID"},
		{m: map[string]string{"userdata": userData}, uuid: func() (string, error) { return "", os.ErrNotExist }, want: "the SMBIOS UUID: file does not exist"},
		{m: map[string]string{}, err: errors.New("backdoor closed"), want: "guestinfo.metadata: backdoor closed"},
	} {
		_, err := (&Reader{GuestInfo: &keys{m: tc.m, err: tc.err}, UUID: tc.uuid}).Read(context.Background())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.m, err, tc.want)
		}
	}
}

// fakeTool writes a vmware-rpctool (or vmtoolsd) that keeps guestinfo in
// files under dir, answering as the real one does: the value on stdout,
// or "No value found" on stderr and exit 1.
func fakeTool(t *testing.T, name string) (tool, dir string) {
	t.Helper()
	dir = t.TempDir()
	rpc := `"$1"`
	if name == "vmtoolsd" {
		rpc = `"$2"` // vmtoolsd --cmd "..."
	}
	script := `#!/bin/sh
set -e
rpc=` + rpc + `
case "$rpc" in
"info-get guestinfo."*)
	f="` + dir + `/${rpc#info-get guestinfo.}"
	if [ -f "$f" ]; then cat "$f"; else echo "No value found" >&2; exit 1; fi ;;
"info-set guestinfo."*)
	kv="${rpc#info-set guestinfo.}"
	printf '%s' "${kv#* }" > "` + dir + `/${kv%% *}" ;;
*) echo "Unknown command" >&2; exit 1 ;;
esac
`
	tool = filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(tool, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return tool, dir
}

// TestRPCTool: guestinfo through the tools' command lines.
func TestRPCTool(t *testing.T) {
	for _, name := range Tools {
		t.Run(name, func(t *testing.T) {
			tool, dir := fakeTool(t, name)
			os.WriteFile(filepath.Join(dir, "metadata"), []byte(base64.StdEncoding.EncodeToString([]byte("instance-id: i-rpc\nredact: [userdata]\n"))), 0o644)
			os.WriteFile(filepath.Join(dir, "metadata.encoding"), []byte("base64\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "userdata"), []byte(userData), 0o644)
			g := RPCTool{Path: tool}
			d, err := (&Reader{GuestInfo: g}).Read(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d.InstanceID != "i-rpc" || string(d.UserData) != strings.TrimRight(userData, "\n") || d.VendorData != nil {
				t.Errorf("id %q, user-data %q, vendor-data %q", d.InstanceID, d.UserData, d.VendorData)
			}
			b, _ := os.ReadFile(filepath.Join(dir, "userdata"))
			e, _ := os.ReadFile(filepath.Join(dir, "userdata.encoding"))
			if string(b) != "---" || string(e) != " " {
				t.Errorf("after redaction: userdata %q, encoding %q", b, e)
			}
			if _, ok, err := g.Get(context.Background(), "nothing"); ok || err != nil {
				t.Errorf("unset key: %v, %v", ok, err)
			}
		})
	}
	tool, _ := fakeTool(t, "vmware-rpctool")
	os.Chmod(tool, 0o644)
	if _, _, err := (RPCTool{Path: tool}).Get(context.Background(), "metadata"); err == nil || !strings.Contains(err.Error(), "info-get guestinfo.metadata") {
		t.Errorf("a tool that cannot run: %v", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, _, err := (RPCTool{}).Get(context.Background(), "metadata"); err == nil || !strings.Contains(err.Error(), "open-vm-tools") {
		t.Errorf("no tool: %v", err)
	}
}

// chrootWithTool is a root holding a static busybox as /bin/sh and
// vmware-rpctool at /usr/bin, a link to /opt/vmware/rpctool: the link is
// resolved inside the root by the chroot. Its guestinfo keys are files in
// the root's /guestinfo.
func chrootWithTool(t *testing.T) (root string) {
	t.Helper()
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		t.Fatalf("busybox (busybox-static; make deps installs it): %v", err)
	}
	root = t.TempDir()
	for _, d := range []string{"bin", "usr/bin", "opt/vmware", "guestinfo"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(busybox)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, "bin/busybox"), b, 0o755))
	for _, a := range []string{"sh", "cat", "head"} {
		must(os.Symlink("busybox", filepath.Join(root, "bin", a)))
	}
	must(os.WriteFile(filepath.Join(root, "opt/vmware/rpctool"), []byte(`#!/bin/sh
case "$1" in
"info-get guestinfo.big") cat /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox /bin/busybox ;;
"info-get guestinfo."*)
	f="/guestinfo/${1#info-get guestinfo.}"
	if [ -f "$f" ]; then cat "$f"; else echo "No value found" >&2; exit 1; fi ;;
*) exit 0 ;;
esac
`), 0o755))
	must(os.Symlink("/opt/vmware/rpctool", filepath.Join(root, "usr/bin/vmware-rpctool")))
	return root
}

// TestRPCToolRoot: with a Root, the image's own tool is found there and
// run chrooted (the initramfs has none); what it prints is capped; a root
// without the tools says where it looked.
func TestRPCToolRoot(t *testing.T) {
	root := chrootWithTool(t)
	if err := os.WriteFile(filepath.Join(root, "guestinfo/metadata"), []byte("instance-id: i-root\nlocal-hostname: vm-root\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir()) // nothing on the initramfs's PATH
	d, err := (&Reader{GuestInfo: RPCTool{Root: root}}).Read(context.Background())
	if err != nil || d.InstanceID != "i-root" || d.LocalHostname != "vm-root" {
		t.Fatalf("Read through the root's tool = %+v, %v", d, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, _, err := (RPCTool{Root: root}).Get(ctx, "big"); err == nil || !strings.Contains(err.Error(), "bytes of output") {
		t.Errorf("40 MB of output: %v", err)
	}
	empty := t.TempDir()
	if _, _, err := (RPCTool{Root: empty}).Get(context.Background(), "metadata"); err == nil || !strings.Contains(err.Error(), "found in "+empty) {
		t.Errorf("a root without the tools: %v", err)
	}
	// The Source uses the root's tools when the root has them.
	svc := datasource.Service{Root: root}
	if d, err := Source.Metadata(context.Background(), svc); err != nil || d.InstanceID != "i-root" {
		t.Errorf("Source.Metadata with the root's tools = %+v, %v", d, err)
	}
}
