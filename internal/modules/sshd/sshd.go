package sshd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// ConfigFile is sshd's configuration file.
const ConfigFile = "/etc/ssh/sshd_config"

// PwauthDropIn is earlyinit's drop-in in sshd_config.d, for every sshd
// setting it makes (ssh_pwauth, ssh_keys' certificates): named to be read
// first.
const PwauthDropIn = "00-earlyinit.conf"

// DropIn is PwauthDropIn's path.
const DropIn = "/etc/ssh/sshd_config.d/" + PwauthDropIn

// sshdDropInHeader is DropIn's first line.
const DropInHeader = "# Written by earlyinit from cloud-config (ssh_pwauth, ssh_keys certificates); sshd reads it before the other drop-ins."

// legacyDropIns are the drop-ins earlier earlyinit versions wrote, by
// keyword: removed when the keyword is set (their lines now live in
// DropIn).
var legacyDropIns = map[string][]string{
	"passwordauthentication": {"/etc/ssh/sshd_config.d/50-earlyinit-pwauth.conf"},
	"hostcertificate": {
		"/etc/ssh/sshd_config.d/50-earlyinit-hostcert-rsa.conf", "/etc/ssh/sshd_config.d/50-earlyinit-hostcert-ecdsa.conf",
		"/etc/ssh/sshd_config.d/50-earlyinit-hostcert-ed25519.conf", "/etc/ssh/sshd_config.d/50-earlyinit-hostcert-dsa.conf",
	},
}

// sshdOption is one sshd_config setting.
type Option struct {
	Key, Value string
	// Multi: the keyword takes many lines (HostCertificate); the value is
	// added unless a line has it.
	Multi bool
}

