package modules

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/earlyinit/earlyinit/pkg/instance"
)

// saltMinion is cc_salt_minion (cloud-init 22.4.2), once per instance in
// the final stage (cloud_final_modules, after chef and ansible):
//
//   - pkg_name (default salt-minion) is installed through the root's
//     package manager;
//   - config_dir (default /etc/salt) is made; conf goes to
//     <config_dir>/minion and grains to <config_dir>/grains, as
//     cloud-init's safeyaml.dumps writes YAML (0644, or 0600 when a key in
//     them names a secret: password, token, key...);
//   - with both public_key and private_key, pki_dir (default
//     <config_dir>/pki/minion when that is a directory, else
//     <config_dir>/pki) is made 0700 and gets minion.pub (0644) and
//     minion.pem (0600 root: the private key, never logged);
//   - the service service_name (default salt-minion) is restarted through
//     the running init (systemctl --no-block restart, rc-service restart).
//
// Differences: minion.pem is 0600 (cloud-init chmods it 0644 inside its
// 0700 directory); a key given without the other is logged, not silently
// ignored; FreeBSD's rc.conf is not handled.
func saltMinion(ctx context.Context, e *Env) error {
	raw, ok := e.Cfg["salt_minion"]
	if !ok {
		return nil
	}
	sc, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("salt_minion: want a map, got %s", kind(raw))
	}
	pkg := cfgString(sc, "pkg_name", "salt-minion")
	svc := cfgString(sc, "service_name", "salt-minion")
	if !validServiceName(svc) {
		return fmt.Errorf("salt_minion.service_name %q: not a service name", svc)
	}
	confDir, err := confPath("salt_minion.config_dir", strings.TrimSuffix(cfgString(sc, "config_dir", "/etc/salt"), "/"))
	if err != nil {
		return err
	}
	pkiDir := ""
	if v, ok := sc["pki_dir"]; ok {
		if pkiDir, err = confPath("salt_minion.pki_dir", strings.TrimSuffix(scalarString(v), "/")); err != nil {
			return err
		}
	}
	_, hasPub := sc["public_key"]
	_, hasPriv := sc["private_key"]
	var pub, priv string
	if hasPub && hasPriv {
		var ok1, ok2 bool
		pub, ok1 = sc["public_key"].(string)
		priv, ok2 = sc["private_key"].(string)
		if !ok1 {
			return fmt.Errorf("salt_minion.public_key: want a string, got %s", kind(sc["public_key"]))
		}
		if !ok2 {
			return fmt.Errorf("salt_minion.private_key: want a string, got %s", kind(sc["private_key"]))
		}
	}
	for _, k := range []string{"conf", "grains"} {
		if v, ok := sc[k]; ok {
			if _, ok := v.(map[string]any); !ok {
				return fmt.Errorf("salt_minion.%s: want a map, got %s", k, kind(v))
			}
		}
	}

	e.logf("salt_minion: installing %s", pkg)
	if err := e.installPackages(ctx, "salt_minion.pkg_name", []any{pkg}); err != nil {
		return fmt.Errorf("salt_minion: install: %w", err)
	}
	if err := e.Root.MkdirAll(confDir, 0o755, 0, 0); err != nil {
		return fmt.Errorf("salt_minion: %w", err)
	}
	for _, f := range []struct{ key, file string }{{"conf", "minion"}, {"grains", "grains"}} {
		v, ok := sc[f.key]
		if !ok {
			continue
		}
		mode := fs.FileMode(0o644)
		if hasSensitiveKey(v) {
			mode = 0o600
		}
		name := path.Join(confDir, f.file)
		if err := e.Root.WriteFile(name, []byte(pyYAMLDump(v, 4, true)), mode, 0, 0); err != nil {
			return fmt.Errorf("salt_minion.%s: %w", f.key, err)
		}
		e.logf("salt_minion: %s written (%#o)", name, mode)
	}

	switch {
	case hasPub && hasPriv:
		if pkiDir == "" {
			pkiDir = confDir + "/pki/minion"
			if fi, err := e.Root.Stat(pkiDir); err != nil || !fi.IsDir() {
				pkiDir = confDir + "/pki"
			}
		}
		// Under cloud-init's umask 077: every directory made is 0700.
		if err := e.mkdirEach(pkiDir, 0o700); err != nil {
			return fmt.Errorf("salt_minion: %w", err)
		}
		if err := e.Root.WriteFile(pkiDir+"/minion.pub", []byte(pub), 0o644, 0, 0); err != nil {
			return fmt.Errorf("salt_minion.public_key: %w", err)
		}
		if err := e.Root.WriteFile(pkiDir+"/minion.pem", []byte(priv), 0o600, 0, 0); err != nil {
			return fmt.Errorf("salt_minion.private_key: %w", err)
		}
		e.logf("salt_minion: the minion's keys written to %s (minion.pem 0600, not shown)", pkiDir)
	case hasPub:
		e.logf("salt_minion: public_key without private_key: no keys written")
	case hasPriv:
		e.logf("salt_minion: private_key without public_key: no keys written")
	}

	if err := e.serviceAction(ctx, "restart", svc); err != nil {
		return fmt.Errorf("salt_minion: restart %s: %w", svc, err)
	}
	return nil
}

