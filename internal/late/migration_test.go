package late

import (
	"context"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/instance/cache"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// ciModules are cloud-init's names of earlyinit's modules that cloud-init
// has, and theirs for each.
func ciModules() (ci []string, ours map[string]modules.Module) {
	ours = map[string]modules.Module{}
	for _, m := range modules.All() {
		name := strings.TrimPrefix(cloudSemName(m.Name), "config_")
		if name == "" {
			continue
		}
		ci = append(ci, name)
		ours[name] = m
	}
	return ci, ours
}

// layoutScript is cloud-init 22.4 provisioning an instance in a temporary
// root with its own code: stages.Init (its configuration read as only its
// paths pointed at the root) reflects a NoCloud datasource's instance
// (_reflect_cur_instance: the instance directory and link, data/, obj.pkl)
// and stores its user-data (update), and each config module of the input
// runs through helpers.Runners under "config-<name>" as config/modules.py
// runs it (the names as Debian's cloud.cfg spells them, with "-"), at the
// module's own frequency, but for those that run always (no semaphore:
// nothing to find at the next boot). The instance link cloud-init made is then made
// what it would be on the machine (absolute, from /).
const layoutScript = `
import importlib, os
from cloudinit import helpers, stages
from cloudinit.sources.DataSourceNoCloud import DataSourceNoCloud
inp = json.load(sys.stdin)
root = inp["root"]
pcfg = {"cloud_dir": root + "/var/lib/cloud", "run_dir": root + "/run/cloud-init"}
stages.Init._read_cfg = lambda self, extra_fns: {"system_info": {"paths": dict(pcfg)}}
init = stages.Init(ds_deps=[])
init.read_cfg()
init.initialize()
ds = DataSourceNoCloud(sys_cfg={}, distro=None, paths=init.paths)
ds.metadata = {"instance-id": inp["iid"]}
ds.userdata_raw = inp["user_data"].encode()
ds.seed, ds.dsmode = "/dev/vdb", "net"
init.datasource = ds
init._reset()
new = init.is_new_instance()
init.instancify()
init.update()
runners = helpers.Runners(init.paths)
ran = {}
for name in inp["modules"]:
    freq = importlib.import_module("cloudinit.config.cc_" + name).meta["frequency"]
    if freq != "always":  # no semaphore
        ran[name] = runners.run("config-" + name.replace("_", "-"), lambda: None, [], freq=freq)[0]
link = root + "/var/lib/cloud/instance"
target = os.readlink(link)
os.unlink(link)
os.symlink(target[len(root):], link)
print(json.dumps({"new": new, "ran": ran}))
`

// checkScript is cloud-init 22.4 booting the instance of the input in the
// temporary root, up to what decides whether it provisions again: whether
// the instance is new (previous_iid, is_new_instance, from
// data/instance-id) and, for each config module of the input at its own
// frequency, whether its semaphore lets it run (helpers.Runners.run, as
// config/modules.py runs it); consume_data, run per instance by its init
// stage, too.
const checkScript = `
import importlib
from cloudinit import helpers, stages
from cloudinit.sources.DataSourceNoCloud import DataSourceNoCloud
inp = json.load(sys.stdin)
root = inp["root"]
pcfg = {"cloud_dir": root + "/var/lib/cloud", "run_dir": root + "/run/cloud-init"}
stages.Init._read_cfg = lambda self, extra_fns: {"system_info": {"paths": dict(pcfg)}}
init = stages.Init(ds_deps=[])
ds = DataSourceNoCloud(sys_cfg={}, distro=None, paths=init.paths)
ds.metadata = {"instance-id": inp["iid"]}
init.datasource = ds
init._reset()
runners = helpers.Runners(init.paths)
ran = {}
for name in inp["modules"]:
    freq = importlib.import_module("cloudinit.config.cc_" + name).meta["frequency"]
    ran[name] = runners.run("config-" + name.replace("_", "-"), lambda: None, [], freq=freq)[0]
ran["consume_data"] = runners.run("consume_data", lambda: None, [], freq="once-per-instance")[0]
print(json.dumps({"previous": init.previous_iid(), "new": init.is_new_instance(), "ran": ran}))
`

// countingModules is modules.All() with each Run counting, keyed by name.
func countingModules(runs map[string]int) []modules.Module {
	var mods []modules.Module
	for _, m := range modules.All() {
		name := m.Name
		m.Keys = nil // active whatever the configuration
		m.Run = func(context.Context, *core.Env) error { runs[name]++; return nil }
		mods = append(mods, m)
	}
	return mods
}

// TestMigrationFromCloudInit: an instance cloud-init 22.4 provisioned, laid
// out by cloud-init's own code, boots with earlyinit for the first time:
// it is not new (so the initramfs leaves its host name, hosts and network
// as they are), and no module cloud-init ran per instance or once runs
// again (host keys, users, passwords, runcmd, scripts), cloud-init's
// semaphores read as earlyinit's; the modules that run at every boot do.
// A new instance runs them all.
func TestMigrationFromCloudInit(t *testing.T) {
	f := newFixture(t)
	ci, ours := ciModules()
	var laid struct {
		New bool            `json:"new"`
		Ran map[string]bool `json:"ran"`
	}
	oracle.Run(t, layoutScript, map[string]any{"root": f.dir, "iid": "iid-ci", "user_data": "#cloud-config\nruncmd: [true]\n", "modules": ci}, &laid)
	if !laid.New {
		t.Fatal("cloud-init: the instance was not new in an empty root")
	}
	d := &instance.Data{Datasource: "nocloud", DatasourceClass: "NoCloud", Subplatform: "seed-dir (/x)", InstanceID: "iid-ci", UserData: []byte("#cloud-config\nruncmd: [true]\n")}
	c := cache.New(f.root)
	if isNew, err := c.IsNew(d); err != nil || isNew {
		t.Errorf("earlyinit: IsNew = %v, %v; want cloud-init's instance", isNew, err)
	}
	if err := c.Store(d, cache.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	mods := countingModules(runs)
	boot := f.run(modules.StageBoot, mods)
	final := f.run(modules.StageFinal, mods)
	for _, res := range append(boot.Modules, final.Modules...) {
		m, ok := modules.Lookup(res.Name)
		if !ok {
			t.Fatalf("no module %s", res.Name)
		}
		ranByCloudInit := laid.Ran[strings.TrimPrefix(cloudSemName(m.Name), "config_")]
		switch {
		case ranByCloudInit && runs[m.Name] != 0:
			t.Errorf("%s (%s) ran again after cloud-init ran it", m.Name, m.Frequency)
		case ranByCloudInit && res.Reason != "already ran ("+string(m.Frequency)+", by cloud-init)":
			t.Errorf("%s: reason %q", m.Name, res.Reason)
		case !ranByCloudInit && runs[m.Name] != 1:
			t.Errorf("%s (%s) ran %d times; cloud-init did not run it", m.Name, m.Frequency, runs[m.Name])
		}
		if m.Frequency != modules.Always && ours[strings.TrimPrefix(cloudSemName(m.Name), "config_")].Name == m.Name && !ranByCloudInit {
			t.Errorf("%s (%s): cloud-init wrote no semaphore for it", m.Name, m.Frequency)
		}
	}
	if runs["runcmd"] != 0 || runs["ssh"] != 0 || runs["users_groups"] != 0 || runs["set_passwords"] != 0 || runs["scripts_user"] != 0 || runs["bootcmd"] != 1 {
		t.Errorf("runs %v", runs)
	}

	// Another instance: everything runs.
	clear(runs)
	f.store("iid-other", "")
	f.run(modules.StageBoot, mods)
	f.run(modules.StageFinal, mods)
	if runs["runcmd"] != 1 || runs["ssh"] != 1 || runs["scripts_per_once"] != 0 {
		t.Errorf("new instance: runs %v (scripts_per_once is once for the root: cloud-init ran it)", runs)
	}
}

// TestMigrationToCloudInit: an instance earlyinit provisioned is, to
// cloud-init 22.4 booted afterwards on the same root (earlyinit=disabled,
// or the package removed), the instance it knows: not new, and none of the
// modules earlyinit ran per instance or once runs again, at cloud-init's
// own frequency for each. consume_data (cloud-init's user-data part
// handlers, per instance) is left to run: earlyinit runs no Python
// part-handler, and the rest of it cloud-init redoes at every boot anyway.
// A new instance is new to cloud-init.
func TestMigrationToCloudInit(t *testing.T) {
	f := newFixture(t)
	f.store("iid-e", "#cloud-config\nruncmd: [true]\n")
	runs := map[string]int{}
	mods := countingModules(runs)
	f.run(modules.StageBoot, mods)
	f.run(modules.StageFinal, mods)
	ci, ours := ciModules()
	var got struct {
		Previous string          `json:"previous"`
		New      bool            `json:"new"`
		Ran      map[string]bool `json:"ran"`
	}
	oracle.Run(t, checkScript, map[string]any{"root": f.dir, "iid": "iid-e", "modules": ci}, &got)
	if got.Previous != "iid-e" || got.New {
		t.Errorf("cloud-init: previous instance %q, new %v; want iid-e, not new", got.Previous, got.New)
	}
	for _, name := range ci {
		m := ours[name]
		if m.Frequency == modules.Always {
			continue
		}
		if runs[m.Name] != 1 {
			t.Errorf("earlyinit ran %s %d times", m.Name, runs[m.Name])
		}
		if got.Ran[name] {
			t.Errorf("cloud-init would run %s (earlyinit's %s, %s) again", name, m.Name, m.Frequency)
		}
	}
	if !got.Ran["consume_data"] {
		t.Error("consume_data did not run")
	}

	oracle.Run(t, checkScript, map[string]any{"root": f.dir, "iid": "iid-new", "modules": []string{"runcmd"}}, &got)
	if !got.New || !got.Ran["runcmd"] {
		t.Errorf("another instance: %+v", got)
	}
}

// TestMigrationToCloudInitInactive: the modules earlyinit left alone on an
// instance for want of configuration (locale, timezone, ntp... without
// their keys) are not run by a cloud-init booted later on it either:
// cloud-init runs most of its modules whatever the configuration (no
// activate_by_schema_keys; cc_locale sets the distribution's default
// locale), so earlyinit leaves cloud-init's semaphore for them, but not
// its own.
func TestMigrationToCloudInitInactive(t *testing.T) {
	f := newFixture(t)
	f.store("iid-e", "#cloud-config\nruncmd: [true]\n")
	runs := map[string]int{}
	var mods []modules.Module
	for _, m := range countingModules(runs) {
		real, _ := modules.Lookup(m.Name)
		m.Keys = real.Keys // inactive without their keys, as at boot
		mods = append(mods, m)
	}
	boot := f.run(modules.StageBoot, mods)
	final := f.run(modules.StageFinal, mods)
	inactive := 0
	for _, res := range append(boot.Modules, final.Modules...) {
		if res.Reason != "no configuration for it" {
			continue
		}
		inactive++
		m, _ := modules.Lookup(res.Name)
		if p := semPath("iid-e", m.Name, m.Frequency); p != "" && f.root.Exists(p) {
			t.Errorf("%s: inactive, yet earlyinit's semaphore %s was written", m.Name, p)
		}
	}
	if inactive < 10 || runs["runcmd"] != 1 {
		t.Fatalf("%d inactive modules, runs %v: the fixture does not leave modules inactive", inactive, runs)
	}
	ci, ours := ciModules()
	var got struct {
		Previous string          `json:"previous"`
		New      bool            `json:"new"`
		Ran      map[string]bool `json:"ran"`
	}
	oracle.Run(t, checkScript, map[string]any{"root": f.dir, "iid": "iid-e", "modules": ci}, &got)
	if got.New {
		t.Errorf("cloud-init: the instance is new")
	}
	for _, name := range ci {
		if m := ours[name]; m.Frequency != modules.Always && got.Ran[name] {
			t.Errorf("cloud-init would run %s (earlyinit's %s, %s, inactive: %v) on an instance earlyinit provisioned", name, m.Name, m.Frequency, runs[m.Name] == 0)
		}
	}
}
