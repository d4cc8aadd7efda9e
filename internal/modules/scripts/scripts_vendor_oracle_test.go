package scripts

import (
	"slices"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// vendorScriptsDriver runs cloud-init 22.4's own cc_scripts_user and
// cc_scripts_vendor on an instance directory holding the same scripts as
// the test's root: one user script, one vendor script of the same name,
// where cloud-init's Paths put them (lookups "scripts", "vendor_scripts").
// subp.subp is recorded, not run. It prints each command, the instance
// directory shown as "IDIR", and whether the module failed.
const vendorScriptsDriver = `
import os, tempfile
from cloudinit import helpers, subp
from cloudinit.config import cc_scripts_user, cc_scripts_vendor
inp = json.load(sys.stdin)
base = tempfile.mkdtemp()
paths = helpers.Paths({"cloud_dir": base})
idir = os.path.join(base, "instance")
for key in ("scripts", "vendor_scripts"):
    d = os.path.join(idir, paths.lookups[key])
    os.makedirs(d)
    with open(os.path.join(d, "part-001"), "w") as f:
        f.write("#!/bin/sh\n")
    os.chmod(os.path.join(d, "part-001"), 0o700)
calls = []
subp.subp = lambda args, **kw: calls.append(" ".join(str(a) for a in args).replace(idir, "IDIR")) or ("", "")
class Cloud:
    def get_ipath_cur(self, name=None):
        return idir if name is None else os.path.join(idir, paths.lookups[name])
out = []
for cfg in inp:
    calls.clear()
    failed = False
    for mod in (cc_scripts_user, cc_scripts_vendor):
        try:
            mod.handle(mod.__name__, cfg, Cloud(), logging.getLogger(), [])
        except Exception:
            failed = True
    out.append({"calls": list(calls), "failed": failed})
print(json.dumps(out))
`

// TestVendorScriptsAsCloudInit: scripts_user runs the user's scripts, then
// the vendor's from their own directory after vendor_data.prefix, with the
// same commands as cloud-init's cc_scripts_user and cc_scripts_vendor
// (which run in that order in earlyinit, the vendor's first in
// cloud-init: docs/cloud-config.md), and fails where cloud-init's fail.
func TestVendorScriptsAsCloudInit(t *testing.T) {
	cfgs := []string{
		"{}",
		"vendor_data: {}",
		"vendor_data: {prefix: null}",
		"vendor_data: {prefix: /usr/bin/env}",
		"vendor_data: {prefix: [/usr/bin/env, X=1]}",
		"vendor_data: {prefix: []}",
		"vendor_data: {prefix: 7}",
		"vendor_data: {prefix: {a: b}}",
		"vendor_data: {prefix: [/usr/bin/env, 1], disabled_handlers: {a: b}}",
	}
	var in []map[string]any
	for _, c := range cfgs {
		in = append(in, coretest.NewEnv(t, c).Cfg)
	}
	var want []struct {
		Calls  []string
		Failed bool
	}
	oracle.Run(t, vendorScriptsDriver, in, &want)
	if len(want) != len(cfgs) || !slices.Contains(want[4].Calls, "/usr/bin/env X=1 IDIR/scripts/vendor/part-001") || !want[6].Failed {
		t.Fatalf("the oracle does not run the vendor script after the prefix, or takes a prefix of 7: %+v", want)
	}
	for i, c := range cfgs {
		te := coretest.NewEnv(t, c)
		idir := core.ScriptsDir(te.InstanceID)
		idir = idir[:strings.LastIndex(idir, "/")]
		te.Write(idir+"/scripts/part-001", "#!/bin/sh\n", 0o700)
		te.Write(idir+"/scripts/vendor/part-001", "#!/bin/sh\n", 0o700)
		err := te.RunFunc(ScriptsUser)
		var got []string
		for _, s := range te.Calls() {
			got = append(got, strings.ReplaceAll(s, idir, "IDIR"))
		}
		// cloud-init's handler for a bad prefix fails before running
		// anything of the vendor's; so does ours.
		sort := func(l []string) []string { l = slices.Clone(l); slices.Sort(l); return l }
		if !slices.Equal(sort(got), sort(want[i].Calls)) || (err != nil) != want[i].Failed {
			t.Errorf("%s: earlyinit ran %q (error %v), cloud-init %q (failed %v)", c, got, err, want[i].Calls, want[i].Failed)
		}
	}
}