// installPackages is cloud-init's distro.install_packages(pkgs): the
// package lists refreshed once per instance (as wireguard and
// package_update_upgrade_install do), then the packages installed through
// the root's package manager. pkgs is a packages list: names or [name,
// version] pairs, each checked before anything runs.
func (e *Env) installPackages(ctx context.Context, key string, pkgs []any) error {
	m, err := e.packageManager()
	if err != nil {
		return err
	}
	specs, err := m.packageSpecs(key, pkgs)
	if err != nil {
		return err
	}
	if err := e.updateSources(ctx, m); err != nil {
		return err
	}
	return e.runPkg(ctx, m, "install", specs)
}

// mkdirEach makes dir and its missing parents, each with mode, owned by
// root (an existing one is left as it is).
func (e *Env) mkdirEach(dir string, mode fs.FileMode) error {
	p := ""
	for _, c := range strings.Split(strings.Trim(dir, "/"), "/") {
		p += "/" + c
		if err := e.Root.MkdirAll(p, mode, 0, 0); err != nil {
			return err
		}
	}
	return nil
}

// hasSensitiveKey tells whether a map or list holds a key whose value may
// be a secret (instance.IsSensitiveKey, or one ending in "_private").
func hasSensitiveKey(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if instance.IsSensitiveKey(k) || strings.HasSuffix(strings.ToLower(k), "_private") || hasSensitiveKey(x) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if hasSensitiveKey(x) {
				return true
			}
		}
	}
	return false
}

// PyYAML's emitter, for the files cloud-init writes with yaml.dump: salt's
// minion and grains (safeyaml.dumps: indent 4, "---" and "..."), puppet's
// csr_attributes.yaml (yaml.dump: indent 2). It is the port in
// cmd/earlyinit/pyyaml.go (which `earlyinit status --format yaml` uses),
// with the indent a parameter: block mappings with sorted keys, block
// sequences, empty collections in flow style, scalars in the style PyYAML
// picks, folded at 80 columns as it folds them, for values made of
// map[string]any, []any, string, float64, int, bool and nil.

// pyYAMLDump is yaml.dump(v, indent=indent, default_flow_style=False),
// with explicit_start and explicit_end when explicit (safeyaml.dumps).
func pyYAMLDump(v any, indent int, explicit bool) string {
	e := &pyEmitter{step: indent, indent: -1, whitespace: true, indention: true}
	if explicit {
		e.writeIndent()
		e.writeIndicator("---", true, false, false)
	}
	e.node(v, false, false)
	if explicit {
		e.indent = 0
		e.writeIndent()
		e.writeIndicator("...", true, false, false)
	} else if _, ok := v.(map[string]any); !ok {
		if _, ok := v.([]any); !ok {
			// A scalar document is open-ended: PyYAML ends it.
			e.indent = 0
			e.writeIndent()
			e.writeIndicator("...", true, false, false)
		}
	}
	e.writeIndent()
	return e.out.String()
}

// pyFloatRepr is Python's repr of a float.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	a := math.Abs(f)
	if a != 0 && (a >= 1e16 || a < 1e-4) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// pyEmitter is PyYAML's Emitter state, as its write_* methods use it.
type pyEmitter struct {
	step                  int // the dump's indent (PyYAML's best_indent)
	out                   strings.Builder
	indent                int // -1: PyYAML's None
	column                int
	whitespace, indention bool
}

