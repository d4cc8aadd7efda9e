package repos

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/pgparmor"
)

// Files cc_apt_configure writes.
const (
	aptProxyFile     = "/etc/apt/apt.conf.d/90cloud-init-aptproxy"
	aptConfigFile    = "/etc/apt/apt.conf.d/94cloud-init-config"
	aptTrustedGPGDir = "/etc/apt/trusted.gpg.d/"
	aptSignedByDir   = "/etc/apt/cloud-init.gpg.d/"
	aptSourcesList   = "/etc/apt/sources.list"
	aptSourcesDir    = "/etc/apt/sources.list.d/"
	defaultKeyserver = "keyserver.ubuntu.com"
	// aptGPGHome is the temporary keyring gpg fetches keyids into (the
	// root's /run: root's only).
	aptGPGHome = "/run/earlyinit/apt-gnupg"
)

// lookupHost resolves a mirror's host name (util.is_resolvable); tests
// replace it.
var lookupHost = func(ctx context.Context, host string) ([]string, error) {
	return net.DefaultResolver.LookupHost(ctx, host)
}

// AptConfigKeys are the top-level keys that make apt_configure run: apt,
// and the v1/v2 keys it does not take any more (named in the error).
var AptConfigKeys = []string{"apt", "apt_sources", "apt_mirror", "apt_mirror_search", "apt_mirror_search_dns",
	"apt_proxy", "apt_http_proxy", "apt_https_proxy", "apt_ftp_proxy", "apt_preserve_sources_list", "apt_custom_sources_list"}

// AptConfigure is cc_apt_configure, in the final stage (apt-get update and
// keyservers need the network), with these differences from cloud-init
// 22.4.2:
//   - it runs only with an apt key (cloud-init also runs, and rewrites
//     sources.list, with no apt configuration at all), and
//     preserve_sources_list defaults to true as in Debian's cloud.cfg:
//     sources.list is rewritten only with preserve_sources_list: false;
//   - the deprecated v1/v2 top-level keys (apt_sources, apt_mirror,
//     apt_proxy...) are refused with an error saying the apt key to use;
//   - ASCII-armoured keys are de-armoured here (the same bytes as gpg
//     --dearmor), so the root needs no gpg for them; a keyid is fetched
//     with the root's own gpg (and dirmngr, which does the keyserver's
//     TLS) into a temporary keyring;
//   - sources are handled in sorted order of their names (YAML order is
//     not kept), and a bad source stops the module before anything is
//     written; an entry's key file is only its own ($KEY_FILE of an entry
//     without a key is an error, where cloud-init would use the previous
//     entry's);
//   - the sources.list template may be a basic one ($var) or a jinja one
//     using only {{ var }}, {% if var in (...) %}/{% if var == '...' %},
//     {% else %} and {% endif %} (what cloud-init's own templates use);
//   - apt lists are not renamed after a mirror change (apt-get update
//     fetches them again), and debconf_selections are set but no package
//     is reconfigured.
func AptConfigure(ctx context.Context, e *core.Env) error {
	for _, k := range AptConfigKeys[1:] {
		if _, ok := e.Cfg[k]; ok {
			return fmt.Errorf("%s: the deprecated v1/v2 apt configuration is not supported: use the apt key (apt: sources, primary, proxy, preserve_sources_list, sources_list)", k)
		}
	}
	v := e.Cfg["apt"]
	if v == nil {
		return nil
	}
	cfg, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("apt: want a map, got %s", core.Kind(v))
	}
	if _, ok := e.Tool("apt-get"); !ok {
		e.Logf("apt_configure: the root has no apt-get: nothing done")
		return nil
	}
	p, err := planApt(ctx, e, cfg)
	if err != nil {
		return err
	}
	return aptApply(ctx, e, p)
}

// aptFile is a file to write (or append to).
type aptFile struct {
	name   string
	data   []byte
	append bool
}

// aptPlan is everything apt_configure will do, worked out (and checked)
// before anything is written.
type aptPlan struct {
	debconf  []byte
	files    []aptFile
	remove   []string
	keyids   []aptKeyID
	addRepos []string // add-apt-repository arguments
	update   bool
}

// aptKeyID is a key fetched from a keyserver into file.
type aptKeyID struct {
	key, keyid, keyserver, file string
}

