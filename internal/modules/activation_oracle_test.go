package modules_test

import (
	"slices"
	"sort"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// activationScript prints each cc_ module's activate_by_schema_keys
// (cloud-init 22.4's config/modules.py skips a module only when it has
// such keys and the configuration has none of them).
const activationScript = `
import importlib
out = {}
for m in json.load(sys.stdin):
    out[m] = list(importlib.import_module("cloudinit.config." + m).meta.get("activate_by_schema_keys") or [])
print(json.dumps(out))
`

// activationDifferences are earlyinit's modules that, unlike cloud-init's,
// do nothing without their keys, and what cloud-init does then.
// docs/cloud-config.md lists them.
var activationDifferences = map[string]string{
	"seed_random":   "cloud-init writes the datasource's random seed; earlyinit's initramfs puts it into the kernel pool at every boot",
	"mounts":        "cloud-init adds its default ephemeral and swap mounts; earlyinit leaves /etc/fstab alone",
	"growpart":      "cloud-init grows /; earlyinit's initramfs does, at every boot",
	"locale":        "cloud-init sets the distribution's default locale; earlyinit leaves the image's",
	"ssh_import_id": "nothing to import either way",
	"apt_configure": "cloud-init rewrites sources.list from its template unless preserve_sources_list; earlyinit leaves the image's",
}

// TestActivationKeysMatchCloudInit: a module earlyinit skips for want of
// configuration (Module.Keys) is one cloud-init skips too
// (activate_by_schema_keys), with the same keys, but for
// activationDifferences.
func TestActivationKeysMatchCloudInit(t *testing.T) {
	cc := map[string]string{}
	var names []string
	for _, m := range modules.All() {
		if m.EarlyinitOnly() {
			continue
		}
		name := "cc_" + m.Name
		if m.Name == "power_state" {
			name = "cc_power_state_change"
		}
		cc[m.Name] = name
		names = append(names, name)
	}
	var keys map[string][]string
	oracle.Run(t, activationScript, names, &keys)
	seen := map[string]bool{}
	for _, m := range modules.All() {
		name, ok := cc[m.Name]
		if !ok {
			continue
		}
		theirs, ours := slices.Clone(keys[name]), slices.Clone(m.Keys)
		sort.Strings(theirs)
		sort.Strings(ours)
		why, known := activationDifferences[m.Name]
		if slices.Equal(theirs, ours) {
			if known {
				t.Errorf("%s: activation keys now agree (%q); drop it from activationDifferences", m.Name, ours)
			}
			continue
		}
		seen[m.Name] = true
		if !known || len(theirs) != 0 {
			t.Errorf("%s: earlyinit activates on %q, %s on %q", m.Name, ours, name, theirs)
		} else if why == "" {
			t.Errorf("%s: no reason given", m.Name)
		}
	}
	for m := range activationDifferences {
		if !seen[m] {
			t.Errorf("activationDifferences names %s, which does not differ", m)
		}
	}
}