// checkSshdOption refuses a keyword or value that is not one sshd_config
// token: a keyword is letters (not Include or Match, which would change
// what the lines around mean), a value printable ASCII without blanks,
// quotes, "#", "\" or "=" at its start.
func CheckOption(o Option) error {
	if k := strings.ToLower(o.Key); k == "" || k == "include" || k == "match" || !core.AlnumOr(k, "") || strings.ContainsAny(k, "0123456789") {
		return fmt.Errorf("sshd_config keyword %q: not a keyword", o.Key)
	}
	if o.Value == "" || len(o.Value) > 1024 || o.Value[0] == '=' || o.Value[0] == '#' {
		return fmt.Errorf("sshd_config %s value %q: not one sshd_config word", o.Key, o.Value)
	}
	for i := 0; i < len(o.Value); i++ {
		if c := o.Value[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '\\' {
			return fmt.Errorf("sshd_config %s value %q: not one sshd_config word", o.Key, o.Value)
		}
	}
	return nil
}

// sshdLine is one line of an sshd_config file: its keyword (lower case,
// "" for blank and comment lines) and value.
type sshdLine struct {
	text, key, Value string
}

// parseSshdLine splits a line as sshd does: leading blanks, the keyword up
// to a blank or "=", then the argument(s).
func parseSshdLine(text string) sshdLine {
	l := sshdLine{text: text}
	t := strings.TrimLeft(text, " \t\r\f\v")
	if t == "" || t[0] == '#' {
		return l
	}
	end := strings.IndexAny(t, " \t\r\f\v=")
	if end < 0 {
		l.key = strings.ToLower(t)
		return l
	}
	l.key = strings.ToLower(t[:end])
	rest := strings.TrimLeft(t[end:], " \t\r\f\v")
	rest = strings.TrimPrefix(rest, "=")
	l.Value = strings.TrimSpace(rest)
	return l
}

// sshdRef is a keyword line where sshd reads it: file and line index.
type sshdRef struct {
	File string
	Line int
	Key  string
	// match is 0 at the top level, 1 in a Match block, 2 in "Match all".
	Match int
}

// Conf is sshd's configuration as sshd reads it, from e.Root.
type Conf struct {
	e     *core.Env
	Lines map[string][]sshdLine // by path as sshd opens it
	Order []sshdRef             // keyword lines in reading order
	// dropInAt is the index in order where DropIn's lines start (or
	// would), -1 when the top level does not include it.
	dropInAt int
	visits   int
}

// loadSshdConf reads ConfigFile and what it includes. ok is false when
// there is no ConfigFile.
func Load(e *core.Env) (c *Conf, ok bool, err error) {
	c = &Conf{e: e, Lines: map[string][]sshdLine{}, dropInAt: -1}
	if _, err := e.Root.Stat(ConfigFile); errors.Is(err, fs.ErrNotExist) {
		return c, false, nil
	}
	if err := c.read(ConfigFile, 0, 0); err != nil {
		return nil, true, err
	}
	return c, true, nil
}

// read adds file's keyword lines to c.order, in match state match, as
// sshd reads them.
func (c *Conf) read(file string, depth, match int) error {
	if depth > sshdMaxDepth {
		return fmt.Errorf("%s: Include nested deeper than %d", file, sshdMaxDepth)
	}
	if c.visits++; len(c.Lines) >= sshdMaxFiles || c.visits > sshdMaxVisits {
		return fmt.Errorf("%s: more than %d sshd_config files, or %d Includes", file, sshdMaxFiles, sshdMaxVisits)
	}
	lines, ok := c.Lines[file]
	if !ok {
		b, err := c.e.Root.ReadFile(file)
		if errors.Is(err, fs.ErrNotExist) && file == DropIn {
			b, err = nil, nil
		}
		if err != nil {
			return err
		}
		text := strings.TrimSuffix(string(b), "\n")
		if text != "" {
			for _, t := range strings.Split(text, "\n") {
				lines = append(lines, parseSshdLine(t))
			}
		}
		c.Lines[file] = lines
	}
	for i, l := range lines {
		switch l.key {
		case "":
			continue
		case "match":
			match = 1
			if strings.EqualFold(l.Value, "all") {
				match = 2
			}
			continue
		case "include":
			for _, pat := range strings.Fields(l.Value) {
				pat = strings.Trim(pat, `"`)
				if pat == "" {
					continue
				}
				if !strings.HasPrefix(pat, "/") {
					pat = "/etc/ssh/" + pat
				}
				pat = path.Clean(pat)
				files, err := c.glob(pat)
				if err != nil {
					return fmt.Errorf("%s line %d: Include: %w", file, i+1, err)
				}
				if match == 0 && c.dropInAt < 0 && globMatch(pat, DropIn) {
					if !slices.Contains(files, DropIn) {
						files = append(files, DropIn)
						sort.Strings(files)
					}
				}
				for _, f := range files {
					if f == DropIn && match == 0 && c.dropInAt < 0 {
						c.dropInAt = len(c.Order)
					}
					if err := c.read(f, depth+1, match); err != nil {
						return err
					}
				}
			}
			continue
		}
		c.Order = append(c.Order, sshdRef{File: file, Line: i, Key: l.key, Match: match})
	}
	return nil
}

// globMatch tells whether name matches the glob pattern pat as glob(3)
// does: component by component, "*" not matching a leading ".".
func globMatch(pat, name string) bool {
	ps, ns := strings.Split(pat, "/"), strings.Split(name, "/")
	if len(ps) != len(ns) {
		return false
	}
	for i := range ps {
		if ok, _ := path.Match(ps[i], ns[i]); !ok || ns[i] != "" && ns[i][0] == '.' && (ps[i] == "" || ps[i][0] != '.') {
			return false
		}
	}
	return true
}

// glob is glob(3) on pat in the root: the sorted names of regular files
// and links that match; nothing for no match, as sshd's Include.
func (c *Conf) glob(pat string) ([]string, error) {
	if !strings.ContainsAny(pat, "*?[") {
		if fi, err := c.e.Root.Stat(pat); err == nil && !fi.IsDir() {
			return []string{path.Clean(pat)}, nil
		}
		return nil, nil
	}
	dirs := []string{"/"}
	comps := strings.Split(strings.Trim(path.Clean(pat), "/"), "/")
	for i, comp := range comps {
		var next []string
		for _, d := range dirs {
			if !strings.ContainsAny(comp, "*?[") {
				next = append(next, path.Join(d, comp))
				continue
			}
			if _, err := path.Match(comp, ""); err != nil {
				return nil, fmt.Errorf("pattern %q: %w", pat, err)
			}
			ents, err := os.ReadDir(c.e.Root.Path(d))
			if err != nil {
				continue
			}
			for _, ent := range ents {
				n := ent.Name()
				if ok, _ := path.Match(comp, n); ok && (n[0] != '.' || comp[0] == '.') {
					next = append(next, path.Join(d, n))
				}
			}
		}
		if i < len(comps)-1 {
			dirs = nil
			for _, n := range next {
				if fi, err := c.e.Root.Stat(n); err == nil && fi.IsDir() {
					dirs = append(dirs, n)
				}
			}
			continue
		}
		var files []string
		for _, n := range next {
			if fi, err := c.e.Root.Stat(n); err == nil && !fi.IsDir() {
				files = append(files, n)
			}
		}
		if len(files) > sshdMaxFiles {
			return nil, fmt.Errorf("pattern %q: more than %d files", pat, sshdMaxFiles)
		}
		sort.Strings(files)
		return files, nil
	}
	return nil, nil
}

// setSshdOptions makes each of opts the value sshd uses (see above) and
// tells whether any file changed.
func setSshdOptions(e *core.Env, opts []Option) (changed bool, err error) {
	for _, o := range opts {
		if err := CheckOption(o); err != nil {
			return false, err
		}
	}
	c, ok, err := Load(e)
	if err != nil {
		return false, err
	}
	dirty := map[string]bool{}
	if !ok {
		e.Logf("sshd: no %s: the settings go to %s only", ConfigFile, DropIn)
		c.Lines[DropIn], err = readSshdLines(e, DropIn)
		if err != nil {
			return false, err
		}
		c.dropInAt = 0
	}
	for _, o := range opts {
		c.set(o, dirty)
		for _, old := range legacyDropIns[strings.ToLower(o.Key)] {
			if e.Root.Exists(old) {
				e.Logf("sshd: removing %s (written by an earlier earlyinit; now in %s)", old, DropIn)
				if err := e.Root.Remove(old); err != nil {
					return changed, err
				}
				changed = true
			}
		}
	}
	files := make([]string, 0, len(dirty))
	for f := range dirty {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		w, err := writeSshdLines(e, f, c.Lines[f])
		if err != nil {
			return changed, err
		}
		changed = changed || w
	}
	return changed, nil
}

// set applies o to c's lines, marking the files it changes dirty.
func (c *Conf) set(o Option, dirty map[string]bool) {
	key := strings.ToLower(o.Key)
	line := o.Key + " " + o.Value
	// DropIn's own lines of the keyword: one, with the value.
	if c.dropInAt >= 0 {
		lines := c.Lines[DropIn]
		if len(lines) == 0 {
			lines = []sshdLine{parseSshdLine(DropInHeader)}
		}
		found := false
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			switch {
			case l.key != key:
			case o.Multi && l.Value != o.Value:
			case !found:
				found = true
				lines[i] = parseSshdLine(line)
			default:
				lines = append(lines[:i], lines[i+1:]...)
				i--
			}
		}
		if !found {
			lines = append(lines, parseSshdLine(line))
		}
		c.Lines[DropIn] = lines
		dirty[DropIn] = true
	}
	if o.Multi {
		if c.dropInAt < 0 && !c.has(key, o.Value) {
			c.insertTop(line)
			dirty[ConfigFile] = true
		}
		return
	}
	// The first global line sshd reads before DropIn (anywhere when
	// it does not read DropIn), and every "Match all" line.
	first := true
	for i, r := range c.Order {
		if r.Key != key || r.File == DropIn {
			continue
		}
		before := c.dropInAt < 0 || i < c.dropInAt
		if (r.Match == 0 && first && before) || r.Match == 2 {
			if r.Match == 0 {
				first = false
			}
			l := c.Lines[r.File][r.Line]
			if l.Value != o.Value {
				c.e.Logf("sshd: %s line %d: %s set to %s (it said %s)", r.File, r.Line+1, o.Key, o.Value, l.Value)
				c.Lines[r.File][r.Line] = c.rewrite(l, o.Value)
				dirty[r.File] = true
			}
		}
	}
	if first && c.dropInAt < 0 {
		c.insertTop(line)
		dirty[ConfigFile] = true
	}
}

