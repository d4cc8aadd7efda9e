package cache

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// TestCloudInitRecord: Store writes cloud-init's record of the instance
// beside the cache, as cloud-init 22.4 lays it out (the package comment),
// from the same data: the instance directory with the payloads' copies,
// the absolute instance link, data/, and in cloud-init's run directory the
// same instance-data bytes with cloud-init's modes and ds-identify's
// answer.
func TestCloudInitRecord(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	root := t.TempDir()
	d := testData()
	storeBoot(t, root, d)
	redacted, sensitive, err := instance.InstanceData(d, instance.SysInfo{})
	if err != nil {
		t.Fatal(err)
	}
	p := func(s string) string { return filepath.Join(root, s) }
	idir := p("var/lib/cloud/instances/" + d.InstanceID)
	ds := []byte("DataSourceConfigDrive: config-disk (/dev/sr0)\n")
	for _, f := range []struct {
		path    string
		mode    fs.FileMode
		content []byte
	}{
		{idir, fs.ModeDir | 0o755, nil},
		{idir + "/sem", fs.ModeDir | 0o755, nil},
		{idir + "/scripts", fs.ModeDir | 0o755, nil},
		{idir + "/handlers", fs.ModeDir | 0o755, nil},
		{idir + "/user-data.txt", 0o600, d.UserData},
		{idir + "/vendor-data.txt", 0o600, d.VendorData},
		{idir + "/vendor-data2.txt", 0o600, d.VendorData2},
		{idir + "/datasource", 0o644, ds},
		{p("var/lib/cloud/data/instance-id"), 0o644, []byte(d.InstanceID + "\n")},
		{p("var/lib/cloud/data/previous-instance-id"), 0o644, []byte("NO_PREVIOUS_INSTANCE_ID\n")},
		{p("var/lib/cloud/data/previous-datasource"), 0o644, ds},
		{p("run/cloud-init/instance-data.json"), 0o644, redacted},
		{p("run/cloud-init/instance-data-sensitive.json"), 0o600, sensitive},
		{p("run/cloud-init/.instance-id"), 0o644, []byte(d.InstanceID + "\n")},
		{p("run/cloud-init/cloud.cfg"), 0o644, []byte("datasource_list: [ ConfigDrive, None ]\n# written by earlyinit, which found this datasource in the initramfs\n")},
		{p("run/cloud-init/.ds-identify.result"), 0o644, []byte("0\n")},
	} {
		checkFile(t, f.path, f.mode, f.content)
	}
	// cloud-init links its instance with the absolute path.
	if target, err := os.Readlink(p("var/lib/cloud/instance")); err != nil || target != "/var/lib/cloud/instances/"+d.InstanceID {
		t.Errorf("cloud-init's instance link -> %q, %v", target, err)
	}
	// The same bytes as earlyinit's own files.
	for _, pair := range [][2]string{
		{"run/earlyinit/instance-data-sensitive.json", "run/cloud-init/instance-data-sensitive.json"},
		{"var/lib/earlyinit/instances/" + d.InstanceID + "/user-data.txt", "var/lib/cloud/instances/" + d.InstanceID + "/user-data.txt"},
	} {
		if readFile(t, p(pair[0])) != readFile(t, p(pair[1])) {
			t.Errorf("%s and %s differ", pair[0], pair[1])
		}
	}
}

// TestIsNewCloudInitRecord: the instance is not new when earlyinit's record
// or cloud-init's names it. cloud-init's alone: an instance cloud-init
// provisioned, earlyinit's first boot. Different: cloud-init provisioned
// the last boot (earlyinit=disabled), or earlyinit did before it kept
// cloud-init's record. Neither: new.
func TestIsNewCloudInitRecord(t *testing.T) {
	for _, tt := range []struct {
		name, own, cloud string
		isNew            bool
		cached           string
	}{
		{"first boot", "", "", true, ""},
		{"cloud-init's instance", "", "i-this", false, "i-this"},
		{"cloud-init's other instance", "", "i-other", true, "i-other"},
		{"cloud-init provisioned it last", "i-other", "i-this", false, "i-other"},
		{"earlyinit provisioned it last", "i-this", "i-other", false, "i-this"},
		{"both another", "i-other", "i-other", true, "i-other"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := openRoot(t, t.TempDir())
			for f, id := range map[string]string{idFile: tt.own, cloudIDFile: tt.cloud} {
				if id != "" {
					if err := r.WriteFile(f, []byte(id+"\n"), 0o644, 0, 0); err != nil {
						t.Fatal(err)
					}
				}
			}
			d := testData()
			d.InstanceID = "i-this"
			c := New(r)
			if got, err := c.IsNew(d); err != nil || got != tt.isNew {
				t.Errorf("IsNew = %v, %v; want %v", got, err, tt.isNew)
			}
			if got, _ := c.CachedID(); got != tt.cached {
				t.Errorf("CachedID = %q, want %q", got, tt.cached)
			}
			if err := c.Store(d, StoreOptions{}); err != nil {
				t.Fatal(err)
			}
			// Both records name this instance now.
			for _, f := range []string{idFile, cloudIDFile} {
				if b, _ := r.ReadFile(f); string(b) != "i-this\n" {
					t.Errorf("%s = %q", f, b)
				}
			}
		})
	}
}