func planApt(ctx context.Context, e *core.Env, cfg map[string]any) (*aptPlan, error) {
	p := &aptPlan{}
	if err := p.debconfSelections(cfg); err != nil {
		return nil, err
	}
	osr := aptOSRelease(e)
	release := osr["VERSION_CODENAME"]
	arch, err := dpkgArch(ctx, e)
	if err != nil {
		return nil, err
	}
	mirrors, err := aptMirrors(ctx, e, cfg, arch, osr["ID"])
	if err != nil {
		return nil, err
	}
	switch {
	case core.IsTrue(cfg["generate_mirrorlists"]):
		distro := osr["ID"]
		if !repoIDRE.Get().MatchString(distro) {
			return nil, fmt.Errorf("apt.generate_mirrorlists: the root's os-release ID %q is no file name", distro)
		}
		for _, f := range []struct{ n, k string }{{distro + ".list", "PRIMARY"}, {distro + "-security.list", "SECURITY"}} {
			if err := checkLine("apt mirror", mirrors[f.k]); err != nil {
				return nil, err
			}
			p.files = append(p.files, aptFile{name: "/etc/apt/mirrors/" + f.n, data: []byte(mirrors[f.k] + "\n")})
		}
	case cfg["preserve_sources_list"] != nil && core.IsFalse(cfg["preserve_sources_list"]):
		for _, k := range []string{"primary", "security"} {
			l, _ := cfg[k].([]any)
			for i, m := range l {
				if ent, ok := m.(map[string]any); ok {
					if err := p.addKey(fmt.Sprintf("apt.%s.%d", k, i), ent, k, false); err != nil {
						return nil, err
					}
				}
			}
		}
		if release == "" {
			return nil, errors.New("apt.preserve_sources_list: false: the root's /etc/os-release has no VERSION_CODENAME for the sources.list template")
		}
		text, err := sourcesList(e, cfg, release, mirrors, osr["ID"])
		if err != nil {
			return nil, err
		}
		if text != "" {
			ds, err := core.CfgStrings(cfg, "disable_suites", false)
			if err != nil {
				return nil, err
			}
			p.files = append(p.files, aptFile{name: aptSourcesList, data: []byte(disableSuites(ds, text, release))})
		}
	}
	if err := p.proxyAndConf(e, cfg); err != nil {
		return nil, err
	}
	if src, ok := cfg["sources"]; ok && src != nil {
		params := map[string]string{}
		for k, v := range mirrors {
			params[k] = v
		}
		params["RELEASE"] = release
		if err := p.sources(e, src, params, cfg); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// checkLine refuses a value with a line break, for a one-line setting.
func checkLine(key, v string) error {
	if strings.ContainsAny(v, "\n\r\x00") {
		return fmt.Errorf("%s: %q has a line break", key, v)
	}
	return nil
}

// debconfSelections is apt.debconf_selections: the sets' texts in sorted
// order of their names, joined by newlines, for debconf-set-selections.
func (p *aptPlan) debconfSelections(cfg map[string]any) error {
	v := cfg["debconf_selections"]
	if v == nil {
		return nil
	}
	sets, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("apt.debconf_selections: want a map, got %s", core.Kind(v))
	}
	if len(sets) == 0 {
		return nil
	}
	var parts []string
	for _, k := range core.SortedKeys(sets) {
		s, ok := sets[k].(string)
		if !ok {
			return fmt.Errorf("apt.debconf_selections.%s: want a string, got %s", k, core.Kind(sets[k]))
		}
		parts = append(parts, s)
	}
	sel := strings.Join(parts, "\n")
	if !strings.HasSuffix(sel, "\n") {
		sel += "\n"
	}
	p.debconf = []byte(sel)
	return nil
}

// proxyAndConf is apply_apt_config: the proxy file and apt.conf snippet,
// or their removal when not configured.
func (p *aptPlan) proxyAndConf(e *core.Env, cfg map[string]any) error {
	var proxies []string
	for _, x := range []struct{ key, format string }{
		{"proxy", "Acquire::http::Proxy %q;"},
		{"http_proxy", "Acquire::http::Proxy %q;"},
		{"ftp_proxy", "Acquire::ftp::Proxy %q;"},
		{"https_proxy", "Acquire::https::Proxy %q;"},
	} {
		v := core.CfgString(cfg, x.key, "")
		if v == "" {
			continue
		}
		if strings.ContainsAny(v, "\"\\\n\r\x00;") {
			return fmt.Errorf("apt.%s: %q: a proxy URL has no quote, backslash, semicolon or line break", x.key, v)
		}
		proxies = append(proxies, fmt.Sprintf(x.format, v))
	}
	if len(proxies) > 0 {
		p.files = append(p.files, aptFile{name: aptProxyFile, data: []byte(strings.Join(proxies, "\n") + "\n")})
	} else if e.Root.Exists(aptProxyFile) {
		p.remove = append(p.remove, aptProxyFile)
	}
	if c := core.CfgString(cfg, "conf", ""); c != "" {
		p.files = append(p.files, aptFile{name: aptConfigFile, data: []byte(c)})
	} else if e.Root.Exists(aptConfigFile) {
		p.remove = append(p.remove, aptConfigFile)
	}
	return nil
}

// aptRepoMatch is cloud-init's ADD_APT_REPO_MATCH: a source such as
// ppa:user/name goes to add-apt-repository.
var aptRepoMatch = core.LazyRE{Expr: `^[\w-]+:\w`}

// sourceNameRE is a sources entry's file name.
var sourceNameRE = core.LazyRE{Expr: `^[A-Za-z0-9_][A-Za-z0-9_.:+-]*$`}

// sources is add_apt_sources: each entry's key, then its source line
// rendered with the mirrors, RELEASE and KEY_FILE, appended (or with
// append: false written) to sources.list.d/<name>.list; apt-get update
// after them all.
func (p *aptPlan) sources(e *core.Env, v any, params map[string]string, cfg map[string]any) error {
	src, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("apt.sources: want a map of entries, got %s", core.Kind(v))
	}
	match := aptRepoMatch.Get()
	if m, ok := cfg["add_apt_repo_match"]; ok {
		s := core.ScalarString(m)
		if m == nil || s == "" {
			match = nil
		} else {
			re, err := regexp.Compile(s)
			if err != nil {
				return fmt.Errorf("apt.add_apt_repo_match: %w", err)
			}
			match = re
		}
	}
	for _, name := range core.SortedKeys(src) {
		key := "apt.sources." + name
		ent, ok := src[name].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want a map, got %s", key, core.Kind(src[name]))
		}
		filename := core.CfgString(ent, "filename", name)
		if err := checkSourceFile(key+".filename", filename); err != nil {
			return err
		}
		source, hasSource := ent["source"].(string)
		if ent["source"] != nil && !hasSource {
			return fmt.Errorf("%s.source: want a string, got %s", key, core.Kind(ent["source"]))
		}
		hardened := hasSource && strings.Contains(source, "$KEY_FILE")
		stem := path.Base(filename)
		if i := strings.LastIndex(stem, "."); i > 0 {
			stem = stem[:i]
		}
		if err := p.addKey(key, ent, stem, hardened); err != nil {
			return err
		}
		if !hasSource {
			continue
		}
		ps := params
		if hardened {
			if ent["key"] == nil && ent["keyid"] == nil {
				return fmt.Errorf("%s.source: uses $KEY_FILE but the entry has no key or keyid", key)
			}
			ps = map[string]string{"KEY_FILE": aptSignedByDir + stem + ".gpg"}
			for k, v := range params {
				ps[k] = v
			}
		}
		line, err := basicRender(source, ps)
		if err != nil {
			return fmt.Errorf("%s.source: %w", key, err)
		}
		if strings.ContainsAny(strings.TrimSuffix(line, "\n"), "\n\r\x00") {
			return fmt.Errorf("%s.source: one source line, without line breaks", key)
		}
		if !strings.HasPrefix(filename, "/") {
			filename = aptSourcesDir + filename
		}
		if !strings.HasSuffix(filename, ".list") {
			filename += ".list"
		}
		if match != nil && match.MatchString(line) {
			if strings.HasPrefix(line, "-") {
				return fmt.Errorf("%s.source: %q starts with -", key, line)
			}
			p.addRepos = append(p.addRepos, line)
			continue
		}
		p.files = append(p.files, aptFile{name: filename, data: []byte(line + "\n"), append: !(ent["append"] != nil && core.IsFalse(ent["append"]))})
	}
	p.update = true
	return nil
}

