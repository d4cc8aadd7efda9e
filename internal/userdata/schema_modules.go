package userdata

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// moduleSchemas are the checks of the v1/v2 apt keys; the modules' own
// keys are declared as types (internal/ccfg, typedSchemas).
func moduleSchemas() map[string]check {
	m := map[string]check{}
	// The v1/v2 apt keys, which 22.4 converts to apt (with a deprecation
	// warning) and earlyinit's apt_configure refuses at boot.
	for _, k := range aptLegacyKeys {
		m[k] = aptLegacy
	}
	return m
}

// uniqueItems adds JSON schema's uniqueItems to a list's check: no two
// items are equal (as values: "1" and 1 differ, a: 1 and {a: 1} too).
// The message names the earlier item by its index, never a value.
func uniqueItems(c check) check {
	return func(v *validator, n *yaml.Node, path string) {
		c(v, n, path)
		d := v.deref(n)
		if d.Kind != yaml.SequenceNode {
			return
		}
		seen := map[string]int{}
		for i, item := range d.Content {
			val, err := (&resolver{v.budget}).value(v.deref(item))
			if err != nil {
				// The items' own checks (c) report what is wrong with
				// them; the document's budget spent is reported once.
				if v.budget.Spent() {
					v.spend(item, path)
				}
				return
			}
			key := fmt.Sprintf("%#v", val)
			if j, dup := seen[key]; dup {
				v.errorf(item, fmt.Sprintf("%s.%d", path, i), "the same as item %d: the items must be unique", j)
				continue
			}
			seen[key] = i
		}
	}
}

// aptLegacyKeys are cloud-init's v1/v2 apt keys (modules' aptConfigKeys
// but apt; docgen.TestModuleTableKeys holds the two lists together).
var aptLegacyKeys = []string{"apt_sources", "apt_mirror", "apt_mirror_search", "apt_mirror_search_dns",
	"apt_proxy", "apt_http_proxy", "apt_https_proxy", "apt_ftp_proxy", "apt_preserve_sources_list", "apt_custom_sources_list"}

// aptLegacy is one of them: an error, as apt_configure's at boot.
func aptLegacy(v *validator, n *yaml.Node, path string) {
	v.errorf(n, path, "the deprecated v1/v2 apt configuration is not supported by earlyinit: use the apt key (apt: sources, primary, proxy, preserve_sources_list, sources_list)")
}
