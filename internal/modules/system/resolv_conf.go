package system

import (
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// ResolvConf is cc_resolv_conf: with manage_resolv_conf true, /etc/resolv.conf
// is rendered from resolv_conf (nameservers, searchdomains, domain,
// sortlist, options: true values become flags, false ones are dropped,
// others key:value), as cloud-init's template. A symlink at
// /etc/resolv.conf (systemd-resolved's stub) is replaced by the file: the
// user asked for this content.
func ResolvConf(_ context.Context, e *core.Env) error {
	manage, _, err := ccfg.Decode[bool](e.Cfg, "manage_resolv_conf")
	if err != nil || !manage {
		return err
	}
	rc, ok, err := ccfg.Decode[*ccfg.ResolvConf](e.Cfg, "resolv_conf")
	if err != nil {
		return err
	}
	if !ok || rc.NotMap != "" {
		kind := "null" // missing or null
		if ok {
			kind = rc.NotMap
		}
		e.Logf("manage_resolv_conf is set but resolv_conf is %s: nothing written", kind)
		return nil
	}
	content, err := renderResolvConf(*rc)
	if err != nil {
		return err
	}
	if fi, err := e.Root.Stat("/etc/resolv.conf"); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if err := e.Root.Remove("/etc/resolv.conf"); err != nil {
			return err
		}
	}
	return e.Root.WriteFile("/etc/resolv.conf", []byte(content), 0o644, 0, 0)
}

// renderResolvConf renders resolv.conf(5) from a resolv_conf map.
func renderResolvConf(rc ccfg.ResolvConf) (string, error) {
	var b strings.Builder
	b.WriteString("# Written by earlyinit from cloud-config's resolv_conf (manage_resolv_conf: true).\n")
	for _, n := range rc.Nameservers {
		fmt.Fprintf(&b, "nameserver %s\n", n)
	}
	if len(rc.SearchDomains) > 0 {
		fmt.Fprintf(&b, "search %s\n", strings.Join(rc.SearchDomains, " "))
	}
	if d := rc.Domain; d != "" {
		fmt.Fprintf(&b, "domain %s\n", d)
	}
	if len(rc.SortList) > 0 {
		fmt.Fprintf(&b, "sortlist %s\n", strings.Join(rc.SortList, " "))
	}
	if opts := rc.Options; opts != nil {
		keys := make([]string, 0, len(opts))
		for k := range opts {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var flags, kv []string
		for _, k := range keys {
			switch v := opts[k].(type) {
			case bool:
				if v {
					flags = append(flags, k)
				}
			default:
				kv = append(kv, k+":"+core.ScalarString(v))
			}
		}
		if all := append(flags, kv...); len(all) > 0 {
			fmt.Fprintf(&b, "options %s\n", strings.Join(all, " "))
		}
	}
	out := b.String()
	// A value with a line break would smuggle in other directives.
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		k, _, _ := strings.Cut(l, " ")
		switch k {
		case "#", "nameserver", "search", "domain", "sortlist", "options":
		default:
			return "", fmt.Errorf("resolv_conf: a value has a line break (%q)", l)
		}
		if strings.Contains(l, "\r") {
			return "", fmt.Errorf("resolv_conf: a value has a carriage return")
		}
	}
	return out, nil
}
