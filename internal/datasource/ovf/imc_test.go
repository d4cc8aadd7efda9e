package ovf

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/netcfg"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// fakeTools is VMware Tools as a test plays them: every RPC recorded, the
// NIC connection answered, tools.conf's enable-custom-scripts as set.
type fakeTools struct {
	rpcs         []string
	customScript string // "" for unset
	ran          [][]string
	root         string
	scriptSeen   string
	scriptMode   fs.FileMode
}

func (f *fakeTools) RPC(ctx context.Context, cmd string) (string, error) {
	f.rpcs = append(f.rpcs, cmd)
	switch {
	case strings.HasPrefix(cmd, "deployPkg.update.state 4 103 "):
		return "queryNicsSupported", nil
	case strings.HasPrefix(cmd, "deployPkg.update.state 4 104 "):
		return "connected", nil
	}
	return "", nil
}

func (f *fakeTools) ToolsConfig(ctx context.Context, section, key string) (string, bool, error) {
	if section != "deployPkg" || key != "enable-custom-scripts" {
		return "", false, errors.New("unexpected key")
	}
	return f.customScript, f.customScript != "", nil
}

func (f *fakeTools) Run(ctx context.Context, path string, args ...string) error {
	f.ran = append(f.ran, append([]string{path}, args...))
	b, err := os.ReadFile(filepath.Join(f.root, path))
	if err != nil {
		return err
	}
	fi, _ := os.Stat(filepath.Join(f.root, path))
	f.scriptSeen, f.scriptMode = string(b), fi.Mode().Perm()
	return nil
}

const testNICs = "ethernet0,ethernet1\n"

