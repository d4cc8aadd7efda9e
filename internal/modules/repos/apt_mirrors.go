package repos

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/pyfmt"
)

// dpkgArch is util.get_dpkg_architecture: dpkg --print-architecture.
func dpkgArch(ctx context.Context, e *core.Env) (string, error) {
	out, err := e.Run(ctx, core.Cmd{Name: "dpkg", Args: []string{"--print-architecture"}})
	if err != nil {
		return "", fmt.Errorf("apt: the root's architecture: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// defaultMirrors is cloud-init's get_default_mirrors: PRIMARY_ARCH_MIRRORS
// or PORTS_MIRRORS by architecture, nil for another.
func defaultMirrors(arch string) map[string]string {
	switch arch {
	case "amd64", "i386":
		return map[string]string{"PRIMARY": "http://archive.ubuntu.com/ubuntu/", "SECURITY": "http://security.ubuntu.com/ubuntu/"}
	case "s390x", "arm64", "armhf", "powerpc", "ppc64el", "riscv64":
		return map[string]string{"PRIMARY": "http://ports.ubuntu.com/ubuntu-ports", "SECURITY": "http://ports.ubuntu.com/ubuntu-ports"}
	}
	return nil
}

// aptMirrors is find_apt_mirror_info: apt.primary / apt.security for the
// architecture (uri, else the first resolvable of search, else
// search_dns), security defaulting to primary; without them the image's
// system_info.package_mirrors (failsafe, overridden by resolvable search
// entries), else cloud-init's defaults (Ubuntu's archive). MIRROR is
// PRIMARY.
func aptMirrors(ctx context.Context, e *core.Env, cfg *ccfg.Apt, arch, distro string) (map[string]string, error) {
	pm, err := aptMirror(ctx, e, cfg, "primary", arch, distro)
	if err != nil {
		return nil, err
	}
	sm, err := aptMirror(ctx, e, cfg, "security", arch, distro)
	if err != nil {
		return nil, err
	}
	var out map[string]string
	switch {
	case pm != "":
		if sm == "" {
			sm = pm
		}
		out = map[string]string{"PRIMARY": pm, "SECURITY": sm}
	default:
		if out, err = systemInfoMirrors(ctx, e, arch); err != nil {
			return nil, err
		}
		if out == nil {
			if out = defaultMirrors(arch); out == nil {
				return nil, fmt.Errorf("apt: no default mirror known for arch %s: give apt.primary", arch)
			}
		}
	}
	out["MIRROR"] = out["PRIMARY"]
	for k, v := range out {
		if err := checkLine("apt mirror "+k, v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// archEntry is the index of the entry of list whose arches has arch,
// else of the (last) one with default, else -1; arches of each is what
// it says (a value that is not a list of strings is none).
func archEntry[T any](list []T, arches func(T) []string, arch string) int {
	def := -1
	for i, m := range list {
		for _, a := range arches(m) {
			if a == arch {
				return i
			}
			if a == "default" {
				def = i
			}
		}
	}
	return def
}

func aptMirror(ctx context.Context, e *core.Env, cfg *ccfg.Apt, kind, arch, distro string) (string, error) {
	if err := cfg.Err(kind); err != nil {
		return "", err
	}
	l := cfg.Primary
	if kind == "security" {
		l = cfg.Security
	}
	i := archEntry(l, func(m *ccfg.AptMirror) []string {
		if m == nil { // not a map: skipped
			return nil
		}
		arches, _ := m.Arches.Strings("", false) // not a list: none
		return arches
	}, arch)
	if i < 0 {
		return "", nil
	}
	m := l[i]
	if u := m.URI.Str(); u != "" {
		return u, nil
	}
	search, err := m.Search.Strings(fmt.Sprintf("apt.%s.%d.search", kind, i), false)
	if err != nil {
		return "", err
	}
	if u := searchMirror(ctx, e, search); u != "" {
		return u, nil
	}
	if !m.SearchDNS {
		return "", nil
	}
	dns := "mirror"
	if kind == "security" {
		dns = "security-mirror"
	}
	var doms []string
	if _, fqdn, ok, _ := e.HostnamePair(); ok {
		if _, dom, ok := strings.Cut(fqdn, "."); ok && dom != "" {
			doms = append(doms, "."+dom)
		}
	}
	doms = append(doms, ".localdomain", "")
	var cands []string
	for _, d := range doms {
		cands = append(cands, fmt.Sprintf("http://%s-%s%s/%s", distro, dns, d, distro))
	}
	return searchMirror(ctx, e, cands), nil
}

// searchMirror is util.search_for_mirror: the first candidate whose host
// resolves.
func searchMirror(ctx context.Context, e *core.Env, cands []string) string {
	for _, c := range cands {
		u, err := url.Parse(c)
		if err != nil || u.Hostname() == "" {
			continue
		}
		if addrs, err := lookupHost(ctx, u.Hostname()); err == nil && len(addrs) > 0 {
			e.Logf("apt_configure: found working mirror %s", c)
			return c
		}
	}
	return ""
}

// systemInfoMirrors is the distro's get_package_mirror_info: the
// architecture's system_info.package_mirrors entry, its failsafe mirrors
// overridden by the first resolvable search entry of each (templates
// taking %(region)s, %(availability_zone)s or %(ec2_region)s filled from
// the instance, entries that need one it has not skipped). Its keys come
// both as given (primary) and upper-cased (PRIMARY). nil without one. A
// template Python's % cannot fill otherwise (ValueError, TypeError) is an
// error, as cloud-init's exception fails apt_configure.
func systemInfoMirrors(ctx context.Context, e *core.Env, arch string) (map[string]string, error) {
	// system_info is the image's settings: package_mirrors' entries are
	// read without a check, as cloud-init's distro reads them
	// (ccfg.PackageMirrors). A system_info that is not a map, or a
	// package_mirrors that is not a list, gives no mirrors here, with
	// core.SystemInfo's warning; another key of it wrong does not matter
	// here.
	si := core.SystemInfo(e, "apt_configure", "package_mirrors")
	if si == nil {
		return nil, nil
	}
	i := archEntry(si.PackageMirrors, func(m ccfg.PackageMirror) []string { return m.Arches }, arch)
	if i < 0 {
		return nil, nil
	}
	m := si.PackageMirrors[i]
	subst := map[string]string{}
	if e.Data != nil {
		if az := e.Data.AvailabilityZone; az != "" {
			subst["availability_zone"] = az
			if ec2AZ.Get().MatchString(az) && e.Data.Platform == "ec2" {
				subst["ec2_region"] = az[:len(az)-1]
			}
		}
		if e.Data.Region != "" {
			subst["region"] = e.Data.Region
		}
	}
	out := map[string]string{}
	for k, v := range m.Failsafe {
		out[k] = v
	}
	for _, k := range slices.Sorted(maps.Keys(m.Search)) {
		cands, err := mirrorCandidates(e, k, m.Search[k], subst)
		if err != nil {
			return nil, err
		}
		if c := searchMirror(ctx, e, cands); c != "" {
			out[k] = c
		}
	}
	if out["primary"] == "" || out["security"] == "" {
		return nil, nil
	}
	res := map[string]string{}
	for k, v := range out {
		res[k] = v
	}
	res["PRIMARY"], res["SECURITY"] = out["primary"], out["security"]
	return res, nil
}

var ec2AZ = core.LazyRE{Expr: `^[a-z][a-z]-(?:[a-z]+-)+[0-9][a-z]$`}

// mirrorCandidates is the search templates of system_info's mirror key
// filled with subst (Python's tmpl % subst): a template naming what
// subst lacks is skipped (cloud-init's except KeyError), as is one
// pyfmt refuses (Python would put the whole mapping in the URL); another
// format error is an error.
func mirrorCandidates(e *core.Env, key string, tmpls []string, subst map[string]string) ([]string, error) {
	var cands []string
	for i, t := range tmpls {
		c, err := pyfmt.Format(t, subst)
		var fe *pyfmt.Error
		switch {
		case err == nil:
			cands = append(cands, c)
		case errors.As(err, &fe) && fe.Kind == pyfmt.KeyError:
			// A name the instance lacks (no region, no EC2 zone).
		case errors.As(err, &fe) && fe.Kind == pyfmt.Unsupported:
			e.Logf("apt_configure: system_info.package_mirrors search.%s.%d: %v: skipped", key, i, err)
		default:
			return nil, fmt.Errorf("apt: system_info.package_mirrors: search.%s.%d: %w", key, i, err)
		}
	}
	return cands, nil
}