// checkSourceFile checks a sources entry's filename: a plain name, or an
// absolute path (as cloud-init allows) without "..".
func checkSourceFile(key, f string) error {
	if strings.HasPrefix(f, "/") {
		if strings.Contains(f, "..") || strings.ContainsAny(f, "\n\r\x00") || strings.HasSuffix(f, "/") {
			return fmt.Errorf("%s: %q: want a file name or an absolute path without ..", key, f)
		}
		return nil
	}
	if !sourceNameRE.Get().MatchString(f) {
		return fmt.Errorf("%s: %q: want a file name (letters, digits and _.:+-)", key, f)
	}
	return nil
}

var keyidRE = core.LazyRE{Expr: `^(0x)?[0-9A-Fa-f][0-9A-Fa-f ]*$`}
var keyserverRE = core.LazyRE{Expr: `^([a-z0-9+]+://)?[A-Za-z0-9.-]+(:[0-9]+)?/?$`}

// addKey is add_apt_key: an entry's key (or keyid, fetched from its
// keyserver) to /etc/apt/trusted.gpg.d/<stem>.gpg, or with hardened (the
// source says $KEY_FILE) to /etc/apt/cloud-init.gpg.d/<stem>.gpg.
func (p *aptPlan) addKey(key string, ent map[string]any, stem string, hardened bool) error {
	dir := aptTrustedGPGDir
	if hardened {
		dir = aptSignedByDir
	}
	file := dir + stem + ".gpg"
	if k, ok := ent["key"]; ok && k != nil {
		s, ok := k.(string)
		if !ok {
			return fmt.Errorf("%s.key: want a string, got %s", key, core.Kind(k))
		}
		b, err := pgparmor.Dearmor(s)
		if err != nil {
			return fmt.Errorf("%s.key: %w", key, err)
		}
		p.files = append(p.files, aptFile{name: file, data: b})
		return nil
	}
	id, ok := ent["keyid"]
	if !ok || id == nil {
		return nil
	}
	keyid := core.ScalarString(id)
	if !keyidRE.Get().MatchString(keyid) {
		return fmt.Errorf("%s.keyid: %q is not a key id or fingerprint (hexadecimal digits and spaces)", key, keyid)
	}
	ks := core.CfgString(ent, "keyserver", defaultKeyserver)
	if !keyserverRE.Get().MatchString(ks) {
		return fmt.Errorf("%s.keyserver: %q is not a key server (host, or scheme://host:port)", key, ks)
	}
	p.keyids = append(p.keyids, aptKeyID{key: key, keyid: keyid, keyserver: ks, file: file})
	return nil
}

