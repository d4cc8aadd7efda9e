package repos

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// packagesOracle runs cloud-init 22.4's own
// cc_package_update_upgrade_install.handle for each case with the
// distribution class of its package manager (its system_info as the
// distro's configuration, the tools in its root as subp.which finds
// them), subp.subp recording each command instead of running it, and
// prints the commands with DEBIAN_FRONTEND if the command's environment
// sets it.
const packagesOracle = `
import tempfile
from unittest import mock
from cloudinit import distros, helpers, subp
from cloudinit.config import cc_package_update_upgrade_install as m
out = []
for c in json.load(sys.stdin):
    calls = []
    def fake_subp(args, **kw):
        env = kw.get("env") or kw.get("update_env") or {}
        fe = env.get("DEBIAN_FRONTEND")
        calls.append(" ".join(args) + (" [DEBIAN_FRONTEND=%s]" % fe if fe else ""))
        return ("", "")
    tmp = tempfile.mkdtemp()
    ds = mock.MagicMock()
    ds.get_instance_id.return_value = "iid-1"
    paths = helpers.Paths({"cloud_dir": tmp + "/c", "run_dir": tmp + "/r"}, ds=ds)
    d = distros.fetch(c["distro"])(c["distro"], c["cfg"].get("system_info") or {}, paths)
    cloud = mock.MagicMock()
    cloud.distro = d
    tools = c["tools"]
    with mock.patch.object(subp, "subp", side_effect=fake_subp), \
         mock.patch.object(subp, "which", side_effect=lambda n, **kw: ("/usr/bin/" + n) if n in tools else None):
        m.handle("package_update_upgrade_install", c["cfg"], cloud, logging.getLogger(), [])
    out.append(calls)
json.dump(out, sys.stdout)
`

// TestPackagesAsCloudInit: the package manager commands, argv exactly and
// DEBIAN_FRONTEND where it is set, are those cloud-init's own distribution
// classes run for the same configuration, but for apk's versions: cloud-
// init 22.4 writes "name-version", which apk reads as a package of that
// name; earlyinit writes apk's "name=version".
func TestPackagesAsCloudInit(t *testing.T) {
	const cfg = "package_update: true\npackage_upgrade: true\npackages: [pwgen, [libfoo, 1.2-3]]\n"
	cases := []struct {
		name, distro string
		tools        []string
		cfg          string
		differs      []string // earlyinit's commands where they differ, by design
	}{
		{"apt", "debian", []string{"apt-get"}, cfg, nil},
		{"apt eatmydata", "debian", []string{"apt-get", "eatmydata"}, "packages: [pwgen]", nil},
		{"apt system_info", "debian", []string{"apt-get", "eatmydata"}, "packages: [a]\npackage_upgrade: true\nsystem_info: {apt_get_wrapper: {enabled: false}, apt_get_command: [apt-get, -y], apt_get_upgrade_subcommand: upgrade}", nil},
		{"apt update only", "debian", []string{"apt-get"}, "apt_update: true", nil},
		{"apt nothing", "debian", []string{"apt-get"}, "package_reboot_if_required: true\npackages: []", nil},
		{"dnf", "rhel", []string{"dnf", "yum"}, cfg, nil},
		{"yum", "rhel", []string{"yum"}, cfg, nil},
		{"dnf single string", "rhel", []string{"dnf"}, "packages: htop", nil},
		{"zypper", "opensuse", []string{"zypper"}, cfg, nil},
		{"apk", "alpine", []string{"apk"}, cfg, []string{"apk --quiet update", "apk --quiet upgrade --update-cache --available", "apk --quiet add pwgen libfoo=1.2-3"}},
		{"apk unversioned", "alpine", []string{"apk"}, "packages: [pwgen, [jq]]", nil},
	}
	var in []map[string]any
	for _, c := range cases {
		v, err := userdata.LoadYAML([]byte(c.cfg))
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, map[string]any{"distro": c.distro, "tools": c.tools, "cfg": v})
	}
	var want [][]string
	coretest.CloudinitOracle(t, packagesOracle, in, &want)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			te := coretest.NewEnv(t, c.cfg)
			for _, tool := range c.tools {
				dir := "/usr/bin/"
				if tool == "apk" {
					dir = "/sbin/"
				}
				te.Write(dir+tool, "", 0o755)
			}
			if err := PackageUpdateUpgradeInstall(context.Background(), te.Env); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, call := range te.Fake.Calls {
				s := strings.Join(append([]string{call.Name}, call.Args...), " ")
				for _, e := range call.Env {
					if v, ok := strings.CutPrefix(e, "DEBIAN_FRONTEND="); ok {
						s += " [DEBIAN_FRONTEND=" + v + "]"
					}
				}
				got = append(got, s)
			}
			if c.differs != nil {
				if !reflect.DeepEqual(got, c.differs) {
					t.Errorf("commands:\n got %q\nwant %q", got, c.differs)
				}
				if reflect.DeepEqual(got, want[i]) {
					t.Error("now as cloud-init's: drop the difference")
				}
				return
			}
			if !reflect.DeepEqual(got, want[i]) && !(len(got) == 0 && len(want[i]) == 0) {
				t.Errorf("commands:\nearlyinit  %q\ncloud-init %q", got, want[i])
			}
		})
	}
}