const pyBestWidth = 80

func (e *pyEmitter) write(s string) {
	e.out.WriteString(s)
	e.column += utf8.RuneCountInString(s)
}

func (e *pyEmitter) writeIndicator(ind string, needWhitespace, whitespace, indention bool) {
	if !e.whitespace && needWhitespace {
		ind = " " + ind
	}
	e.whitespace = whitespace
	e.indention = e.indention && indention
	e.write(ind)
}

func (e *pyEmitter) writeIndent() {
	indent := max(e.indent, 0)
	if !e.indention || e.column > indent || (e.column == indent && !e.whitespace) {
		e.writeLineBreak()
	}
	if e.column < indent {
		e.whitespace = true
		e.write(strings.Repeat(" ", indent-e.column))
	}
}

func (e *pyEmitter) writeLineBreak() {
	e.whitespace, e.indention = true, true
	e.out.WriteByte('\n')
	e.column = 0
}

// node emits v: mapping tells that it is a mapping's value (a sequence
// there is not indented), key that it is a simple key.
func (e *pyEmitter) node(v any, mapping, key bool) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			e.writeIndicator("{", true, true, false)
			e.writeIndicator("}", false, false, false)
			return
		}
		saved := e.indent
		e.increaseIndent(false, false)
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e.writeIndent()
			if a := pyAnalyze(k); len(k) < 128 && !a.empty && !a.multiline {
				e.node(k, true, true)
				e.writeIndicator(":", false, false, false)
			} else {
				e.writeIndicator("?", true, false, true)
				e.node(k, true, false)
				e.writeIndent()
				e.writeIndicator(":", true, false, true)
			}
			e.node(x[k], true, false)
		}
		e.indent = saved
	case []any:
		if len(x) == 0 {
			e.writeIndicator("[", true, true, false)
			e.writeIndicator("]", false, false, false)
			return
		}
		saved := e.indent
		e.increaseIndent(false, mapping && !e.indention)
		for _, item := range x {
			e.writeIndent()
			e.writeIndicator("-", true, false, true)
			e.node(item, false, false)
		}
		e.indent = saved
	default:
		text, plainOK := pyScalar(v)
		saved := e.indent
		e.increaseIndent(true, false)
		e.scalar(text, plainOK, key)
		e.indent = saved
	}
}

func (e *pyEmitter) increaseIndent(flow, indentless bool) {
	switch {
	case e.indent < 0 && flow:
		e.indent = e.step
	case e.indent < 0:
		e.indent = 0
	case !indentless:
		e.indent += e.step
	}
}

// pyScalar is a scalar's text as PyYAML's safe representer gives it, and
// whether it may be written plain: it reads back as itself (a string
// that would read as a boolean, a number or null may not).
func pyScalar(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, pyResolvesToStr(x)
	case nil:
		return "null", true
	case bool:
		if x {
			return "true", true
		}
		return "false", true
	case int:
		return fmt.Sprint(x), true
	case float64:
		s := strings.ToLower(pyFloatRepr(x))
		switch s {
		case "inf":
			s = ".inf"
		case "-inf":
			s = "-.inf"
		case "nan":
			s = ".nan"
		}
		if !strings.Contains(s, ".") && strings.Contains(s, "e") {
			s = strings.Replace(s, "e", ".0e", 1)
		}
		return s, true
	}
	return fmt.Sprint(v), false
}