// aptApply does the plan: debconf selections, files, removals,
// add-apt-repository, keys from keyservers, apt-get update.
func aptApply(ctx context.Context, e *core.Env, p *aptPlan) error {
	if p.debconf != nil {
		if _, err := e.Run(ctx, core.Cmd{Name: "debconf-set-selections", Stdin: p.debconf}); err != nil {
			return fmt.Errorf("apt.debconf_selections: %w", err)
		}
	}
	for _, k := range p.keyids {
		if err := fetchKey(ctx, e, k); err != nil {
			return err
		}
	}
	for _, f := range p.files {
		e.Logf("apt_configure: %s", f.name)
		var err error
		if f.append {
			err = e.Root.AppendFile(f.name, f.data, 0o644, 0, 0)
		} else {
			err = e.Root.WriteFile(f.name, f.data, 0o644, 0, 0)
		}
		if err != nil {
			return fmt.Errorf("apt: %s: %w", f.name, err)
		}
	}
	for _, f := range p.remove {
		if err := e.Root.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("apt: remove %s: %w", f, err)
		}
	}
	for _, r := range p.addRepos {
		if _, err := e.Run(ctx, core.Cmd{Name: "add-apt-repository", Args: []string{"--no-update", r}, Output: e.Out()}); err != nil {
			return fmt.Errorf("apt.sources: %w", err)
		}
	}
	if !p.update {
		return nil
	}
	m, err := e.PackageManager()
	if err != nil {
		return err
	}
	if err := e.UpdateSources(ctx, m); err != nil {
		return fmt.Errorf("apt.sources: package update failed: %w", err)
	}
	return nil
}

