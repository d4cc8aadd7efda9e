package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/instance/cache"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// capture runs the CLI with args and returns its exit code and stdout.
func capture(t *testing.T, args ...string) (int, string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	code := run(args)
	os.Stdout = old
	w.Close()
	out, _ := io.ReadAll(r)
	return code, string(out)
}

// captureAll runs the CLI with args and returns its exit code, stdout and
// stderr.
func captureAll(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	or, ow, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	er, ew, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = ow, ew
	var out, errOut []byte
	done := make(chan struct{})
	go func() { out, _ = io.ReadAll(or); close(done) }()
	errDone := make(chan struct{})
	go func() { errOut, _ = io.ReadAll(er); close(errDone) }()
	code := run(args)
	os.Stdout, os.Stderr = oldOut, oldErr
	ow.Close()
	ew.Close()
	<-done
	<-errDone
	return code, string(out), string(errOut)
}

func TestNetConvert(t *testing.T) {
	in := filepath.Join(t.TempDir(), "nd.json")
	os.WriteFile(in, []byte(`{"links": [{"id": "l0", "type": "phy", "ethernet_mac_address": "FA:16:3E:00:00:0A", "mtu": 1450}],
 "networks": [{"id": "n0", "link": "l0", "type": "ipv4", "ip_address": "10.0.0.5", "netmask": "255.255.255.0",
   "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "10.0.0.1"}]}],
 "services": [{"type": "dns", "address": "10.0.0.2"}]}`), 0o644)
	dir := t.TempDir()
	code, _ := capture(t, "net-convert", "-p", in, "-k", "network_data.json", "-d", dir, "-D", "debian", "-O", "eni", "-m", "ens3,fa:16:3e:00:00:0a")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	b, err := os.ReadFile(filepath.Join(dir, "etc/network/interfaces.d/50-earlyinit.cfg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"iface ens3 inet static", "address 10.0.0.5/24", "mtu 1450", "10.0.0.1", "dns-nameservers 10.0.0.2"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("ENI output lacks %q:\n%s", want, b)
		}
	}
	for _, bad := range [][]string{
		{"net-convert", "-p", in, "-k", "network_data.json", "-O", "eni"},                 // no -d
		{"net-convert", "-p", in, "-k", "network_data.json", "-d", dir, "-O", "bogus"},    // bad renderer
		{"net-convert", "-p", in + ".missing", "-k", "yaml", "-d", dir, "-O", "networkd"}, // no input
		{"net-convert", "-p", in, "-k", "network_data.json", "-d", dir, "-O", "eni", "-m", "nocomma"},
	} {
		if code, _ := capture(t, bad...); code == 0 {
			t.Errorf("%v: exit 0", bad)
		}
	}
}

func TestQuery(t *testing.T) {
	dir := t.TempDir()
	root, err := rootfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	d := &instance.Data{Datasource: "nocloud", DatasourceClass: "NoCloud", CloudName: "nocloud", Platform: "nocloud", Subplatform: "seed-dir (/x)",
		InstanceID: "iid-q", LocalHostname: "qhost", UserData: []byte("#cloud-config\n"), AdminPass: "pw", Meta: map[string]any{"instance-id": "iid-q"}}
	if err := cache.New(root).Store(d, cache.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"query", "--root", dir, "v1.instance_id"}, "iid-q\n", 0},
		{[]string{"query", "--root", dir, "local_hostname"}, "qhost\n", 0},
		{[]string{"query", "--root", dir, "userdata"}, "#cloud-config\n\n", 0},
		{[]string{"query", "--root", dir, "no.such.key"}, "", 1},
		{[]string{"query", "--root", dir}, "", 2},
		{[]string{"query", "--root", t.TempDir(), "v1"}, "", 1},
	} {
		code, out := capture(t, tt.args...)
		if code != tt.code || (tt.want != "" && out != tt.want) {
			t.Errorf("%v: exit %d, %q; want %d, %q", tt.args, code, out, tt.code, tt.want)
		}
	}
	code, out := capture(t, "query", "--root", dir, "--list-keys")
	if code != 0 || !strings.Contains(out, "v1\n") || !strings.Contains(out, "ds\n") {
		t.Errorf("--list-keys: %d %q", code, out)
	}
}