// imcRoot makes a root with VMware Tools' deployPkg plugin and, in
// /run/vmware-imc, the package: cust.cfg (the named testdata file) and
// files.
func imcRoot(t *testing.T, cust string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	b, err := os.ReadFile(filepath.Join("testdata/imc", cust))
	if err != nil {
		t.Fatal(err)
	}
	all := map[string]string{
		"usr/lib/x86_64-linux-gnu/open-vm-tools/plugins/vmsvc/" + pluginName: "ELF",
		"run/vmware-imc/cust.cfg": string(b),
		"etc/passwd":              "root:x:0:0:root:/root:/bin/sh\ndaemon:x:1:1::/:/bin/false\ntoor:x:0:0::/root:/bin/sh\n",
		"etc/shadow":              "root:*:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\ntoor:!:19000:0:99999:7:::\n",
	}
	for k, v := range files {
		all[k] = v
	}
	for name, text := range all {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func customization(t *testing.T, root string, tools *fakeTools) *Customization {
	t.Helper()
	r, err := rootfs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	tools.root = root
	return &Customization{
		FS: datasource.DriveFS(root, 0), Root: r, Tools: tools,
		AllowVMwareCust: true, AllowRawData: true,
		MACs: func() (map[string]string, error) {
			return map[string]string{"00:50:56:aa:bb:01": "eth0", "00:50:56:aa:bb:02": "eth1"}, nil
		},
		Logf:  t.Logf,
		Sleep: func(context.Context, time.Duration) error { return nil },
	}
}

func exists(root, name string) bool {
	_, err := os.Lstat(filepath.Join(root, name))
	return err == nil
}

func vendorCfg(t *testing.T, vd []byte) map[string]any {
	t.Helper()
	if !strings.HasPrefix(string(vd), "#cloud-config\n") {
		t.Fatalf("vendor-data is not cloud-config: %q", vd)
	}
	v, err := userdata.LoadYAML(vd)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := v.(map[string]any)
	return m
}

// TestCustomizationSpecification: a vCenter specification with a custom
// script allowed by VMware Tools' configuration: the pre-customization
// script run (copied, CRs gone, 0544), the network by MAC, the host name,
// the time zone and root's password (with RESET) as vendor-data, the
// post-customization script placed for the final stage, the marker
// written (an older one removed), the package removed, the NICs
// connected, and the reports cloud-init sends, in its order.
func TestCustomizationSpecification(t *testing.T) {
	root := imcRoot(t, "cust-vsphere-linux.cfg", map[string]string{
		"run/vmware-imc/customize.sh":            "#!/bin/sh\r\necho \"$1\" >> /root/custom.log\r\n",
		"run/vmware-imc/" + PostScriptName:       "#!/bin/sh\n/root/.customization/customize.sh postcustomization\n",
		"run/vmware-imc/nics.txt":                testNICs,
		"var/lib/cloud/data/.markerfile-old.txt": "",
	})
	tools := &fakeTools{customScript: "TRUE"}
	d, err := customization(t, root, tools).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != imcInstanceID || d.LocalHostname != "web-01.corp.example.com" || d.Subplatform != "ovf (vmware-tools)" {
		t.Errorf("instance %q, hostname %q, subplatform %q", d.InstanceID, d.LocalHostname, d.Subplatform)
	}
	c, err := netcfg.Parse(string(d.NetworkFormat), d.Network, map[string]string{"00:50:56:aa:bb:01": "ens192", "00:50:56:aa:bb:02": "ens224"})
	if err != nil {
		t.Fatalf("network configuration %s: %v", d.Network, err)
	}
	if len(c.Interfaces) != 2 || c.Interfaces[0].Name != "ens192" || !c.Interfaces[0].NoRename {
		t.Errorf("interfaces: %+v", c.Interfaces)
	}
	if !strings.Contains(string(d.Network), "gateway: 192.0.2.1") || !strings.Contains(string(d.Network), "2001:db8::53") {
		t.Errorf("network configuration:\n%s", d.Network)
	}
	vd := vendorCfg(t, d.VendorData)
	if vd["timezone"] != "Europe/Berlin" {
		t.Errorf("vendor-data timezone = %v", vd["timezone"])
	}
	ch, _ := vd["chpasswd"].(map[string]any)
	users, _ := ch["users"].([]any)
	if ch["expire"] != true || len(users) != 1 || !reflect.DeepEqual(users[0], map[string]any{"name": "root", "password": "VMware1!", "type": "text"}) {
		t.Errorf("vendor-data chpasswd: expire %v, %d users (values not shown)", ch["expire"], len(users))
	}
	// toor, the other uid-0 user, expires with runcmd.
	if run, _ := vd["runcmd"].([]any); len(run) != 1 || !strings.Contains(mustMarshal(t, run), `"toor"`) {
		t.Errorf("vendor-data runcmd: %s", mustMarshal(t, vd["runcmd"]))
	}
	if len(tools.ran) != 1 || !reflect.DeepEqual(tools.ran[0], []string{CustomScript, "precustomization"}) {
		t.Errorf("ran %q", tools.ran)
	}
	if strings.Contains(tools.scriptSeen, "\r") || tools.scriptMode != 0o544 {
		t.Errorf("the script run: mode %v, %q", tools.scriptMode, tools.scriptSeen)
	}
	for _, f := range []string{postScriptDir + "/" + PostScriptName, PostPendingMarker, MarkerDir + "/.markerfile-1a2b3c4d-5e6f-4a5b-8c9d-0e1f2a3b4c5d.txt"} {
		if !exists(root, f) {
			t.Errorf("%s: not written", f)
		}
	}
	for _, f := range []string{MarkerDir + "/.markerfile-old.txt", "run/vmware-imc"} {
		if exists(root, f) {
			t.Errorf("%s: still there", f)
		}
	}
	log := StatusLog
	want := []string{
		"info-set guestinfo.gc.status Started",
		"deployPkg.update.state 4 103 " + log + "@" + testNICs,
		"deployPkg.update.state 4 104 " + log + "@" + testNICs,
		"deployPkg.update.state 5 0 " + log,
		"info-set guestinfo.gc.status Successful",
	}
	if !reflect.DeepEqual(tools.rpcs, want) {
		t.Errorf("RPCs:\n got %q\nwant %q", tools.rpcs, want)
	}
}

// TestCustomizationScriptDisabled: a custom script that VMware Tools'
// configuration does not allow (enable-custom-scripts unset, MISC
// DEFAULT-RUN-POST-CUST-SCRIPT no) fails the customization with error 6,
// reported twice as cloud-init reports it; nothing runs, the package is
// removed.
func TestCustomizationScriptDisabled(t *testing.T) {
	root := imcRoot(t, "cust-vsphere-linux.cfg", map[string]string{"run/vmware-imc/customize.sh": "#!/bin/sh\n"})
	tools := &fakeTools{}
	_, err := customization(t, root, tools).Read(context.Background())
	if err == nil || !strings.Contains(err.Error(), "disabled by VM Administrator") {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		"info-set guestinfo.gc.status Started",
		"deployPkg.update.state 4 6 " + StatusLog,
		"deployPkg.update.state 4 6 " + StatusLog,
		"info-set guestinfo.gc.status Error parsing the customization Config File",
	}
	if !reflect.DeepEqual(tools.rpcs, want) {
		t.Errorf("RPCs:\n got %q\nwant %q", tools.rpcs, want)
	}
	if len(tools.ran) != 0 || exists(root, CustomScript) || exists(root, "run/vmware-imc") {
		t.Errorf("ran %q; script copied %v; package left %v", tools.ran, exists(root, CustomScript), exists(root, "run/vmware-imc"))
	}
	// MISC DEFAULT-RUN-POST-CUST-SCRIPT yes makes "unset" allowed; an
	// explicit false still refuses.
	for _, tc := range []struct {
		set, def string
		ok       bool
	}{{"", "yes", true}, {"false", "yes", false}, {"true", "no", true}} {
		cust := strings.Replace(string(mustRead(t, "testdata/imc/cust-vsphere-linux.cfg")), "DEFAULT-RUN-POST-CUST-SCRIPT = no", "DEFAULT-RUN-POST-CUST-SCRIPT = "+tc.def, 1)
		root := imcRoot(t, "cust-vsphere-linux.cfg", map[string]string{"run/vmware-imc/cust.cfg": cust,
			"run/vmware-imc/customize.sh": "#!/bin/sh\n", "run/vmware-imc/" + PostScriptName: "#!/bin/sh\n"})
		tools := &fakeTools{customScript: tc.set}
		_, err := customization(t, root, tools).Read(context.Background())
		if (err == nil) != tc.ok {
			t.Errorf("enable-custom-scripts %q, default %s: err = %v", tc.set, tc.def, err)
		}
	}
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCustomizationMarkerThere: a customization whose marker file is
// there was applied before: no script, no password, the network and host
// name all the same.
func TestCustomizationMarkerThere(t *testing.T) {
	root := imcRoot(t, "cust-vsphere-linux.cfg", map[string]string{
		"var/lib/cloud/data/.markerfile-1a2b3c4d-5e6f-4a5b-8c9d-0e1f2a3b4c5d.txt": "",
	})
	tools := &fakeTools{}
	d, err := customization(t, root, tools).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	vd := vendorCfg(t, d.VendorData)
	if _, ok := vd["chpasswd"]; ok || len(tools.ran) != 0 || exists(root, PostPendingMarker) {
		t.Errorf("applied again: vendor-data keys %v, ran %q", keysOf(vd), tools.ran)
	}
	if d.LocalHostname != "web-01.corp.example.com" || d.Network == nil {
		t.Errorf("hostname %q, network %s", d.LocalHostname, d.Network)
	}
}

func keysOf(m map[string]any) []string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	return k
}

// TestCustomizationFailures: what fails, and what vCenter is told.
func TestCustomizationFailures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cust  string
		files map[string]string
		macs  map[string]string
		want  []string
		err   string
	}{
		{
			name: "a NIC the VM does not have", cust: "cust-dhcp-2nic.cfg",
			macs: map[string]string{"00:50:56:a6:8c:08": "eth0"},
			want: []string{"deployPkg.update.state 4 101 " + StatusLog},
			err:  "no known device has MACADDR 00:50:56:a6:5a:de",
		},
		{
			name: "cust.cfg that does not parse", cust: "cust-dhcp-2nic.cfg",
			files: map[string]string{"run/vmware-imc/cust.cfg": "[NETWORK]\nHOSTNAME = a\nHOSTNAME = b\n"},
			want:  []string{"deployPkg.update.state 4 100 " + StatusLog},
			err:   "given twice",
		},
		{
			name: "a script name that leaves the package", cust: "cust-dhcp-2nic.cfg",
			files: map[string]string{"run/vmware-imc/cust.cfg": "[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:aa:bb:01\n" +
				"[CUSTOM-SCRIPT]\nSCRIPT-NAME = ../../etc/passwd\n[MISC]\nMARKER-ID = m1\nDEFAULT-RUN-POST-CUST-SCRIPT = yes\n"},
			want: []string{"deployPkg.update.state 4 100 " + StatusLog},
			err:  "not a file name of the package",
		},
		{
			name: "raw data whose meta-data is missing", cust: "cust-raw.cfg",
			want: []string{"deployPkg.update.state 4 100 " + StatusLog, "info-set guestinfo.gc.status File(s) missing in directory"},
			err:  "not found in the package",
		},
		{
			name: "raw data whose meta-data is not YAML", cust: "cust-raw.cfg",
			files: map[string]string{"run/vmware-imc/cloud-init-meta.yaml": "instance-id: [oops\n", "run/vmware-imc/cloud-init-user.txt": ""},
			want: []string{"info-set guestinfo.gc.status Started", "deployPkg.update.state 4 9 " + StatusLog,
				"info-set guestinfo.gc.status Error parsing the cloud-init meta data"},
			err: "cloud-init-meta.yaml",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := imcRoot(t, tc.cust, tc.files)
			tools := &fakeTools{}
			c := customization(t, root, tools)
			if tc.macs != nil {
				c.MACs = func() (map[string]string, error) { return tc.macs, nil }
			}
			_, err := c.Read(context.Background())
			if err == nil || !strings.Contains(err.Error(), tc.err) || errors.Is(err, ErrNoCustomization) {
				t.Errorf("err = %v, want one with %q", err, tc.err)
			}
			if !reflect.DeepEqual(tools.rpcs, tc.want) {
				t.Errorf("RPCs:\n got %q\nwant %q", tools.rpcs, tc.want)
			}
			if exists(root, "run/vmware-imc") {
				t.Errorf("the package is left: the next boot would fail again")
			}
		})
	}
}

