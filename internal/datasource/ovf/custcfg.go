package ovf

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// custConfig is a VMware customization specification (cust.cfg) as
// cloud-init's ConfigFile holds it: every option as "SECTION|option" ->
// value, the DEFAULT section's options in every section, values
// interpolated and trimmed.
//
// The file is read as cloud-init reads it, with Python's configparser
// (strict, "=" or ":" between option and value, "#" and ";" starting a
// comment line, indented lines continuing a value, option names kept as
// written, BasicInterpolation's "%%" and "%(name)s"): a duplicate section
// or option, an option before any section, a line that is no option, a
// bad "%" or a file that is not UTF-8 is an error naming the line, as it
// is an exception in cloud-init. Values are never in an error: the
// PASSWORD section holds the admin password.
type custConfig map[string]string

// Keys are the keys in sorted order.
func (c custConfig) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// countPrefix is ConfigFile.get_count_with_prefix: how many keys start
// with prefix.
func (c custConfig) countPrefix(prefix string) int {
	n := 0
	for k := range c {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

// get is ConfigFile.get(key, None): the value and whether it is set.
func (c custConfig) get(key string) (string, bool) {
	v, ok := c[key]
	return v, ok
}

// cfgSection is one section as read: its options in file order, each
// value as its lines.
type cfgSection struct {
	names  []string
	values map[string][]string
}

func newSection() *cfgSection { return &cfgSection{values: map[string][]string{}} }

func (s *cfgSection) set(name string, v []string) {
	if _, ok := s.values[name]; !ok {
		s.names = append(s.names, name)
	}
	s.values[name] = v
}

// optionRE is configparser's OPTCRE with its default delimiters.
var optionRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(.*?)\s*([=:])\s*(.*)$`)
})

// maxInterpolationDepth is configparser's MAX_INTERPOLATION_DEPTH.
const maxInterpolationDepth = 10

// ParseCustConfig reads a cust.cfg; name is the file's name for errors.
func ParseCustConfig(name string, b []byte) (custConfig, error) {
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("%s: not UTF-8", name)
	}
	// Python reads text with universal newlines.
	text := strings.ReplaceAll(string(b), "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.SplitAfter(text, "\n")
	r := &cfgReader{
		name:     name,
		defaults: newSection(),
		sections: map[string]*cfgSection{},
		added:    map[string]bool{},
	}
	for i, line := range lines {
		if err := r.line(i+1, line); err != nil {
			return nil, err
		}
	}
	if len(r.bad) > 0 {
		return nil, fmt.Errorf("%s: line %s: not an option (name = value) nor a [section]", name, joinInts(r.bad))
	}
	return r.config()
}

// cfgReader is configparser's state while it reads a file: the sections
// read so far, and where in them the last line was.
type cfgReader struct {
	name     string // the file's, for errors
	defaults *cfgSection
	sections map[string]*cfgSection
	order    []string        // the sections but DEFAULT, in file order
	added    map[string]bool // sections and "section\x00option"s read
	cur      *cfgSection
	// sectName and optName are the current section and option ("" for
	// none, as after a section header); indent is the option line's.
	sectName, optName string
	indent            int
	bad               []int // the lines that are no option
}

// line reads line number lineno (with its line break, if any).
func (r *cfgReader) line(lineno int, line string) error {
	if line == "" {
		return nil
	}
	line = strings.TrimSuffix(line, "\n")
	comment := false
	if t := strings.TrimSpace(line); strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";") {
		comment = true
	}
	value := strings.TrimSpace(line)
	if comment {
		value = ""
	}
	if value == "" {
		// An empty line inside a value is part of it (configparser's
		// empty_lines_in_values); a comment line is not.
		if !comment && r.cur != nil && r.optName != "" {
			r.cur.values[r.optName] = append(r.cur.values[r.optName], "")
		}
		return nil
	}
	level := len(line) - len(strings.TrimLeft(line, " \t\v\f"))
	if r.cur != nil && r.optName != "" && level > r.indent {
		r.cur.values[r.optName] = append(r.cur.values[r.optName], value)
		return nil
	}
	r.indent = level
	if h, ok := sectionHeader(value); ok {
		return r.section(lineno, h)
	}
	return r.option(lineno, value)
}

// section starts section h, read at line lineno.
func (r *cfgReader) section(lineno int, h string) error {
	r.sectName = h
	switch {
	case r.sections[h] != nil:
		if r.added[h] {
			return fmt.Errorf("%s: line %d: section [%s] given twice", r.name, lineno, h)
		}
		r.cur = r.sections[h]
	case h == "DEFAULT":
		r.cur = r.defaults
	default:
		r.cur = newSection()
		r.sections[h] = r.cur
		r.order = append(r.order, h)
	}
	r.added[h] = true
	r.optName = ""
	return nil
}

// option reads the option line lineno, whose text, trimmed, is value.
func (r *cfgReader) option(lineno int, value string) error {
	if r.cur == nil {
		return fmt.Errorf("%s: line %d: an option before any [section]", r.name, lineno)
	}
	m := optionRE().FindStringSubmatch(value)
	if m == nil {
		r.bad = append(r.bad, lineno)
		return nil
	}
	if m[1] == "" {
		r.bad = append(r.bad, lineno)
	}
	r.optName = strings.TrimRight(m[1], " \t\n\r\v\f")
	key := r.sectName + "\x00" + r.optName
	if r.added[key] {
		return fmt.Errorf("%s: line %d: option %q of [%s] given twice", r.name, lineno, r.optName, r.sectName)
	}
	r.added[key] = true
	r.cur.set(r.optName, []string{strings.TrimSpace(m[3])})
	return nil
}

// joinValue is each option of s with its lines joined, trailing blanks
// trimmed.
func joinValue(s *cfgSection) map[string]string {
	out := map[string]string{}
	for n, v := range s.values {
		out[n] = strings.TrimRight(strings.Join(v, "\n"), " \t\n\r\v\f")
	}
	return out
}

// config is what was read as a custConfig: every section's options over
// DEFAULT's, interpolated.
func (r *cfgReader) config() (custConfig, error) {
	def := joinValue(r.defaults)
	cfg := custConfig{}
	for _, sect := range r.order {
		s := r.sections[sect]
		vars := map[string]string{}
		for k, v := range def {
			vars[k] = v
		}
		for k, v := range joinValue(s) {
			vars[k] = v
		}
		for opt, raw := range vars {
			v, err := interpolate(raw, vars, 1)
			if err != nil {
				return nil, fmt.Errorf("%s: [%s] %s: %w", r.name, sect, opt, err)
			}
			cfg[strings.TrimSpace(sect+"|"+opt)] = strings.TrimSpace(v)
		}
	}
	return cfg, nil
}

// sectionHeader is configparser's SECTCRE match: "[" then at least one
// character up to the last "]" (text after it is ignored).
func sectionHeader(v string) (string, bool) {
	if !strings.HasPrefix(v, "[") {
		return "", false
	}
	end := strings.LastIndex(v, "]")
	if end < 2 {
		return "", false
	}
	return v[1:end], true
}

// keyRE is BasicInterpolation's _KEYCRE.
var keyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^%\(([^)]+)\)s`) })