func TestAnalyze(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run/earlyinit")
	os.MkdirAll(run, 0o755)
	os.WriteFile(filepath.Join(run, "boot.json"), []byte(`{"version": "v1", "init": "/sbin/init", "total_ns": 4000000000,
 "module_load_ns": 1500000000, "device_wait_ns": 500000000, "network_wait_ns": 0,
 "steps": [{"name": "modules", "start_ns": 1000000, "duration_ns": 2000000000}, {"name": "datasource", "start_ns": 2500000000, "duration_ns": 300000000, "error": "bad drive"}]}`), 0o644)
	os.WriteFile(filepath.Join(run, "status.json"), []byte(`{"v1": {"datasource": "nocloud", "stage": null,
 "boot": {"start": 100.0, "finished": 101.5, "errors": [], "modules": [{"name": "bootcmd", "frequency": "always", "status": "ok", "start": 100.1, "duration": 0.25}]},
 "final": {"start": null, "finished": null, "errors": [], "modules": []}}}`), 0o644)
	var out strings.Builder
	if err := analyzeSummary(&out, root); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"switch_root to /sbin/init after 4s", "modules", "2s", "error: bad drive",
		"module loading 1.5s, device waits 500ms, metadata service 0s, earlyinit's own 2s", "stage boot: 1.500s", "bootcmd", "0.250s  ok", "stage final: not run"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("analyze output lacks %q:\n%s", want, out.String())
		}
	}
	if err := analyzeSummary(&out, t.TempDir()); err == nil {
		t.Errorf("analyze without a boot record succeeded")
	}
}

func TestSchemaVerb(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("#cloud-config\nruncmd: [echo hi]\nwrite_files:\n  - path: /etc/x\n    permissions: '0644'\n"), 0o644)
	os.WriteFile(bad, []byte("#cloud-config\nruncmd: [echo hi]\nno_such_key: 1\nwrite_files:\n  - path: 5\n"), 0o644)
	if code, out := capture(t, "schema", "--config-file", good); code != 0 || !strings.Contains(out, "Valid cloud-config") {
		t.Errorf("good config: exit %d, %q", code, out)
	}
	code, out := capture(t, "schema", "--config-file", bad)
	if code != 1 || !strings.Contains(out, bad+":3:1: no_such_key") || !strings.Contains(out, bad+":5:") {
		t.Errorf("bad config: exit %d, %q; want exit 1 and errors at 3:1 and on line 5", code, out)
	}
	if code, _ := capture(t, "schema"); code != 2 {
		t.Errorf("no --config-file: exit %d, want 2", code)
	}
}

// TestSchemaVerbHardening: schema never prints a secret's value, and a
// 200 MB file is refused at the user-data limit, not read whole.
func TestSchemaVerbHardening(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret.yaml")
	os.WriteFile(secret, []byte("#cloud-config\npassword: 31337424242\nchpasswd: {list: [S3CRET-MARKER]}\n"), 0o644)
	code, out := capture(t, "schema", "--config-file", secret)
	if code != 1 || !strings.Contains(out, secret+":2:11: password: expected string") || strings.Contains(out, "31337424242") || strings.Contains(out, "S3CRET-MARKER") {
		t.Errorf("secret config: exit %d, %q", code, out)
	}
	big := filepath.Join(dir, "big.yaml")
	if err := os.WriteFile(big, []byte("#cloud-config\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 200<<20); err != nil {
		t.Fatal(err)
	}
	if _, err := readConfigFile(big); err == nil || !strings.Contains(err.Error(), "more than 16777216 bytes") {
		t.Errorf("200 MB config: %v", err)
	}
	if code, _ := capture(t, "schema", "--config-file", big); code != 1 {
		t.Errorf("200 MB config: exit %d, want 1", code)
	}
}

func TestStatusVerb(t *testing.T) {
	root := t.TempDir()
	// Nothing ran: "not run", exit 0.
	code, out := capture(t, "status", "--root", root, "--format", "json")
	if !strings.Contains(out, `"status": "not run"`) {
		t.Errorf("fresh root: exit %d, %q", code, out)
	}
	os.MkdirAll(filepath.Join(root, "etc/earlyinit"), 0o755)
	os.WriteFile(filepath.Join(root, "etc/earlyinit/disabled"), nil, 0o644)
	code, out = capture(t, "status", "--root", root)
	if code != 0 || !strings.Contains(out, "status: disabled") {
		t.Errorf("disabled root: exit %d, %q", code, out)
	}
	if code, _ := capture(t, "status", "--root", root, "--format", "xml"); code != 2 {
		t.Errorf("bad --format: exit %d, want 2", code)
	}
}