// TestCustomizationNone: a customization the image does not allow, or
// that cannot be there, is ErrNoCustomization; nothing is reported or
// removed.
func TestCustomizationNone(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cust       string
		cust2, raw bool
		noPlugin   bool
		noCfg      bool
	}{
		{name: "specification, disable_vmware_customization", cust: "cust-dhcp-2nic.cfg", raw: true},
		{name: "raw data, allow_raw_data false", cust: "cust-raw.cfg", cust2: true},
		{name: "both off", cust: "cust-dhcp-2nic.cfg"},
		{name: "no deployPkg plugin", cust: "cust-dhcp-2nic.cfg", cust2: true, raw: true, noPlugin: true},
		{name: "no cust.cfg", cust: "cust-dhcp-2nic.cfg", cust2: true, raw: true, noCfg: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := imcRoot(t, tc.cust, map[string]string{"run/vmware-imc/cloud-init-meta.yaml": "instance-id: x\n", "run/vmware-imc/cloud-init-user.txt": ""})
			if tc.noPlugin {
				os.RemoveAll(filepath.Join(root, "usr/lib"))
			}
			if tc.noCfg {
				os.Remove(filepath.Join(root, "run/vmware-imc/cust.cfg"))
			}
			tools := &fakeTools{}
			c := customization(t, root, tools)
			c.AllowVMwareCust, c.AllowRawData = tc.cust2, tc.raw
			_, err := c.Read(context.Background())
			if !errors.Is(err, ErrNoCustomization) {
				t.Errorf("err = %v, want ErrNoCustomization", err)
			}
			if len(tools.rpcs) != 0 || !exists(root, "run/vmware-imc") {
				t.Errorf("RPCs %q; package there: %v", tools.rpcs, exists(root, "run/vmware-imc"))
			}
		})
	}
}