// TestCloudInitRecordNotFatal: cloud-init's record that cannot be written
// (/var/lib/cloud is a file) is reported, and the cache is stored.
func TestCloudInitRecordNotFatal(t *testing.T) {
	root := t.TempDir()
	r := openRoot(t, root)
	if err := r.WriteFile("/var/lib/cloud", []byte("not a directory"), 0o644, 0, 0); err != nil {
		t.Fatal(err)
	}
	d := testData()
	c := New(r)
	err := c.Store(d, StoreOptions{})
	if err == nil || c.CloudInitErr() == nil || !strings.Contains(err.Error(), "cloud-init's record") {
		t.Errorf("Store = %v, CloudInitErr = %v; want cloud-init's record's error", err, c.CloudInitErr())
	}
	if id, _ := New(r).CachedID(); id != d.InstanceID {
		t.Errorf("cache not stored: cached id %q", id)
	}
}

// queryScript runs cloud-init 22.4's `cloud-init query` (cmd/query.py's
// handle_args, as its CLI calls it) on the root in the input, each argv in
// turn, optionally as another uid; it prints each one's exit code and
// output. cloud-init's paths are pointed at the root (read_cfg_paths), and
// the absolute instance link, which on the host would leave the temporary
// root, is resolved in it for the run.
const queryScript = `
import contextlib, io, os
from cloudinit import helpers
from cloudinit.cmd import query
inp = json.load(sys.stdin)
root = inp["root"]
paths = helpers.Paths({"cloud_dir": root + "/var/lib/cloud", "run_dir": root + "/run/cloud-init"})
query.read_cfg_paths = lambda: paths
if inp.get("uid") is not None:
    query.os.getuid = lambda: inp["uid"]
link = root + "/var/lib/cloud/instance"
target = os.readlink(link)
os.unlink(link)
os.symlink(root + target, link)
out = []
try:
    for argv in inp["argv"]:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            try:
                rc = query.handle_args("query", query.get_parser().parse_args(argv))
            except Exception as e:
                rc = repr(e)
        out.append({"rc": rc, "out": buf.getvalue()})
finally:
    os.unlink(link)
    os.symlink(target, link)
print(json.dumps(out))
`

type cliResult struct {
	RC  any    `json:"rc"`
	Out string `json:"out"`
}

// TestCloudInitQuery: cloud-init's own `cloud-init query` answers from what
// Store wrote: instance_id, ds, v1 and, as root, userdata (from
// /var/lib/cloud/instance/user-data.txt); another user gets the redacted
// file.
func TestCloudInitQuery(t *testing.T) {
	root := t.TempDir()
	d := testData()
	d.UserData = []byte("#cloud-config\nruncmd: [true]\n")
	d.Meta["admin_pass"] = "hunter2"
	if err := New(openRoot(t, root)).Store(d, StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	argv := [][]string{{"instance_id"}, {"ds"}, {"v1"}, {"userdata"}, {"ds.meta_data.admin_pass"}}
	var asRoot, asUser []cliResult
	oracle.Run(t, queryScript, map[string]any{"root": root, "argv": argv}, &asRoot)
	oracle.Run(t, queryScript, map[string]any{"root": root, "argv": argv, "uid": 1000}, &asUser)
	for i, res := range asRoot {
		if res.RC != float64(0) {
			t.Errorf("cloud-init query %v as root: exit %v: %q", argv[i], res.RC, res.Out)
		}
	}
	if got := asRoot[0].Out; got != d.InstanceID+"\n" {
		t.Errorf("cloud-init query instance_id = %q", got)
	}
	var ds struct {
		MetaData map[string]any `json:"meta_data"`
	}
	if err := json.Unmarshal([]byte(asRoot[1].Out), &ds); err != nil || ds.MetaData["uuid"] != d.InstanceID {
		t.Errorf("cloud-init query ds = %q (%v)", asRoot[1].Out, err)
	}
	var v1 map[string]any
	if err := json.Unmarshal([]byte(asRoot[2].Out), &v1); err != nil || v1["instance_id"] != d.InstanceID || v1["cloud_name"] != "openstack" {
		t.Errorf("cloud-init query v1 = %q (%v)", asRoot[2].Out, err)
	}
	if got := asRoot[3].Out; got != string(d.UserData)+"\n" {
		t.Errorf("cloud-init query userdata = %q", got)
	}
	if got := asRoot[4].Out; got != "hunter2\n" {
		t.Errorf("cloud-init query ds.meta_data.admin_pass as root = %q", got)
	}
	// Another user: the 0644 file, redacted by earlyinit as cloud-init
	// redacts; user-data not read.
	if got := asUser[0].Out; got != d.InstanceID+"\n" {
		t.Errorf("cloud-init query instance_id as a user = %q (exit %v)", got, asUser[0].RC)
	}
	if got := asUser[4].Out; got != instance.Redacted+"\n" {
		t.Errorf("cloud-init query ds.meta_data.admin_pass as a user = %q", got)
	}
	if got := asUser[3].Out; !strings.Contains(got, "redacted for non-root user") {
		t.Errorf("cloud-init query userdata as a user = %q", got)
	}
	// The link is left as earlyinit wrote it.
	if target, _ := os.Readlink(filepath.Join(root, "var/lib/cloud/instance")); target != "/var/lib/cloud/instances/"+d.InstanceID {
		t.Errorf("instance link -> %q after the oracle", target)
	}
}
