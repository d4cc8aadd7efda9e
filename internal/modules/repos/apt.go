package repos

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
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
	// Decode fails only on apt not a map: its keys' errors are theirs
	// (ccfg's read_repos.go), reported where planApt reads them.
	cfg, ok, err := ccfg.Decode[*ccfg.Apt](e.Cfg, "apt")
	if err != nil || !ok {
		return err
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

func planApt(ctx context.Context, e *core.Env, cfg *ccfg.Apt) (*aptPlan, error) {
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
	case cfg.GenerateMirrorlists:
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
	case cfg.PreserveSourcesList != nil && !*cfg.PreserveSourcesList:
		for _, l := range []struct {
			kind    string
			mirrors ccfg.AptMirrors
		}{{"primary", cfg.Primary}, {"security", cfg.Security}} {
			// Not a list: no keys (aptMirrors reports it).
			for i, m := range l.mirrors {
				if m != nil {
					if err := p.addKey(fmt.Sprintf("apt.%s.%d", l.kind, i), aptKey{m.Key, m.KeyID, m.Keyserver}, l.kind, false); err != nil {
						return nil, err
					}
				}
			}
		}
		if release == "" {
			return nil, errors.New("apt.preserve_sources_list: false: the root's /etc/os-release has no VERSION_CODENAME for the sources.list template")
		}
		text, err := sourcesList(e, cfg.SourcesList, release, mirrors, osr["ID"])
		if err != nil {
			return nil, err
		}
		if text != "" {
			ds, err := cfg.DisableSuites.Strings("apt.disable_suites", false)
			if err != nil {
				return nil, err
			}
			p.files = append(p.files, aptFile{name: aptSourcesList, data: []byte(disableSuites(ds, text, release))})
		}
	}
	if err := p.proxyAndConf(e, cfg); err != nil {
		return nil, err
	}
	if cfg.Sources != nil || cfg.Err("sources") != nil {
		params := map[string]string{}
		for k, v := range mirrors {
			params[k] = v
		}
		params["RELEASE"] = release
		if err := p.sources(cfg, params); err != nil {
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
func (p *aptPlan) debconfSelections(cfg *ccfg.Apt) error {
	if err := cfg.Err("debconf_selections"); err != nil {
		return err
	}
	sets := cfg.DebconfSelections
	if len(sets) == 0 {
		return nil
	}
	var parts []string
	for _, k := range sortedStringKeys(sets) {
		parts = append(parts, sets[k])
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
func (p *aptPlan) proxyAndConf(e *core.Env, cfg *ccfg.Apt) error {
	var proxies []string
	for _, x := range []struct {
		key    string
		v      ccfg.PyString
		format string
	}{
		{"proxy", cfg.Proxy, "Acquire::http::Proxy %q;"},
		{"http_proxy", cfg.HTTPProxy, "Acquire::http::Proxy %q;"},
		{"ftp_proxy", cfg.FTPProxy, "Acquire::ftp::Proxy %q;"},
		{"https_proxy", cfg.HTTPSProxy, "Acquire::https::Proxy %q;"},
	} {
		v := x.v.Str()
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
	if c := cfg.Conf.Str(); c != "" {
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
func (p *aptPlan) sources(cfg *ccfg.Apt, params map[string]string) error {
	if err := cfg.Err("sources"); err != nil {
		return err
	}
	match, err := addAptRepoMatch(cfg.AddAptRepoMatch)
	if err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(cfg.Sources)) {
		key := "apt.sources." + name
		ent := cfg.Sources[name]
		if ent.Err != nil {
			return ent.Err
		}
		filename := name
		if ent.Filename.Set() {
			filename = ent.Filename.Str()
		}
		if err := checkSourceFile(key+".filename", filename); err != nil {
			return err
		}
		if ent.Source.Set() && !ent.Source.IsString() {
			return fmt.Errorf("%s.source: want a string, got %s", key, ent.Source)
		}
		source, hasSource := ent.Source.Text(), ent.Source.IsString()
		hardened := hasSource && strings.Contains(source, "$KEY_FILE")
		stem := path.Base(filename)
		if i := strings.LastIndex(stem, "."); i > 0 {
			stem = stem[:i]
		}
		if err := p.addKey(key, aptKey{ent.Key, ent.KeyID, ent.Keyserver}, stem, hardened); err != nil {
			return err
		}
		if !hasSource {
			continue
		}
		ps := params
		if hardened {
			if !ent.Key.Set() && !ent.KeyID.Set() {
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
		p.files = append(p.files, aptFile{name: filename, data: []byte(line + "\n"), append: ent.Append})
	}
	p.update = true
	return nil
}

// addAptRepoMatch is the pattern of the sources that go to
// add-apt-repository: apt.add_apt_repo_match, cloud-init's when not
// given, none when given null or "".
func addAptRepoMatch(given ccfg.PyString) (*regexp.Regexp, error) {
	if !given.Given() {
		return aptRepoMatch.Get(), nil
	}
	if given.Str() == "" {
		return nil, nil
	}
	re, err := regexp.Compile(given.Str())
	if err != nil {
		return nil, fmt.Errorf("apt.add_apt_repo_match: %w", err)
	}
	return re, nil
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

// aptKey is an apt.sources, apt.primary or apt.security entry's key:
// the key itself, or a keyid to fetch from a keyserver.
type aptKey struct {
	key, keyid, keyserver ccfg.PyString
}

// addKey is add_apt_key: an entry's key (or keyid, fetched from its
// keyserver) to /etc/apt/trusted.gpg.d/<stem>.gpg, or with hardened (the
// source says $KEY_FILE) to /etc/apt/cloud-init.gpg.d/<stem>.gpg.
func (p *aptPlan) addKey(key string, k aptKey, stem string, hardened bool) error {
	dir := aptTrustedGPGDir
	if hardened {
		dir = aptSignedByDir
	}
	file := dir + stem + ".gpg"
	if k.key.Set() {
		if !k.key.IsString() {
			return fmt.Errorf("%s.key: want a string, got %s", key, k.key)
		}
		b, err := pgparmor.Dearmor(k.key.Text())
		if err != nil {
			return fmt.Errorf("%s.key: %w", key, err)
		}
		p.files = append(p.files, aptFile{name: file, data: b})
		return nil
	}
	if !k.keyid.Set() {
		return nil
	}
	keyid := k.keyid.Str()
	if !keyidRE.Get().MatchString(keyid) {
		return fmt.Errorf("%s.keyid: %q is not a key id or fingerprint (hexadecimal digits and spaces)", key, keyid)
	}
	ks := defaultKeyserver
	if k.keyserver.Set() {
		ks = k.keyserver.Str()
	}
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
