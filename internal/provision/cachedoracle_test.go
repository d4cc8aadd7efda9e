package provision

import (
	"encoding/json"
	"testing"

	"github.com/earlyinit/earlyinit/internal/oracle"
)

// restoreScript boots cloud-init's stages over a cached instance as its
// main_init does (the local stage with existing="check" and filesystem
// sources, then, if that found nothing, the network stage with "trust"),
// no source answering, and says per stage what it got: the instance and
// whether it came from the cache, or null. DMI's system UUID is the
// case's. The data source lists hold only sources that find nothing on a
// machine without their drive or seed (no network is tried).
const restoreScript = `
import os, tempfile
from cloudinit import stages, helpers, distros, sources, dmi, importer

def boot(dsname, iid, dslist, uuid):
    tmp = tempfile.mkdtemp()
    paths_cfg = {"cloud_dir": tmp + "/var/lib/cloud", "run_dir": tmp + "/run/cloud-init"}
    cfg = {"system_info": {"distro": "debian", "paths": paths_cfg}, "datasource_list": dslist}
    dmi.read_dmi_data = lambda field: uuid if field == "system-uuid" else None
    paths = helpers.Paths(paths_cfg)
    distro = distros.fetch("debian")("debian", {}, paths)
    mod = importer.import_module("cloudinit.sources.DataSource" + dsname)
    ds = getattr(mod, "DataSource" + dsname)(cfg, distro, paths)
    ds.metadata = {"instance-id": iid}
    idir = os.path.join(paths_cfg["cloud_dir"], "instances", iid)
    os.makedirs(idir)
    os.symlink(idir, os.path.join(paths_cfg["cloud_dir"], "instance"))
    sources.pkl_store(ds, os.path.join(idir, "obj.pkl"))
    got = []
    for existing, deps in [("check", [sources.DEP_FILESYSTEM]), ("trust", [sources.DEP_FILESYSTEM, sources.DEP_NETWORK])]:
        init = stages.Init(ds_deps=deps)
        init._cfg = cfg
        try:
            d = init.fetch(existing=existing)
            got.append({"restored": init.ds_restored, "iid": d.get_instance_id()})
            break
        except sources.DataSourceNotFoundException:
            got.append(None)
    return got

print(json.dumps([boot(**c) for c in json.load(sys.stdin)]))
`

// TestCachedInstanceAgainstCloudInit pins down, with cloud-init 22.4's
// own stages, what it does on a later boot where no source answers, which
// keepCachedInstance deliberately does not follow in every case (see
// docs/reference.md, "Nor does a root that already holds an instance"):
//
//   - the cached datasource confirms itself from the machine
//     (check_instance_id: OpenStack's instance id is the DMI system UUID):
//     the local stage restores it. earlyinit too keeps the instance;
//   - it cannot (a config drive's instance on a machine whose UUID
//     differs, or whose drive is gone) and None is listed: the local stage
//     drops the cache and the network stage takes None, a new instance
//     that provisions again. earlyinit keeps the drive's instance
//     (TestRunKeepsCachedInstance);
//   - nor is None listed (a NoCloud seed detached): no datasource, and
//     cloud-init runs no module. earlyinit keeps the instance and runs its
//     per-boot modules.
func TestCachedInstanceAgainstCloudInit(t *testing.T) {
	type stage struct {
		Restored bool   `json:"restored"`
		IID      string `json:"iid"`
	}
	cases := []map[string]any{
		{"dsname": "OpenStack", "iid": "0c3e61be-0000-4000-8000-000000000001", "dslist": []string{"OpenStack"}, "uuid": "0C3E61BE-0000-4000-8000-000000000001"},
		{"dsname": "ConfigDrive", "iid": "iid-drive", "dslist": []string{"ConfigDrive", "None"}, "uuid": "4a6f2b1e-0000-4000-8000-00000000000f"},
		{"dsname": "NoCloud", "iid": "iid-seed", "dslist": []string{"NoCloud"}, "uuid": "4a6f2b1e-0000-4000-8000-00000000000f"},
	}
	var got [][]*stage
	oracle.Run(t, restoreScript, cases, &got)
	want := [][]*stage{
		{{Restored: true, IID: "0c3e61be-0000-4000-8000-000000000001"}},
		{nil, {Restored: false, IID: "iid-datasource-none"}},
		{nil, nil},
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("cloud-init's local and network stages over a cached instance, no source answering:\n got %s\nwant %s", g, w)
	}
}