// fetchKey gets a keyid from its keyserver with the root's gpg, in a
// keyring of its own that goes afterwards, and writes it (binary, as
// cloud-init's export, armour and dearmor give) to its file.
func fetchKey(ctx context.Context, e *core.Env, k aptKeyID) error {
	if _, ok := e.Tool("gpg"); !ok {
		return fmt.Errorf("%s.keyid: fetching %s from %s needs gpg (and dirmngr) in the root, which has none: give the key itself", k.key, k.keyid, k.keyserver)
	}
	if err := e.Root.MkdirAll(aptGPGHome, 0o700, 0, 0); err != nil {
		return err
	}
	defer func() {
		e.Run(ctx, core.Cmd{Name: "gpgconf", Args: []string{"--homedir", aptGPGHome, "--kill", "all"}})
		e.Run(ctx, core.Cmd{Name: "rm", Args: []string{"-rf", "--", aptGPGHome}})
	}()
	home := []string{"--homedir", aptGPGHome, "--batch", "--no-tty"}
	if _, err := e.Run(ctx, core.Cmd{Name: "gpg", Args: append(home, "--keyserver="+k.keyserver, "--recv-keys", k.keyid)}); err != nil {
		return fmt.Errorf("%s.keyid: %s from %s: %w", k.key, k.keyid, k.keyserver, err)
	}
	out, err := e.Run(ctx, core.Cmd{Name: "gpg", Args: append(home, "--export", k.keyid)})
	if err != nil {
		return fmt.Errorf("%s.keyid: export %s: %w", k.key, k.keyid, err)
	}
	if len(out) == 0 {
		return fmt.Errorf("%s.keyid: %s: the keyserver %s gave no key", k.key, k.keyid, k.keyserver)
	}
	e.Logf("apt_configure: key %s from %s to %s", k.keyid, k.keyserver, k.file)
	return e.Root.WriteFile(k.file, out, 0o644, 0, 0)
}