// interpolate is BasicInterpolation.before_get: "%%" is "%", "%(name)s"
// the (interpolated) value of option name of the section or DEFAULT; any
// other "%" is an error.
func interpolate(v string, vars map[string]string, depth int) (string, error) {
	if depth > maxInterpolationDepth {
		return "", fmt.Errorf("interpolation deeper than %d levels", maxInterpolationDepth)
	}
	var out strings.Builder
	rest := v
	for rest != "" {
		p := strings.IndexByte(rest, '%')
		if p < 0 {
			out.WriteString(rest)
			break
		}
		out.WriteString(rest[:p])
		rest = rest[p:]
		switch {
		case strings.HasPrefix(rest, "%%"):
			out.WriteByte('%')
			rest = rest[2:]
		case strings.HasPrefix(rest, "%("):
			m := keyRE().FindStringSubmatch(rest)
			if m == nil {
				return "", fmt.Errorf("bad interpolation reference (want %%(name)s)")
			}
			rest = rest[len(m[0]):]
			sub, ok := vars[m[1]]
			if !ok {
				return "", fmt.Errorf("interpolation of %q, which is not set", m[1])
			}
			if strings.Contains(sub, "%") {
				s, err := interpolate(sub, vars, depth+1)
				if err != nil {
					return "", err
				}
				sub = s
			}
			out.WriteString(sub)
		default:
			return "", fmt.Errorf("%q must be followed by %q or %q", "%", "%", "(")
		}
	}
	return out.String(), nil
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
