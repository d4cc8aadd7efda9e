package cfgmgmt

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/pyyaml"
)

// puppetConf is cc_puppet's conf: each section of c set in puppet.conf
// (which must exist), ca_cert written to <ssl_dir>/certs/ca.pem.
func puppetConf(e *core.Env, c *ccfg.PuppetConf, confFile, sslDir, puppetUser string) error {
	names := slices.Collect(maps.Keys(c.Sections))
	if c.CACert != nil {
		names = append(names, "ca_cert")
	}
	if len(names) == 0 {
		return nil
	}
	// In sorted order: a Go map keeps no order (cloud-init goes in
	// YAML's).
	slices.Sort(names)
	old, fi, err := readSmall(e, confFile, 1<<20)
	if err != nil {
		return fmt.Errorf("puppet.conf: %w", err)
	}
	ini, err := parsePyINI(string(old))
	if err != nil {
		return fmt.Errorf("puppet.conf: %s: %w", confFile, err)
	}
	fqdn := ""
	for _, name := range names {
		key := "puppet.conf." + name
		if name == "ca_cert" {
			pem := *c.CACert
			uid, gid, err := core.ResolveOwner(e.Root, puppetUser+":root")
			if err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			if fi, err := e.Root.Stat(sslDir); err == nil && fi.IsDir() {
				e.Logf("puppet: %s exists: its mode and owner are kept", sslDir)
			}
			if err := e.Root.MkdirAll(sslDir, 0o771, uid, gid); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			if err := e.Root.MkdirAll(sslDir+"/certs", 0o755, uid, gid); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			if err := e.Root.WriteFile(sslDir+"/certs/ca.pem", []byte(pem), 0o644, uid, gid); err != nil {
				return fmt.Errorf("%s: %w", key, err)
			}
			continue
		}
		sec := c.Sections[name]
		if !iniSectionName(name) {
			return fmt.Errorf("%s: not a section name for puppet.conf", key)
		}
		for _, o := range core.SortedKeys(sec) {
			v, err := iniValue(key+"."+o, sec[o])
			if err != nil {
				return err
			}
			if !iniOptionName(o) {
				return fmt.Errorf("%s.%s: not a key for puppet.conf", key, o)
			}
			if o == "certname" {
				if fqdn == "" {
					fqdn = puppetFQDN(e)
				}
				v = strings.ToLower(strings.ReplaceAll(strings.ReplaceAll(v, "%f", fqdn), "%i", e.InstanceID))
				if !core.IniSafe(v) {
					return fmt.Errorf("%s.%s: has a control character once expanded", key, o)
				}
			}
			ini.set(name, o, v)
		}
	}
	uid, gid := statIDs(fi)
	if err := e.Root.WriteFile(confFile+".old", old, fi.Mode().Perm(), uid, gid); err != nil {
		return fmt.Errorf("puppet.conf: %w", err)
	}
	if err := e.Root.WriteFile(confFile, []byte(ini.String()), 0o644, 0, 0); err != nil {
		return fmt.Errorf("puppet.conf: %w", err)
	}
	e.Logf("puppet: %s written (the old one is %s.old)", confFile, confFile)
	return nil
}

// pyINI is a configuration file as Python's configparser.RawConfigParser
// reads and writes it (cloud-init's DefaultingConfigParser): sections in
// file order, keys lower-cased in their order, "key = value" lines, a
// blank line after each section, [DEFAULT] first, comments dropped.
type pyINI struct {
	defaults *iniSection
	sections []*iniSection
}

type iniSection struct {
	name string
	keys []string
	vals map[string]string
}

func (s *iniSection) set(k, v string) {
	if _, ok := s.vals[k]; !ok {
		s.keys = append(s.keys, k)
	}
	s.vals[k] = v
}