// TestCustomizationRawData: a package with cloud-init meta-data and
// user-data (CRs removed, as cloud-init does): its instance id, host name,
// keys and network; no custom script rules apply.
func TestCustomizationRawData(t *testing.T) {
	root := imcRoot(t, "cust-raw.cfg", map[string]string{
		"run/vmware-imc/cloud-init-meta.yaml": "instance-id: raw-0001\nlocal-hostname: rawhost\npublic-keys: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIRaw raw@key\n" +
			"network:\n  version: 2\n  ethernets:\n    nic0:\n      match: {macaddress: \"00:50:56:aa:bb:01\"}\n      dhcp4: yes\n",
		"run/vmware-imc/cloud-init-user.txt": "#cloud-config\r\nruncmd: [touch /run/raw]\r\n",
	})
	tools := &fakeTools{}
	d, err := customization(t, root, tools).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d.InstanceID != "raw-0001" || d.LocalHostname != "rawhost" || len(d.PublicKeys) != 1 {
		t.Errorf("instance %q, hostname %q, keys %q", d.InstanceID, d.LocalHostname, d.PublicKeys)
	}
	if string(d.UserData) != "#cloud-config\nruncmd: [touch /run/raw]\n" {
		t.Errorf("user-data %q", d.UserData)
	}
	c, err := netcfg.Parse(string(d.NetworkFormat), d.Network, map[string]string{"00:50:56:aa:bb:01": "ens192"})
	if err != nil || len(c.Interfaces) != 1 {
		t.Errorf("network %s: %v", d.Network, err)
	}
	want := []string{"info-set guestinfo.gc.status Started", "deployPkg.update.state 5 0 " + StatusLog, "info-set guestinfo.gc.status Successful"}
	if !reflect.DeepEqual(tools.rpcs, want) {
		t.Errorf("RPCs:\n got %q\nwant %q", tools.rpcs, want)
	}
	if exists(root, "run/vmware-imc") {
		t.Errorf("the package is left")
	}
}