// has tells whether a global line sets key to value.
func (c *Conf) has(key, value string) bool {
	for _, r := range c.Order {
		if r.Key == key && r.Match != 1 && c.Lines[r.File][r.Line].Value == value {
			return true
		}
	}
	return false
}

// rewrite is l with value: its indent and keyword kept.
func (c *Conf) rewrite(l sshdLine, value string) sshdLine {
	t := strings.TrimLeft(l.text, " \t\r\f\v")
	indent := l.text[:len(l.text)-len(t)]
	kw := t
	if end := strings.IndexAny(t, " \t\r\f\v="); end >= 0 {
		kw = t[:end]
	}
	return parseSshdLine(indent + kw + " " + value)
}

// insertTop adds line to ConfigFile's top level: before its first Match
// line and the comment lines right above it, else at the end.
func (c *Conf) insertTop(line string) {
	lines := c.Lines[ConfigFile]
	at := len(lines)
	for i, l := range lines {
		if l.key == "match" {
			at = i
			for at > 0 && strings.HasPrefix(strings.TrimSpace(lines[at-1].text), "#") {
				at--
			}
			break
		}
	}
	c.e.Logf("sshd: %s: %s added at line %d", ConfigFile, strings.Fields(line)[0], at+1)
	lines = append(lines[:at], append([]sshdLine{parseSshdLine(line)}, lines[at:]...)...)
	c.Lines[ConfigFile] = lines
	// Later references into ConfigFile move down a line.
	for i, r := range c.Order {
		if r.File == ConfigFile && r.Line >= at {
			c.Order[i].Line++
		}
	}
}

