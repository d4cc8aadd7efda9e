package userdata

import "go.yaml.in/yaml/v3"

// aptLegacySchemas are the checks of the v1/v2 apt keys, which no type
// declares: the modules' own keys are declared as types (internal/ccfg).
func aptLegacySchemas() map[string]check {
	m := map[string]check{}
	// The v1/v2 apt keys, which 22.4 converts to apt (with a deprecation
	// warning) and earlyinit's apt_configure refuses at boot.
	for _, k := range aptLegacyKeys {
		m[k] = aptLegacy
	}
	return m
}

// aptLegacyKeys are cloud-init's v1/v2 apt keys (modules' aptConfigKeys
// but apt; docgen.TestModuleTableKeys holds the two lists together).
var aptLegacyKeys = []string{"apt_sources", "apt_mirror", "apt_mirror_search", "apt_mirror_search_dns",
	"apt_proxy", "apt_http_proxy", "apt_https_proxy", "apt_ftp_proxy", "apt_preserve_sources_list", "apt_custom_sources_list"}

// aptLegacy is one of them: an error, as apt_configure's at boot.
func aptLegacy(v *validator, n *yaml.Node, path string) {
	v.errorf(n, path, "the deprecated v1/v2 apt configuration is not supported by earlyinit: use the apt key (apt: sources, primary, proxy, preserve_sources_list, sources_list)")
}