// TestCustomizationResetOnly: RESET without a password expires every
// uid-0 user /etc/shadow has, with runcmd; nothing is run at boot.
func TestCustomizationResetOnly(t *testing.T) {
	cust := "[NETWORK]\nHOSTNAME = r\n[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:aa:bb:01\nBOOTPROTO = dhcp\n[PASSWORD]\nRESET = yes\n[MISC]\nMARKER-ID = r1\n"
	root := imcRoot(t, "cust-dhcp-2nic.cfg", map[string]string{"run/vmware-imc/cust.cfg": cust})
	d, err := customization(t, root, &fakeTools{}).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	vd := vendorCfg(t, d.VendorData)
	if _, ok := vd["chpasswd"]; ok {
		t.Errorf("chpasswd without a password")
	}
	if got := mustMarshal(t, vd["runcmd"]); !strings.Contains(got, `"root"`) || !strings.Contains(got, `"toor"`) || strings.Contains(got, "daemon") {
		t.Errorf("runcmd %s", got)
	}
}

// TestCustomizationNetworkParses: every recorded specification's network
// configuration reads with internal/netcfg, NICs found by MAC.
func TestCustomizationNetworkParses(t *testing.T) {
	for _, name := range []string{"cust-dhcp-2nic.cfg", "cust-static-2nic.cfg", "cust-vsphere-linux.cfg", "cust-routes-default.cfg"} {
		cfg, err := ParseCustConfig(name, mustRead(t, "testdata/imc/"+name))
		if err != nil {
			t.Fatal(err)
		}
		nics, _ := cfg.NICs()
		live := map[string]string{}
		for i, n := range nics {
			live[n.MAC] = "ens" + string(rune('a'+i))
		}
		nc, err := cfg.NetworkConfig(nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		y := mustMarshal(t, nc)
		c, err := netcfg.Parse("yaml", []byte(y), live)
		if err != nil {
			t.Errorf("%s: %v\n%s", name, err, y)
			continue
		}
		if len(c.Interfaces) != len(nics) {
			t.Errorf("%s: %d interfaces, want %d", name, len(c.Interfaces), len(nics))
		}
	}
}

// quietTools answer nothing to the NIC connection query (an old host),
// or say they cannot be asked.
type quietTools struct {
	fakeTools
	answer string
}

func (q *quietTools) RPC(ctx context.Context, cmd string) (string, error) {
	q.rpcs = append(q.rpcs, cmd)
	if strings.HasPrefix(cmd, "deployPkg.update.state 4 103 ") {
		return q.answer, nil
	}
	return "", nil
}

// TestCustomizationEnableNICs: VMware Tools that do not answer the NICs'
// connection are asked 5 times, 5 s apart (cloud-init's schedule, within
// the context); an answer other than queryNicsSupported ends it at once.
// Either way the customization succeeds.
func TestCustomizationEnableNICs(t *testing.T) {
	for _, tc := range []struct {
		answer string
		asks   int
		slept  time.Duration
	}{{"", 5, 25 * time.Second}, {"unsupported", 1, 0}} {
		root := imcRoot(t, "cust-dhcp-2nic.cfg", map[string]string{"run/vmware-imc/nics.txt": testNICs})
		tools := &quietTools{answer: tc.answer}
		c := customization(t, root, &tools.fakeTools)
		c.Tools = tools
		c.MACs = nil
		var slept time.Duration
		c.Sleep = func(_ context.Context, d time.Duration) error { slept += d; return nil }
		if _, err := c.Read(context.Background()); err != nil {
			t.Fatal(err)
		}
		asks := 0
		for _, r := range tools.rpcs {
			if strings.HasPrefix(r, "deployPkg.update.state 4 103 ") {
				asks++
			}
		}
		if asks != tc.asks || slept != tc.slept || tools.rpcs[len(tools.rpcs)-1] != "deployPkg.update.state 5 0 "+StatusLog {
			t.Errorf("answer %q: %d asks, slept %s, last %q", tc.answer, asks, slept, tools.rpcs[len(tools.rpcs)-1])
		}
	}
}