// readSshdLines reads name's lines (none if it does not exist).
func readSshdLines(e *core.Env, name string) ([]sshdLine, error) {
	b, err := e.Root.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var lines []sshdLine
	if text := strings.TrimSuffix(string(b), "\n"); text != "" {
		for _, t := range strings.Split(text, "\n") {
			lines = append(lines, parseSshdLine(t))
		}
	}
	return lines, nil
}

// writeSshdLines writes lines to name when they differ from its content,
// atomically, at the target of a symlink, keeping mode and owner (a new
// file is 0644 root); it tells whether it wrote.
func writeSshdLines(e *core.Env, name string, lines []sshdLine) (bool, error) {
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.text)
		b.WriteByte('\n')
	}
	target, err := linkTarget(e, name)
	if err != nil {
		return false, err
	}
	mode, uid, gid := fs.FileMode(0o644), 0, 0
	if fi, err := e.Root.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return false, fmt.Errorf("%s: not a regular file", target)
		}
		old, err := e.Root.ReadFile(target)
		if err != nil {
			return false, err
		}
		if string(old) == b.String() {
			return false, nil
		}
		mode = fi.Mode().Perm()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(st.Uid), int(st.Gid)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	} else if err := e.Root.MkdirAll(path.Dir(target), 0o755, 0, 0); err != nil {
		return false, err
	}
	if err := e.Root.WriteFile(target, []byte(b.String()), mode, uid, gid); err != nil {
		return false, err
	}
	return true, nil
}

// linkTarget follows name's symlinks inside the root (at most 40).
func linkTarget(e *core.Env, name string) (string, error) {
	for i := 0; i < 40; i++ {
		fi, err := e.Root.Stat(name)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return name, nil
		}
		t, err := e.Root.Readlink(name)
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(t, "/") {
			t = path.Join(path.Dir(name), t)
		}
		name = path.Clean(t)
	}
	return "", fmt.Errorf("%s: too many levels of symbolic links", name)
}

// updateSshd sets opts (what is the cloud-config key, for errors) and
// reloads sshd when a file changed.
func Update(ctx context.Context, e *core.Env, what string, opts []Option) error {
	changed, err := setSshdOptions(e, opts)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if !changed {
		e.Logf("sshd: %s: already set", what)
		return nil
	}
	if !e.Root.Exists(ConfigFile) {
		return nil // no sshd to reload
	}
	return reloadSshd(ctx, e)
}

// sshService is the name of sshd's service: system_info.ssh_svcname,
// else "ssh" on Debian's family and "sshd" on the others (cloud-init's
// distros).
func sshService(e *core.Env) string {
	if s, ok := core.DistroSetting(e, "ssh", "ssh_svcname", func(si *ccfg.SystemInfo) any { return si.SSHSvcname }); ok && core.ValidServiceName(s) {
		return s
	}
	if e.DistroInfo().Family == core.FamilyDebian {
		return "ssh"
	}
	return "sshd"
}

// reloadSshd is handle_ssh_pwauth's restart, only when sshd runs:
// systemctl --no-block reload-or-try-restart (a reload, sshd re-reading
// its configuration without dropping sessions; nothing if it is not
// running), rc-service --ifstarted under OpenRC; with no init running yet
// (the boot stage before sshd starts, always on a first boot), nothing:
// sshd starts with the new configuration.
func reloadSshd(ctx context.Context, e *core.Env) error {
	return e.ServiceAction(ctx, "try-reload", sshService(e))
}

// Bounds of the Include walk: sshd's own depth (SERVCONF_MAX_DEPTH), a
// number of files, and of files read (a file can include itself).
const (
	sshdMaxDepth  = 16
	sshdMaxFiles  = 256
	sshdMaxVisits = 4096
)