// PyYAML's implicit resolvers (yaml/resolver.py): a plain scalar matching
// one of them reads as that type. Python's $ also matches before a final
// newline, hence \n? (such a scalar is never plain anyway).
var pyImplicit = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(?:` +
		`yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF` +
		`|[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)` +
		`|[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+` +
		`|<<|~|null|Null|NULL|` +
		`|[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?` +
		`|=)\n?$`)
})

func pyResolvesToStr(s string) bool { return !pyImplicit().MatchString(s) }

// pyAnalysis is PyYAML's ScalarAnalysis, the parts the style choice uses.
type pyAnalysis struct {
	empty, multiline                                   bool
	allowFlowPlain, allowBlockPlain, allowSingleQuoted bool
}

func pyBreak(r rune) bool { return r == '\n' || r == '\x85' || r == '\u2028' || r == '\u2029' }

func pySpaceOrBreak(r rune) bool {
	return r == 0 || r == ' ' || r == '\t' || r == '\r' || pyBreak(r)
}

// pyAnalyze is PyYAML's Emitter.analyze_scalar, without allow_unicode (as
// cloud-init dumps): any character outside printable ASCII is special.
func pyAnalyze(s string) pyAnalysis {
	if s == "" {
		return pyAnalysis{empty: true, allowBlockPlain: true, allowSingleQuoted: true}
	}
	rs := []rune(s)
	var blockInd, flowInd, lineBreaks, special, leadingSpace, leadingBreak, trailingSpace, trailingBreak, breakSpace, spaceBreak bool
	if strings.HasPrefix(s, "---") || strings.HasPrefix(s, "...") {
		blockInd, flowInd = true, true
	}
	preceded := true
	followed := len(rs) == 1 || pySpaceOrBreak(rs[1])
	prevSpace, prevBreak := false, false
	for i, ch := range rs {
		if i == 0 {
			if strings.ContainsRune("#,[]{}&*!|>'\"%@`", ch) {
				flowInd, blockInd = true, true
			}
			if ch == '?' || ch == ':' {
				flowInd = true
				if followed {
					blockInd = true
				}
			}
			if ch == '-' && followed {
				flowInd, blockInd = true, true
			}
		} else {
			if strings.ContainsRune(",?[]{}", ch) {
				flowInd = true
			}
			if ch == ':' {
				flowInd = true
				if followed {
					blockInd = true
				}
			}
			if ch == '#' && preceded {
				flowInd, blockInd = true, true
			}
		}
		if pyBreak(ch) {
			lineBreaks = true
		}
		if !(ch == '\n' || (ch >= 0x20 && ch <= 0x7e)) {
			special = true
		}
		switch {
		case ch == ' ':
			if i == 0 {
				leadingSpace = true
			}
			if i == len(rs)-1 {
				trailingSpace = true
			}
			if prevBreak {
				breakSpace = true
			}
			prevSpace, prevBreak = true, false
		case pyBreak(ch):
			if i == 0 {
				leadingBreak = true
			}
			if i == len(rs)-1 {
				trailingBreak = true
			}
			if prevSpace {
				spaceBreak = true
			}
			prevSpace, prevBreak = false, true
		default:
			prevSpace, prevBreak = false, false
		}
		preceded = pySpaceOrBreak(ch)
		followed = i+2 >= len(rs) || pySpaceOrBreak(rs[i+2])
	}
	a := pyAnalysis{multiline: lineBreaks, allowFlowPlain: true, allowBlockPlain: true, allowSingleQuoted: true}
	if leadingSpace || leadingBreak || trailingSpace || trailingBreak {
		a.allowFlowPlain, a.allowBlockPlain = false, false
	}
	if breakSpace {
		a.allowFlowPlain, a.allowBlockPlain, a.allowSingleQuoted = false, false, false
	}
	if spaceBreak || special {
		a.allowFlowPlain, a.allowBlockPlain, a.allowSingleQuoted = false, false, false
	}
	if lineBreaks {
		a.allowFlowPlain, a.allowBlockPlain = false, false
	}
	if flowInd {
		a.allowFlowPlain = false
	}
	if blockInd {
		a.allowBlockPlain = false
	}
	return a
}

// scalar is PyYAML's choose_scalar_style and process_scalar, in block
// context.
func (e *pyEmitter) scalar(text string, plainOK, key bool) {
	a := pyAnalyze(text)
	split := !key
	switch {
	case plainOK && !(key && (a.empty || a.multiline)) && a.allowBlockPlain:
		e.writePlain(text, split)
	case a.allowSingleQuoted && !(key && a.multiline):
		e.writeSingleQuoted(text, split)
	default:
		e.writeDoubleQuoted(text, split)
	}
}

