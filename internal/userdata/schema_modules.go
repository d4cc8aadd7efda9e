package userdata

import (
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// The keys of the modules of internal/modules that read maps of their own
// (apt_configure, yum_add_repo, zypper_add_repo, ntp, ca_certs, keyboard,
// rsyslog, disk_setup), as cloud-init 22.4's JSON schema
// (config/schemas/schema-cloud-config-v1.json) has them: maps without
// other keys, typed values, enums, required keys, minimum sizes, unique
// items. TestSchemaVerdictsMatchCloudInit holds them to 22.4's verdicts.

// moduleSchemas are those keys' checks; anyKey is the pattern of a map
// taking any key.
func moduleSchemas(anyKey *regexp.Regexp) map[string]check {
	m := map[string]check{
		"apt":          aptSchema(anyKey),
		"yum_repo_dir": str,
		"yum_repos": obj{minProps: 1,
			keys: regexp.MustCompile(`^[0-9a-zA-Z -_]+$`),
			values: obj{required: []string{"baseurl"},
				props: map[string]check{"baseurl": str, "name": str, "enabled": boolean},
				// Other options are written as they are: integers,
				// booleans or strings.
				keys:   regexp.MustCompile(`^[0-9a-zA-Z_]+$`),
				values: typed("integer", "boolean", "string"),
			}.check,
		}.check,
		// Other keys are zypp.conf's (zypper.config) in 22.4's schema
		// too: it allows them.
		"zypper": obj{minProps: 1, keys: anyKey, props: map[string]check{
			"repos": listOf(obj{required: []string{"id", "baseurl"}, keys: anyKey, props: map[string]check{
				"id": str, "baseurl": str,
			}}.check, 1, 0),
			"config": anyMap,
		}}.check,
		"rsyslog":        rsyslogSchema(),
		"device_aliases": obj{keys: anyKey, values: str}.check,
		"disk_setup": obj{keys: anyKey, values: obj{props: map[string]check{
			"table_type": enum("mbr", "gpt"),
			"layout": oneOf(map[string]check{
				"string":  enum("remove"),
				"boolean": boolean,
				"list": listOf(oneOf(map[string]check{
					"integer": nil,
					"list":    listOf(integer, 2, 2),
				}), 0, 0),
			}),
			"overwrite": boolean,
		}}.check}.check,
		"fs_setup": listOf(obj{props: map[string]check{
			"label": str, "filesystem": str, "device": str, "replace_fs": str,
			// 22.4's schema takes only these words, though its own
			// description (and its module) also take a partition's
			// number: so does earlyinit.
			"partition": oneOf(map[string]check{
				"string":  enum("auto", "any", "none"),
				"integer": nil,
			}),
			"overwrite":  boolean,
			"extra_opts": strOrStrList(0),
			"cmd":        strOrStrList(0),
		}}.check, 0, 0),
	}
	// The v1/v2 apt keys, which 22.4 converts to apt (with a deprecation
	// warning) and earlyinit's apt_configure refuses at boot.
	for _, k := range aptLegacyKeys {
		m[k] = aptLegacy
	}
	return m
}

// aptSchema is cc_apt_configure's apt.
func aptSchema(anyKey *regexp.Regexp) check {
	mirror := listOf(obj{required: []string{"arches"}, props: map[string]check{
		"arches":     listOf(str, 1, 0),
		"uri":        str,
		"search":     listOf(str, 1, 0),
		"search_dns": boolean,
		"keyid":      str,
		"key":        str,
		"keyserver":  str,
	}}.check, 1, 0)
	return obj{minProps: 1, props: map[string]check{
		"preserve_sources_list": boolean,
		"generate_mirrorlists":  boolean,
		"disable_suites":        uniqueItems(listOf(str, 1, 0)),
		"primary":               mirror,
		"security":              mirror,
		"add_apt_repo_match":    str,
		"debconf_selections":    obj{minProps: 1, keys: anyKey, values: str}.check,
		"sources_list":          str,
		"conf":                  str,
		"https_proxy":           str,
		"http_proxy":            str,
		"proxy":                 str,
		"ftp_proxy":             str,
		"sources": obj{keys: anyKey, values: obj{minProps: 1, props: map[string]check{
			"source": str, "keyid": str, "key": str, "keyserver": str, "filename": str,
			"append": boolean,
		}}.check}.check,
	}}.check
}

// rsyslogSchema is cc_rsyslog's rsyslog. 22.4's module also takes the
// list of configs it had before the map (with a deprecation warning);
// its schema does not, nor does earlyinit's.
func rsyslogSchema() check {
	return obj{props: map[string]check{
		"config_dir":      str,
		"config_filename": str,
		"configs": listOf(oneOf(map[string]check{
			"string": nil,
			"map": obj{required: []string{"content"}, props: map[string]check{
				"filename": str, "content": str,
			}}.check,
		}), 0, 0),
		"remotes": anyMap,
		"service_reload_command": oneOf(map[string]check{
			"string": enum("auto"),
			"list":   listOf(str, 0, 0),
		}),
	}}.check
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
