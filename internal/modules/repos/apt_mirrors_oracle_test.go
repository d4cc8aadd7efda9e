package repos

import (
	"maps"
	"testing"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// mirrorsOracle is cloud-init 22.4's distro reading of
// system_info.package_mirrors: _get_arch_package_mirror_info for the
// architecture, then _get_package_mirror_info (a region for the
// templates; a host resolves when it ends in .resolves).
const mirrorsOracle = `
from urllib.parse import urlparse
from cloudinit import distros
class DS:
    availability_zone = None
    region = "eu-west-1"
    platform_type = "openstack"
def resolvable(cands):
    for c in cands:
        if (urlparse(c).hostname or "").endswith(".resolves"):
            return c
    return None
out = []
for pm, arch in json.load(sys.stdin):
    info = distros._get_arch_package_mirror_info(pm, arch)
    out.append(distros._get_package_mirror_info(info, data_source=DS(), mirror_filter=resolvable))
json.dump(out, sys.stdout)
`

// TestPackageMirrorsAsCloudInit: the mirrors systemInfoMirrors takes
// from system_info.package_mirrors (ccfg.PackageMirrors: the entry for
// the architecture, the last default one else; failsafe's mirrors, each
// overridden by its first resolvable search template) are cloud-init's.
// Where cloud-init's lack primary or security, earlyinit has none.
func TestPackageMirrorsAsCloudInit(t *testing.T) {
	fakeResolver(t)
	fs := func(p, s string) map[string]any { return map[string]any{"primary": p, "security": s} }
	entry := func(arches any, failsafe, search map[string]any) map[string]any {
		e := map[string]any{"arches": arches, "failsafe": failsafe}
		if search != nil {
			e["search"] = search
		}
		return e
	}
	cases := []struct {
		mirrors []any
		arch    string
	}{
		{[]any{entry([]any{"default"}, fs("http://f/p", "http://f/s"), nil)}, "amd64"},
		{[]any{entry([]any{"arm64"}, fs("http://a/p", "http://a/s"), nil), entry([]any{"default"}, fs("http://d/p", "http://d/s"), nil)}, "arm64"},
		{[]any{entry([]any{"default"}, fs("http://d1/p", "http://d1/s"), nil), entry([]any{"default"}, fs("http://d2/p", "http://d2/s"), nil)}, "amd64"},
		{[]any{entry([]any{"i386", "amd64"}, fs("http://x/p", "http://x/s"), nil)}, "riscv64"},
		{[]any{entry([]any{"default"}, map[string]any{"primary": "http://f/p", "security": "http://f/s", "ports": "http://f/ports"},
			map[string]any{"primary": []any{"http://no/p", "http://%(region)s.resolves/p"}, "security": []any{"http://%(ec2_region)s.resolves/s"}, "extra": []any{"http://e.resolves/"}})}, "amd64"},
		{[]any{entry([]any{"default"}, map[string]any{"primary": "http://f/p"}, map[string]any{"primary": []any{"http://p.resolves/"}})}, "amd64"},
		{[]any{entry("amd64", fs("http://s/p", "http://s/s"), nil)}, "amd64"},
	}
	var in [][]any
	for _, c := range cases {
		in = append(in, []any{c.mirrors, c.arch})
	}
	var want []map[string]string
	coretest.CiOracle(t, mirrorsOracle, in, &want)
	for i, c := range cases {
		te := coretest.NewEnv(t, "")
		te.Cfg["system_info"] = map[string]any{"package_mirrors": c.mirrors}
		te.Env.Data = &instance.Data{Region: "eu-west-1"}
		got, err := systemInfoMirrors(t.Context(), te.Env, c.arch)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		w := want[i]
		if w["primary"] == "" || w["security"] == "" {
			if got != nil {
				t.Errorf("case %d: got %v, cloud-init's %v lack a mirror", i, got, w)
			}
			continue
		}
		delete(got, "PRIMARY")
		delete(got, "SECURITY")
		if !maps.Equal(got, w) {
			t.Errorf("case %d: got %v, cloud-init %v", i, got, w)
		}
	}
}