func (e *pyEmitter) writePlain(text string, split bool) {
	if text == "" {
		return
	}
	if !e.whitespace {
		e.write(" ")
	}
	e.whitespace, e.indention = false, false
	rs := []rune(text)
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(rs); end++ {
		var ch rune = -1
		if end < len(rs) {
			ch = rs[end]
		}
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > pyBestWidth && split {
					e.writeIndent()
					e.whitespace, e.indention = false, false
				} else {
					e.write(string(rs[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !pyBreak(ch) {
				e.writeBreaks(rs[start:end])
				e.whitespace, e.indention = false, false
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || pyBreak(ch) {
				e.write(string(rs[start:end]))
				start = end
			}
		}
		if ch != -1 {
			spaces, breaks = ch == ' ', pyBreak(ch)
		}
	}
}

// writeBreaks writes a run of line breaks as PyYAML does in a plain or
// single-quoted scalar: a first "\n" twice (the first one folds), then the
// indentation.
func (e *pyEmitter) writeBreaks(brs []rune) {
	if brs[0] == '\n' {
		e.writeLineBreak()
	}
	for _, br := range brs {
		if br == '\n' {
			e.writeLineBreak()
		} else {
			e.out.WriteRune(br)
			e.whitespace, e.indention, e.column = true, true, 0
		}
	}
	e.writeIndent()
}

func (e *pyEmitter) writeSingleQuoted(text string, split bool) {
	e.writeIndicator("'", true, false, false)
	rs := []rune(text)
	spaces, breaks := false, false
	start := 0
	for end := 0; end <= len(rs); end++ {
		var ch rune = -1
		if end < len(rs) {
			ch = rs[end]
		}
		switch {
		case spaces:
			if ch != ' ' {
				if start+1 == end && e.column > pyBestWidth && split && start != 0 && end != len(rs) {
					e.writeIndent()
				} else {
					e.write(string(rs[start:end]))
				}
				start = end
			}
		case breaks:
			if ch == -1 || !pyBreak(ch) {
				e.writeBreaks(rs[start:end])
				start = end
			}
		default:
			if ch == -1 || ch == ' ' || pyBreak(ch) || ch == '\'' {
				if start < end {
					e.write(string(rs[start:end]))
					start = end
				}
			}
		}
		if ch == '\'' {
			e.write("''")
			start = end + 1
		}
		if ch != -1 {
			spaces, breaks = ch == ' ', pyBreak(ch)
		}
	}
	e.writeIndicator("'", false, false, false)
}

// pyEscape is PyYAML's ESCAPE_REPLACEMENTS: the letter after the
// backslash for r, or "".
func pyEscape(r rune) string {
	switch r {
	case 0:
		return "0"
	case '\x07':
		return "a"
	case '\x08':
		return "b"
	case '\t':
		return "t"
	case '\n':
		return "n"
	case '\x0b':
		return "v"
	case '\x0c':
		return "f"
	case '\r':
		return "r"
	case '\x1b':
		return "e"
	case '"':
		return "\""
	case '\\':
		return "\\"
	case '\x85':
		return "N"
	case '\xa0':
		return "_"
	case '\u2028':
		return "L"
	case '\u2029':
		return "P"
	}
	return ""
}

func (e *pyEmitter) writeDoubleQuoted(text string, split bool) {
	e.writeIndicator("\"", true, false, false)
	rs := []rune(text)
	start := 0
	for end := 0; end <= len(rs); end++ {
		var ch rune = -1
		if end < len(rs) {
			ch = rs[end]
		}
		if ch == -1 || strings.ContainsRune("\"\\\x85\u2028\u2029\uFEFF", ch) || !(ch >= 0x20 && ch <= 0x7e) {
			if start < end {
				e.write(string(rs[start:end]))
				start = end
			}
			if ch != -1 {
				esc := pyEscape(ch)
				switch {
				case esc != "":
					esc = "\\" + esc
				case ch <= 0xff:
					esc = fmt.Sprintf("\\x%02X", ch)
				case ch <= 0xffff:
					esc = fmt.Sprintf("\\u%04X", ch)
				default:
					esc = fmt.Sprintf("\\U%08X", ch)
				}
				e.write(esc)
				start = end + 1
			}
		}
		if end > 0 && end < len(rs)-1 && (ch == ' ' || start >= end) && e.column+(end-start) > pyBestWidth && split {
			data := string(rs[start:end]) + "\\"
			if start < end {
				start = end
			}
			e.write(data)
			e.writeIndent()
			e.whitespace, e.indention = false, false
			if rs[start] == ' ' {
				e.write("\\")
			}
		}
	}
	e.writeIndicator("\"", false, false, false)
}