// parsePyINI reads content as cloud-init reads puppet.conf: each line's
// leading blanks removed first (so there are no continuation lines), then
// RawConfigParser's rules (strict: a section or key twice is an error; a
// line that is no section, key or comment is an error; "=" or ":"
// delimits).
func parsePyINI(content string) (*pyINI, error) {
	p := &pyINI{defaults: &iniSection{name: "DEFAULT", vals: map[string]string{}}}
	var cur *iniSection
	seenSec := map[string]bool{}
	seenOpt := map[string]bool{}
	var errs []error
	for i, line := range strings.Split(content, "\n") {
		line = strings.TrimLeft(line, " \t\r\f\v")
		v := strings.TrimSpace(line)
		if v == "" || strings.HasPrefix(v, "#") || strings.HasPrefix(v, ";") {
			continue
		}
		if strings.HasPrefix(v, "[") {
			if end := strings.LastIndex(v, "]"); end > 1 {
				name := v[1:end]
				switch {
				case seenSec[name] && name != "DEFAULT":
					return nil, fmt.Errorf("line %d: section %q already exists", i+1, name)
				case name == "DEFAULT":
					cur = p.defaults
				default:
					cur = p.section(name, true)
				}
				seenSec[name] = true
				continue
			}
		}
		if cur == nil {
			return nil, fmt.Errorf("line %d: no section header before it", i+1)
		}
		d := strings.IndexAny(v, "=:")
		if d <= 0 || strings.TrimSpace(v[:d]) == "" {
			errs = append(errs, fmt.Errorf("line %d: not a key = value line", i+1))
			continue
		}
		k := strings.ToLower(strings.TrimRight(v[:d], " \t"))
		if seenOpt[cur.name+"\x00"+k] {
			return nil, fmt.Errorf("line %d: key %q already set in section %q", i+1, k, cur.name)
		}
		seenOpt[cur.name+"\x00"+k] = true
		cur.set(k, strings.TrimSpace(v[d+1:]))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

func (p *pyINI) section(name string, add bool) *iniSection {
	for _, s := range p.sections {
		if s.name == name {
			return s
		}
	}
	if !add {
		return nil
	}
	s := &iniSection{name: name, vals: map[string]string{}}
	p.sections = append(p.sections, s)
	return s
}

// set is DefaultingConfigParser.set: the section is added when missing.
func (p *pyINI) set(section, key, val string) {
	p.section(section, true).set(strings.ToLower(key), val)
}

// String is RawConfigParser.write.
func (p *pyINI) String() string {
	var b strings.Builder
	write := func(s *iniSection) {
		fmt.Fprintf(&b, "[%s]\n", s.name)
		for _, k := range s.keys {
			fmt.Fprintf(&b, "%s = %s\n", k, s.vals[k])
		}
		b.WriteString("\n")
	}
	if len(p.defaults.keys) > 0 {
		write(p.defaults)
	}
	for _, s := range p.sections {
		write(s)
	}
	return b.String()
}

// iniSectionName is a section name configparser reads back as itself
// (not DEFAULT, no "]").
func iniSectionName(s string) bool {
	return s != "" && core.IniSafe(s) && !strings.ContainsAny(s, "[]") && strings.TrimSpace(s) == s && !strings.EqualFold(s, "default")
}

// iniOptionName is a key configparser reads back as itself.
func iniOptionName(s string) bool {
	return s != "" && core.IniSafe(s) && !strings.ContainsAny(s, "=:[") && strings.TrimSpace(s) == s &&
		!strings.HasPrefix(s, "#") && !strings.HasPrefix(s, ";")
}

// iniValue is a conf value's text: a string as is, a number as Python
// writes it, a boolean as puppet reads one (true, false); no control
// characters.
func iniValue(key string, v any) (string, error) {
	var s string
	switch t := v.(type) {
	case string:
		s = t
	case bool:
		s = fmt.Sprint(t)
	case int:
		s = fmt.Sprint(t)
	case float64:
		s = pyyaml.FloatRepr(t)
	default:
		return "", fmt.Errorf("%s: want a string, number or boolean, got %s", key, core.Kind(v))
	}
	if !core.IniSafe(s) {
		return "", fmt.Errorf("%s: has a control character", key)
	}
	return s, nil
}
