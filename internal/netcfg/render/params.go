package render

import (
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/netcfg"
	sc "github.com/earlyinit/earlyinit/internal/scalar" // netplan.go has a func scalar
)

// bondKeys are the v1 bond parameters (cloud-init's NET_CONFIG_TO_V2["bond"]
// without the "bond-" prefix) every renderer understands. Others are ignored,
// as cloud-init ignores them.
func bondKeys() []string {
	return []string{
		"mode", "xmit-hash-policy", "miimon", "min-links", "arp-interval", "arp-ip-target",
		"arp-validate", "ad-select", "num-grat-arp", "downdelay", "updelay", "lacp-rate",
		"fail-over-mac", "primary", "primary-reselect",
		"all-slaves-active", "arp-all-targets", "lp-interval", "packets-per-slave", "resend-igmp",
	}
}

// unknownBondParams are the parameters of b no renderer knows, sorted.
func unknownBondParams(b *netcfg.BondConfig) []string {
	known := map[string]bool{}
	for _, k := range bondKeys() {
		known[k] = true
	}
	var out []string
	for k := range b.Params {
		if !known[normKey(k, "bond")] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// kernelBool spells a boolean bond parameter as the kernel's 0 or 1 (the
// value as given when it is not a boolean word).
func kernelBool(v string) string {
	if b, ok := truthy(v); ok {
		if b {
			return "1"
		}
		return "0"
	}
	return v
}

// arpAllTargets spells arp_all_targets by name (the kernel takes 0/1 or
// any/all).
func arpAllTargets(v string) string {
	switch v {
	case "0":
		return "any"
	case "1":
		return "all"
	}
	return v
}

// normKey turns "bond_xmit_hash_policy", "bond-xmit-hash-policy" or
// "xmit_hash_policy" into "xmit-hash-policy".
func normKey(k, prefix string) string {
	k = strings.ReplaceAll(strings.ToLower(k), "_", "-")
	return strings.TrimPrefix(k, prefix+"-")
}

// bondModes maps the kernel's numeric modes to names.
func bondMode(m string) string {
	switch m {
	case "0":
		return "balance-rr"
	case "1":
		return "active-backup"
	case "2":
		return "balance-xor"
	case "3":
		return "broadcast"
	case "4":
		return "802.3ad"
	case "5":
		return "balance-tlb"
	case "6":
		return "balance-alb"
	}
	return m
}

// bondParams returns b's known parameters under normalized names, with the
// mode spelled by name.
func bondParams(b *netcfg.BondConfig) map[string]string {
	known := map[string]bool{}
	for _, k := range bondKeys() {
		known[k] = true
	}
	out := map[string]string{}
	for k, v := range b.Params {
		k = normKey(k, "bond")
		if known[k] && v != "" {
			out[k] = v
		}
	}
	if m, ok := out["mode"]; ok {
		out["mode"] = bondMode(m)
	}
	if _, ok := out["primary"]; ok && !primaryMode(out["mode"]) {
		delete(out, "primary") // Lost names it
	}
	return out
}

// primaryMode tells whether a bond of mode m (by name; "" is the kernel's
// default, balance-rr) takes a primary: the kernel refuses one in the
// other modes ("option primary: mode dependency failed"), and so does
// NetworkManager.
func primaryMode(m string) bool {
	switch m {
	case "active-backup", "balance-tlb", "balance-alb":
		return true
	}
	return false
}

// bondPrimaryDropped tells whether b has a primary that bondParams leaves
// out, its mode not taking one.
func bondPrimaryDropped(b *netcfg.BondConfig) bool {
	for k, v := range b.Params {
		if normKey(k, "bond") == "primary" && v != "" {
			_, kept := bondParams(b)["primary"]
			return !kept
		}
	}
	return false
}

// bridgeParams returns br's parameters under normalized names ("stp", "fd",
// "hello", "maxage", "ageing", "priority", "pathcost", "portprio").
func bridgeParams(br *netcfg.BridgeConfig) map[string]string {
	out := map[string]string{}
	for k, v := range br.Params {
		k = normKey(k, "bridge")
		if k == "bridgeprio" {
			k = "priority"
		}
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// portValues parses a per-port bridge parameter ("eth0 50 eth1 75", or
// comma separated) into port -> value.
func portValues(s string) map[string]string {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' || r == '\n' })
	out := map[string]string{}
	for i := 0; i+1 < len(f); i += 2 {
		out[f[i]] = f[i+1]
	}
	return out
}

// truthy reads a bond or bridge parameter's boolean: scalar.WordYN's
// words (1, on, yes, true, y; 0, off, no, false, n; any case).
func truthy(v string) (val, ok bool) { return sc.WordYN(v) }

// sortedKeys returns m's keys sorted.
func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// yesNo spells a boolean the systemd and sysconfig way.
func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// lacpRate spells the kernel's numeric LACP rates by name.
func lacpRate(v string) string {
	switch v {
	case "0":
		return "slow"
	case "1":
		return "fast"
	}
	return v
}