// aptOSRelease is the root's os-release keys (ID, VERSION_CODENAME).
func aptOSRelease(e *core.Env) map[string]string {
	out := map[string]string{}
	for _, f := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		b, err := e.Root.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
			if !ok {
				continue
			}
			if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
				v = v[1 : len(v)-1]
			}
			out[k] = v
		}
		break
	}
	return out
}

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
func aptMirrors(ctx context.Context, e *core.Env, cfg map[string]any, arch, distro string) (map[string]string, error) {
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
		out = systemInfoMirrors(ctx, e, arch)
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

// archEntry is the list's entry whose arches has arch, else the one with
// default.
func archEntry(list []any, arch string) map[string]any {
	var def map[string]any
	for _, it := range list {
		m, ok := it.(map[string]any)
		if !ok {
			continue
		}
		arches, _ := core.CfgStrings(m, "arches", false)
		for _, a := range arches {
			if a == arch {
				return m
			}
			if a == "default" {
				def = m
			}
		}
	}
	return def
}

func aptMirror(ctx context.Context, e *core.Env, cfg map[string]any, kind, arch, distro string) (string, error) {
	v := cfg[kind]
	if v == nil {
		return "", nil
	}
	list, ok := v.([]any)
	if !ok {
		return "", fmt.Errorf("apt.%s: want a list of mirror entries", kind)
	}
	m := archEntry(list, arch)
	if m == nil {
		return "", nil
	}
	if u := core.CfgString(m, "uri", ""); u != "" {
		return u, nil
	}
	search, err := core.CfgStrings(m, "search", false)
	if err != nil {
		return "", err
	}
	if u := searchMirror(ctx, e, search); u != "" {
		return u, nil
	}
	if !core.IsTrue(m["search_dns"]) {
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
// both as given (primary) and upper-cased (PRIMARY). nil without one.
func systemInfoMirrors(ctx context.Context, e *core.Env, arch string) map[string]string {
	si, _ := e.Cfg["system_info"].(map[string]any)
	list, _ := si["package_mirrors"].([]any)
	m := archEntry(list, arch)
	if m == nil {
		return nil
	}
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
	if fs, ok := m["failsafe"].(map[string]any); ok {
		for k, v := range fs {
			out[k] = core.ScalarString(v)
		}
	}
	if s, ok := m["search"].(map[string]any); ok {
		for _, k := range core.SortedKeys(s) {
			tmpls, _ := core.CfgStrings(s, k, false)
			var cands []string
			for _, t := range tmpls {
				if c, ok := pyPercent(t, subst); ok {
					cands = append(cands, c)
				}
			}
			if c := searchMirror(ctx, e, cands); c != "" {
				out[k] = c
			}
		}
	}
	if out["primary"] == "" || out["security"] == "" {
		return nil
	}
	res := map[string]string{}
	for k, v := range out {
		res[k] = v
	}
	res["PRIMARY"], res["SECURITY"] = out["primary"], out["security"]
	return res
}

var ec2AZ = core.LazyRE{Expr: `^[a-z][a-z]-(?:[a-z]+-)+[0-9][a-z]$`}

// pyPercent fills Python's %(name)s; ok is false when a name is missing.
func pyPercent(t string, subst map[string]string) (string, bool) {
	var b strings.Builder
	for {
		i := strings.Index(t, "%(")
		if i < 0 {
			b.WriteString(t)
			return b.String(), true
		}
		j := strings.Index(t[i:], ")s")
		if j < 0 {
			return "", false
		}
		v, ok := subst[t[i+2:i+j]]
		if !ok {
			return "", false
		}
		b.WriteString(t[:i] + v)
		t = t[i+j+2:]
	}
}

// basicMatcher is cloud-init's templater.BASIC_MATCHER.
var basicMatcher = core.LazyRE{Expr: `\$\{([A-Za-z0-9_.]+)\}|\$([A-Za-z0-9_.]+)`}

// basicRender is cloud-init's basic_render: $name and ${name} replaced by
// params[name]; a name params lacks is an error (cloud-init's KeyError).
func basicRender(s string, params map[string]string) (string, error) {
	var missing []string
	out := basicMatcher.Get().ReplaceAllStringFunc(s, func(m string) string {
		sub := basicMatcher.Get().FindStringSubmatch(m)
		name := sub[1]
		if name == "" {
			name = sub[2]
		}
		v, ok := params[name]
		if !ok {
			missing = append(missing, "$"+name)
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("unknown template variable %s (known: %s)", strings.Join(missing, ", "), strings.Join(sortedStringKeys(params), ", "))
	}
	return out, nil
}

func sortedStringKeys(m map[string]string) []string {
	a := map[string]any{}
	for k := range m {
		a[k] = nil
	}
	return core.SortedKeys(a)
}

// sourcesList renders apt.sources_list, else the root's
// /etc/cloud/templates/sources.list.<distro>.tmpl or sources.list.tmpl,
// else cloud-init's own template for Debian or Ubuntu, with the mirrors
// (each as given and lower-cased), RELEASE and codename. "" when there is
// no template.
func sourcesList(e *core.Env, cfg map[string]any, release string, mirrors map[string]string, distro string) (string, error) {
	params := map[string]string{"RELEASE": release, "codename": release}
	for k, v := range mirrors {
		params[k] = v
		params[strings.ToLower(k)] = v
	}
	key := "apt.sources_list"
	tmpl, ok := cfg["sources_list"].(string)
	if !ok {
		if v := cfg["sources_list"]; v != nil {
			return "", fmt.Errorf("apt.sources_list: want a string, got %s", core.Kind(v))
		}
		for _, f := range []string{"/etc/cloud/templates/sources.list." + distro + ".tmpl", "/etc/cloud/templates/sources.list.tmpl"} {
			if b, err := e.Root.ReadFile(f); err == nil {
				tmpl, key, ok = string(b), f, true
				break
			}
		}
		if !ok {
			switch distro {
			case "debian":
				tmpl, key = debianSourcesTemplate, "the built-in Debian template"
			case "ubuntu":
				tmpl, key = ubuntuSourcesTemplate, "the built-in Ubuntu template"
			default:
				e.Logf("apt_configure: no template found, not rendering %s", aptSourcesList)
				return "", nil
			}
		}
	}
	first, rest, _ := strings.Cut(tmpl, "\n")
	if m := templateType.Get().FindStringSubmatch(first); m != nil {
		switch strings.ToLower(strings.TrimSpace(m[1])) {
		case "jinja":
			out, err := miniJinja(rest, params)
			if err != nil {
				return "", fmt.Errorf("%s: %w", key, err)
			}
			if strings.HasSuffix(rest, "\n") && !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			return out, nil
		case "basic":
			tmpl = rest
		default:
			return "", fmt.Errorf("%s: unknown template type %q", key, strings.TrimSpace(m[1]))
		}
	}
	out, err := basicRender(tmpl, params)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	return out, nil
}

var templateType = core.LazyRE{Expr: `(?i)^##\s*template:(.*)`}

// miniJinja renders the part of jinja cloud-init's sources.list templates
// use, with trim_blocks (a newline right after a {% %} tag goes):
// {{ name }} (an unknown name renders as CI_MISSING_JINJA_VAR/name, as
// cloud-init's), {# comments #}, and {% if name in ('a', 'b') %},
// {% if name == 'a' %}, {% if name != 'a' %}, {% else %}, {% endif %},
// nested. Anything else is an error naming it.
func miniJinja(s string, params map[string]string) (string, error) {
	var b strings.Builder
	// emit is false inside a branch not taken; stack holds, for each open
	// if, whether its enclosing output was on and whether it was taken.
	type frame struct{ outer, taken bool }
	var stack []frame
	emit := true
	for len(s) > 0 {
		i := strings.IndexAny(s, "{")
		if i < 0 || i == len(s)-1 {
			if emit {
				b.WriteString(s)
			}
			break
		}
		if emit {
			b.WriteString(s[:i])
		}
		s = s[i:]
		switch s[1] {
		case '{':
			j := strings.Index(s, "}}")
			if j < 0 {
				return "", errors.New("unclosed {{")
			}
			name := strings.TrimSpace(s[2:j])
			if !jinjaName.Get().MatchString(name) {
				return "", fmt.Errorf("jinja expression {{ %s }} not supported by earlyinit (only {{ name }})", name)
			}
			if emit {
				if v, ok := params[name]; ok {
					b.WriteString(v)
				} else {
					b.WriteString("CI_MISSING_JINJA_VAR/" + name)
				}
			}
			s = s[j+2:]
		case '#':
			j := strings.Index(s, "#}")
			if j < 0 {
				return "", errors.New("unclosed {#")
			}
			s = s[j+2:]
		case '%':
			j := strings.Index(s, "%}")
			if j < 0 {
				return "", errors.New("unclosed {%")
			}
			tag := strings.TrimSpace(strings.Trim(s[2:j], "-"))
			s = s[j+2:]
			if strings.HasPrefix(s, "\n") {
				s = s[1:]
			}
			f := strings.Fields(tag)
			switch {
			case len(f) == 1 && f[0] == "endif":
				if len(stack) == 0 {
					return "", errors.New("{% endif %} without {% if %}")
				}
				emit = stack[len(stack)-1].outer
				stack = stack[:len(stack)-1]
			case len(f) == 1 && f[0] == "else":
				if len(stack) == 0 {
					return "", errors.New("{% else %} without {% if %}")
				}
				top := stack[len(stack)-1]
				emit = top.outer && !top.taken
			case len(f) > 0 && f[0] == "if":
				ok, err := jinjaCond(strings.TrimSpace(tag[2:]), params)
				if err != nil {
					return "", err
				}
				stack = append(stack, frame{emit, ok})
				emit = emit && ok
			default:
				return "", fmt.Errorf("jinja statement {%% %s %%} not supported by earlyinit", tag)
			}
		default:
			if emit {
				b.WriteByte('{')
			}
			s = s[1:]
		}
	}
	if len(stack) > 0 {
		return "", errors.New("{% if %} without {% endif %}")
	}
	return b.String(), nil
}

var (
	jinjaName   = core.LazyRE{Expr: `^[A-Za-z_][A-Za-z0-9_]*$`}
	jinjaCondRE = core.LazyRE{Expr: `^([A-Za-z_][A-Za-z0-9_]*)\s+(in|==|!=|not in)\s+(.+)$`}
	jinjaStr    = core.LazyRE{Expr: `'([^']*)'|"([^"]*)"`}
)

// jinjaCond evaluates name in ('a', ...), name == 'a' and name != 'a'.
func jinjaCond(c string, params map[string]string) (bool, error) {
	m := jinjaCondRE.Get().FindStringSubmatch(c)
	if m == nil {
		return false, fmt.Errorf("jinja condition %q not supported by earlyinit", c)
	}
	v := params[m[1]]
	var lits []string
	for _, s := range jinjaStr.Get().FindAllStringSubmatch(m[3], -1) {
		lits = append(lits, s[1]+s[2])
	}
	if len(lits) == 0 {
		return false, fmt.Errorf("jinja condition %q: want string literals", c)
	}
	has := false
	for _, l := range lits {
		if l == v {
			has = true
		}
	}
	switch m[2] {
	case "in", "==":
		return has, nil
	}
	return !has, nil
}

// mapKnownSuites is map_known_suites.
func mapKnownSuite(s string) string {
	switch s {
	case "updates", "backports", "security", "proposed":
		return "$RELEASE-" + s
	case "release":
		return "$RELEASE"
	}
	return s
}

// disableSuites is disable_suites: each line (not a comment) whose suite
// is one of disabled (updates, backports, security, proposed and release
// meaning $RELEASE-updates... ) gets "# suite disabled by cloud-init: ".
func disableSuites(disabled []string, src, release string) string {
	for _, suite := range disabled {
		rs, err := basicRender(mapKnownSuite(suite), map[string]string{"RELEASE": release})
		if err != nil {
			rs = suite
		}
		var b bytes.Buffer
		for _, line := range strings.SplitAfter(src, "\n") {
			if line == "" {
				continue
			}
			if !strings.HasPrefix(line, "#") {
				cols := strings.Fields(line)
				if len(cols) > 1 {
					pcol := 2
					if strings.HasPrefix(cols[1], "[") {
						for _, c := range cols[1:] {
							pcol++
							if strings.HasSuffix(c, "]") {
								break
							}
						}
					}
					if pcol < len(cols) && cols[pcol] == rs {
						line = "# suite disabled by cloud-init: " + line
					}
				}
			}
			b.WriteString(line)
		}
		src = b.String()
	}
	return src
}

// debianSourcesTemplate and ubuntuSourcesTemplate are cloud-init 22.4.2's
// templates/sources.list.debian.tmpl and sources.list.ubuntu.tmpl.
const debianSourcesTemplate = `## template:jinja
## Note, this file is written by cloud-init on first boot of an instance
## modifications made here will not survive a re-bundle.
## if you wish to make changes you can:
## a.) add 'apt_preserve_sources_list: true' to /etc/cloud/cloud.cfg
##     or do the same in user-data
## b.) add sources in /etc/apt/sources.list.d
## c.) make changes to template file /etc/cloud/templates/sources.list.debian.tmpl
###

# See http://www.debian.org/releases/stable/i386/release-notes/ch-upgrading.html
# for how to upgrade to newer versions of the distribution.
deb {{mirror}} {{codename}} main
deb-src {{mirror}} {{codename}} main

## Major bug fix updates produced after the final release of the
## distribution.
deb {{security}} {{codename}}{% if codename in ('buster', 'stretch') %}/updates{% else %}-security{% endif %} main
deb-src {{security}} {{codename}}{% if codename in ('buster', 'stretch') %}/updates{% else %}-security{% endif %} main
deb {{mirror}} {{codename}}-updates main
deb-src {{mirror}} {{codename}}-updates main

## Uncomment the following two lines to add software from the 'backports'
## repository.
## 
## N.B. software from this repository may not have been tested as
## extensively as that contained in the main release, although it includes
## newer versions of some applications which may provide useful features.
deb {{mirror}} {{codename}}-backports main
deb-src {{mirror}} {{codename}}-backports main
`

const ubuntuSourcesTemplate = `## template:jinja
## Note, this file is written by cloud-init on first boot of an instance
## modifications made here will not survive a re-bundle.
## if you wish to make changes you can:
## a.) add 'apt_preserve_sources_list: true' to /etc/cloud/cloud.cfg
##     or do the same in user-data
## b.) add sources in /etc/apt/sources.list.d
## c.) make changes to template file /etc/cloud/templates/sources.list.tmpl

# See http://help.ubuntu.com/community/UpgradeNotes for how to upgrade to
# newer versions of the distribution.
deb {{mirror}} {{codename}} main restricted
# deb-src {{mirror}} {{codename}} main restricted

## Major bug fix updates produced after the final release of the
## distribution.
deb {{mirror}} {{codename}}-updates main restricted
# deb-src {{mirror}} {{codename}}-updates main restricted

## N.B. software from this repository is ENTIRELY UNSUPPORTED by the Ubuntu
## team. Also, please note that software in universe WILL NOT receive any
## review or updates from the Ubuntu security team.
deb {{mirror}} {{codename}} universe
# deb-src {{mirror}} {{codename}} universe
deb {{mirror}} {{codename}}-updates universe
# deb-src {{mirror}} {{codename}}-updates universe

## N.B. software from this repository is ENTIRELY UNSUPPORTED by the Ubuntu
## team, and may not be under a free licence. Please satisfy yourself as to
## your rights to use the software. Also, please note that software in
## multiverse WILL NOT receive any review or updates from the Ubuntu
## security team.
deb {{mirror}} {{codename}} multiverse
# deb-src {{mirror}} {{codename}} multiverse
deb {{mirror}} {{codename}}-updates multiverse
# deb-src {{mirror}} {{codename}}-updates multiverse

## N.B. software from this repository may not have been tested as
## extensively as that contained in the main release, although it includes
## newer versions of some applications which may provide useful features.
## Also, please note that software in backports WILL NOT receive any review
## or updates from the Ubuntu security team.
deb {{mirror}} {{codename}}-backports main restricted universe multiverse
# deb-src {{mirror}} {{codename}}-backports main restricted universe multiverse

deb {{security}} {{codename}}-security main restricted
# deb-src {{security}} {{codename}}-security main restricted
deb {{security}} {{codename}}-security universe
# deb-src {{security}} {{codename}}-security universe
deb {{security}} {{codename}}-security multiverse
# deb-src {{security}} {{codename}}-security multiverse
`
