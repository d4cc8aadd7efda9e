package userdata

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/scalar"
	"github.com/earlyinit/earlyinit/internal/yamlwalk"
)

// SchemaError is one finding of Validate, placed at the YAML node it is
// about.
type SchemaError struct {
	File string
	// Line and Col are 1-based; Col is 0 when the YAML parser did not say.
	Line, Col int
	// Path is the dotted key path, list indexes included
	// ("users.0.lock_passwd"); empty for the whole document.
	Path string
	Msg  string
	// Warning marks advice rather than an error: deprecated forms, YAML 1.1
	// quirks, keys cloud-init knows that earlyinit ignores. cloud-init
	// would accept the config.
	Warning bool
}

// Error formats e as "file:line:col: path: message". The message never
// holds the value of a sensitive key (see sensitivePath): findings end up
// in logs and in status.json.
func (e SchemaError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	fmt.Fprintf(&b, ":%d:", e.Line)
	if e.Col > 0 {
		fmt.Fprintf(&b, "%d:", e.Col)
	}
	b.WriteString(" ")
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Validate checks a cloud-config file as `cloud-init schema --config-file`
// does: it must start with "#cloud-config" and be a YAML map of known keys
// with values of the right types. The result is sorted by position; nil
// means valid. See ValidatePart for parts that need no header.
//
// The keys earlyinit acts on are checked in depth, by the schema derived
// from their types (internal/ccfg's Config); network is only checked to
// be a map. Other keys cloud-init knows (snap, landscape...) are warnings:
// earlyinit ignores them. The v1/v2 apt keys, and any other key, are
// errors.
//
// Values are typed as cloud-init's YAML 1.1 loader types them: `off` is
// false, `0644` is 420. Where that matters a warning (or the error's
// message) says so.
func Validate(file string, data []byte) []SchemaError {
	trimmed := strings.TrimLeft(string(data), " \t\r\n")
	if !strings.HasPrefix(trimmed, "#cloud-config") || strings.HasPrefix(trimmed, "#cloud-config-") {
		return []SchemaError{{File: file, Line: 1, Col: 1, Msg: `a cloud-config file must begin with "#cloud-config"`}}
	}
	return validate(file, data)
}

// ValidatePart validates a TypeCloudConfig part (which, coming from a MIME
// part so typed, may lack the #cloud-config line) under its filename.
func ValidatePart(p Part) []SchemaError {
	return validate(p.Filename, p.Content)
}

// yamlErrLine finds the line number in a yaml.v3 error; compiled on first
// use, as are the schema's patterns (no work at package initialisation).
var yamlErrLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`line (\d+)`) })

func validate(file string, data []byte) []SchemaError {
	v := &validator{file: file, budget: yamlwalk.New(maxYAMLNodes)}
	if line, col, off, bad := invalidUTF8(data); bad {
		return []SchemaError{{File: file, Line: line, Col: col, Msg: fmt.Sprintf("not valid UTF-8 (byte offset %d): cloud-config must be UTF-8", off)}}
	}
	root, err := parseYAML(data)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "yaml: ")
		line := 1
		if m := yamlErrLine().FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			// yaml.v3 gives its parser's errors ("did not find expected
			// ...") at the 0-based line where the enclosing collection
			// starts; its scanner's errors at the 1-based line.
			if strings.Contains(msg, "did not find expected") {
				line++
				msg = strings.Replace(msg, "line "+m[1]+": ", "", 1) + " (in the collection starting here)"
			} else {
				msg = strings.Replace(msg, "line "+m[1]+": ", "", 1)
			}
		}
		return []SchemaError{{File: file, Line: line, Msg: "invalid YAML: " + msg}}
	}
	if root == nil {
		return []SchemaError{{File: file, Line: 1, Col: 1, Msg: "empty cloud-config", Warning: true}}
	}
	topLevel(v, root, "")
	sort.SliceStable(v.errs, func(i, j int) bool {
		a, b := v.errs[i], v.errs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return v.errs
}

type validator struct {
	file string
	errs []SchemaError
	// budget is the document's: the checks' walk and the values they
	// resolve charge it.
	budget *yamlwalk.Budget
	over   bool
	// declared, when set, makes the checks describe the schema instead
	// of checking a node (DeclaredKeys): there is no node, and every
	// map's keys are recorded as dotted paths.
	declared map[string]bool
}

// check validates node n at path.
type check func(v *validator, n *yaml.Node, path string)

func (v *validator) add(n *yaml.Node, path string, warn bool, format string, args ...any) {
	if v.declared != nil {
		return
	}
	v.errs = append(v.errs, SchemaError{File: v.file, Line: n.Line, Col: n.Column, Path: path, Msg: fmt.Sprintf(format, args...), Warning: warn})
}

func (v *validator) errorf(n *yaml.Node, path, format string, args ...any) {
	v.add(n, path, false, format, args...)
}

func (v *validator) warnf(n *yaml.Node, path, format string, args ...any) {
	v.add(n, path, true, format, args...)
}

// deref follows aliases.
func (v *validator) deref(n *yaml.Node) *yaml.Node {
	if n == nil { // describing
		return &yaml.Node{}
	}
	d, _ := yamlwalk.Deref(n)
	return d
}

// spend charges one node to the budget that bounds alias expansion.
func (v *validator) spend(n *yaml.Node, path string) bool {
	if v.declared != nil {
		return false
	}
	if v.budget.Spend(n) != nil {
		if !v.over {
			v.errorf(n, path, "%s", v.budget.Exceeded())
			v.over = true
		}
		return false
	}
	return true
}

// resolve is n's value, resolved on the document's budget. ok is false
// when it cannot be: the resolver's error, or, once, the budget's
// (spend's), is reported at path.
func (v *validator) resolve(n *yaml.Node, path string) (val any, ok bool) {
	if v.declared != nil {
		return nil, false
	}
	val, err := (&resolver{v.budget}).value(v.deref(n))
	switch {
	case err == nil:
		return val, true
	case v.budget.Spent():
		if !v.over {
			v.errorf(n, path, "%s", v.budget.Exceeded())
			v.over = true
		}
	default:
		v.errorf(n, path, "%v", err)
	}
	return nil, false
}

// kind is the schema type of a node and, for scalars, its value.
func (v *validator) kind(n *yaml.Node, path string) (string, any, bool) {
	if v.declared != nil {
		return "", nil, false
	}
	n = v.deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "map", nil, true
	case yaml.SequenceNode:
		return "list", nil, true
	case yaml.ScalarNode:
		val, err := scalarValue(n)
		if err != nil {
			v.errorf(n, path, "%v", err)
			return "", nil, false
		}
		return scalar.TypeName(val), val, true
	}
	v.errorf(n, path, "unexpected YAML node")
	return "", nil, false
}

// sensitivePath tells whether a value at a dotted key path
// ("users.0.passwd") may be a secret, so that no message quotes it: any
// component is a key instance.IsSensitiveKey names (password, passwd,
// hashed_passwd, plain_text_passwd, admin_pass, chpasswd and everything
// under it, random_seed, secrets, tokens, credentials, private keys) or
// ends in "_private" (ssh_keys.rsa_private), and a WireGuard interface's
// content (wireguard.interfaces.0.content: its private key is in it).
func sensitivePath(path string) bool {
	if strings.HasPrefix(path, "wireguard.") && strings.HasSuffix(path, ".content") {
		return true // a WireGuard configuration, its private key in it
	}
	switch {
	case path == "puppet.csr_attributes" || strings.HasPrefix(path, "puppet.csr_attributes."),
		path == "chef.validation_cert" || path == "chef.validation_key",
		path == "rh_subscription.activation-key",
		strings.HasPrefix(path, "ansible.") && strings.HasSuffix(path, ".extra_vars"):
		return true // a challengePassword, a validator's key, an activation key, variables
	}
	for _, k := range strings.Split(path, ".") {
		if instance.IsSensitiveKey(k) || strings.HasSuffix(strings.ToLower(k), "_private") {
			return true
		}
	}
	return false
}

// hidden stands for a value a message must not show.
const hidden = "(value not shown: sensitive key)"

// describe names a value for a message, with a hint when YAML 1.1 typed a
// plain scalar other than the way it reads. With hide, the value itself is
// left out (see sensitivePath).
func describe(n *yaml.Node, k string, val any, hide bool) string {
	switch k {
	case "map", "list", "null":
		return k
	}
	if hide {
		s := k + " " + hidden
		if isPlain(n) && k != "string" {
			s += " (YAML 1.1 reads this unquoted value as " + k + ", not string: quote it for a string)"
		}
		return s
	}
	s := fmt.Sprintf("%s %v", k, val)
	if k == "string" {
		s = fmt.Sprintf("string %q", val)
	}
	if isPlain(n) {
		switch {
		case k == "boolean" && scalar.YAML11Only(n.Value):
			s += fmt.Sprintf(" (YAML 1.1 reads unquoted %s as a boolean: quote it for a string)", n.Value)
		case k == "integer" && n.Value != fmt.Sprint(val):
			s += fmt.Sprintf(" (YAML 1.1 reads unquoted %s as the integer %v: quote it for a string)", n.Value, val)
		case k != "string":
			s += " (quote it for a string)"
		}
	}
	return s
}

func (v *validator) typeError(n *yaml.Node, path string, want []string, k string, val any) {
	v.errorf(n, path, "expected %s, got %s", strings.Join(want, " or "), describe(v.deref(n), k, val, sensitivePath(path)))
}

// typed accepts nodes of the given kinds ("string", "boolean", "integer",
// "number", "null", "map", "list"). !!binary counts as a string.
func typed(kinds ...string) check {
	return func(v *validator, n *yaml.Node, path string) {
		checkTyped(v, n, path, kinds...)
	}
}

func checkTyped(v *validator, n *yaml.Node, path string, kinds ...string) {
	k, val, ok := v.kind(n, path)
	if !ok {
		return
	}
	for _, want := range kinds {
		if k == want || (want == "number" && k == "integer") || (want == "string" && k == "binary") {
			if k == "boolean" {
				boolQuirk(v, n, path)
			}
			return
		}
	}
	v.typeError(n, path, kinds, k, val)
}

// boolQuirk warns about yes/no/on/off used as booleans.
func boolQuirk(v *validator, n *yaml.Node, path string) {
	d := v.deref(n)
	if isPlain(d) && scalar.YAML11Only(d.Value) {
		val, _ := scalar.Bool(d.Value)
		v.warnf(n, path, "unquoted %s is the boolean %v in YAML 1.1 (cloud-init, earlyinit) but a string in YAML 1.2: write %v", d.Value, val, val)
	}
}

// The common typed checks, as functions: a typed(...) closure in a
// package variable would be made at package initialisation.
func str(v *validator, n *yaml.Node, path string)     { checkTyped(v, n, path, "string") }
func boolean(v *validator, n *yaml.Node, path string) { checkTyped(v, n, path, "boolean") }
func integer(v *validator, n *yaml.Node, path string) { checkTyped(v, n, path, "integer") }
func anyMap(v *validator, n *yaml.Node, path string)  { checkTyped(v, n, path, "map") }
func anyList(v *validator, n *yaml.Node, path string) { checkTyped(v, n, path, "list") }

// oneOf dispatches on the node's kind; a nil check accepts.
func oneOf(alts map[string]check) check {
	return func(v *validator, n *yaml.Node, path string) {
		if v.declared != nil {
			for _, c := range alts {
				if c != nil {
					c(v, n, path)
				}
			}
			return
		}
		k, val, ok := v.kind(n, path)
		if !ok {
			return
		}
		if c, ok := alts[k]; ok {
			if c != nil {
				c(v, n, path)
			}
			return
		}
		want := make([]string, 0, len(alts))
		for a := range alts {
			want = append(want, a)
		}
		sort.Strings(want)
		v.typeError(n, path, want, k, val)
	}
}

// listOf checks a list and each item; max 0 is no maximum.
func listOf(item check, min, max int) check {
	return func(v *validator, n *yaml.Node, path string) {
		if v.declared != nil {
			if item != nil {
				item(v, nil, joinPath(path, "*"))
			}
			return
		}
		k, val, ok := v.kind(n, path)
		if !ok {
			return
		}
		if k != "list" {
			v.typeError(n, path, []string{"list"}, k, val)
			return
		}
		d := v.deref(n)
		if len(d.Content) < min {
			v.errorf(n, path, "needs at least %d item(s), has %d", min, len(d.Content))
		}
		if max > 0 && len(d.Content) > max {
			v.errorf(n, path, "takes at most %d items, has %d", max, len(d.Content))
		}
		for i, c := range d.Content {
			if !v.spend(c, path) {
				return
			}
			if item != nil {
				item(v, c, fmt.Sprintf("%s.%d", path, i))
			}
		}
	}
}

// enum accepts the given scalar values.
func enum(vals ...any) check {
	return func(v *validator, n *yaml.Node, path string) {
		k, val, ok := v.kind(n, path)
		if !ok {
			return
		}
		if k != "map" && k != "list" {
			for _, want := range vals {
				if val == want {
					return
				}
			}
		}
		var names []string
		for _, w := range vals {
			names = append(names, fmt.Sprintf("%#v", w))
		}
		v.errorf(n, path, "expected one of %s, got %s", strings.Join(names, ", "), describe(v.deref(n), k, val, sensitivePath(path)))
	}
}

func deprecated(note string, c check) check {
	return func(v *validator, n *yaml.Node, path string) {
		v.warnf(n, path, "deprecated: %s", note)
		if c != nil {
			c(v, n, path)
		}
	}
}

func pattern(re string, what string) check {
	rx := regexp.MustCompile(re)
	return func(v *validator, n *yaml.Node, path string) {
		k, val, ok := v.kind(n, path)
		if !ok {
			return
		}
		if k != "string" {
			v.typeError(n, path, []string{"string"}, k, val)
			return
		}
		if !rx.MatchString(val.(string)) {
			if sensitivePath(path) {
				v.errorf(n, path, "the value %s is not %s", hidden, what)
				return
			}
			v.errorf(n, path, "%q is not %s", val, what)
		}
	}
}

// obj describes a map.
type obj struct {
	props    map[string]check
	required []string
	// keys, when set, admits keys not in props that match it, with values
	// checked by values. Any other key is an error.
	keys   *regexp.Regexp
	values check
	// oneRequired: at least one of these keys must be present.
	oneRequired []string
	// minProps is JSON schema's minProperties: the map has at least
	// that many keys.
	minProps int
}

func (o obj) check(v *validator, n *yaml.Node, path string) {
	if v.declared != nil {
		for k, c := range o.props {
			p := joinPath(path, k)
			v.declared[p] = true
			if c != nil {
				c(v, nil, p)
			}
		}
		if o.keys != nil {
			p := joinPath(path, anyKeyPath)
			v.declared[p] = true
			if o.values != nil {
				o.values(v, nil, p)
			}
		}
		return
	}
	k, val, ok := v.kind(n, path)
	if !ok {
		return
	}
	if k != "map" {
		v.typeError(n, path, []string{"map"}, k, val)
		return
	}
	d := v.deref(n)
	seen := map[string]*yaml.Node{}
	walkMap(v, d, path, func(key, value *yaml.Node) {
		name := key.Value
		p := joinPath(path, name)
		if prev, dup := seen[name]; dup {
			v.warnf(key, p, "duplicate key (first at line %d): the last one wins", prev.Line)
		}
		seen[name] = key
		if c, ok := o.props[name]; ok {
			if c != nil {
				c(v, value, p)
			}
			return
		}
		if o.keys != nil && o.keys.MatchString(name) {
			if o.values != nil {
				o.values(v, value, p)
			}
			return
		}
		if sensitivePath(path) {
			// A stray key under chpasswd may be a "name:password" line.
			v.errorf(key, joinPath(path, "(key not shown)"), "unknown key")
			return
		}
		v.errorf(key, p, "unknown key")
	})
	for _, r := range o.required {
		if _, ok := seen[r]; !ok {
			v.errorf(n, path, "missing required key %q", r)
		}
	}
	if len(seen) < o.minProps {
		v.errorf(n, path, "needs at least %d key(s), has %d", o.minProps, len(seen))
	}
	if len(o.oneRequired) > 0 {
		found := false
		for _, r := range o.oneRequired {
			if _, ok := seen[r]; ok {
				found = true
			}
		}
		if !found {
			v.errorf(n, path, "missing required key %s", quoteAll(o.oneRequired, " or "))
		}
	}
}

// walkMap calls f for each key and value of a map node, merge keys (<<)
// expanded in place.
func walkMap(v *validator, m *yaml.Node, path string, f func(key, value *yaml.Node)) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		key, value := m.Content[i], m.Content[i+1]
		if !v.spend(key, path) {
			return
		}
		if isMergeKey(key) {
			src := v.deref(value)
			var maps []*yaml.Node
			switch src.Kind {
			case yaml.MappingNode:
				maps = []*yaml.Node{src}
			case yaml.SequenceNode:
				maps = src.Content
			}
			if len(maps) == 0 {
				v.errorf(value, path, "merge key << needs a mapping or a list of mappings")
			}
			for _, mm := range maps {
				if mm = v.deref(mm); mm.Kind == yaml.MappingNode {
					walkMap(v, mm, path, f)
				} else {
					v.errorf(value, path, "merge key << needs a mapping or a list of mappings")
				}
			}
			continue
		}
		key = v.deref(key)
		if key.Kind != yaml.ScalarNode {
			v.errorf(key, path, "map key must be a scalar")
			continue
		}
		f(key, value)
	}
}

func quoteAll(ss []string, sep string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, sep)
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// permissions checks a write_files mode: cloud-init takes an octal string,
// or an integer used as the mode's value.
func permissions(v *validator, n *yaml.Node, path string) {
	k, val, ok := v.kind(n, path)
	if !ok {
		return
	}
	switch k {
	case "string":
		s := strings.TrimSpace(val.(string))
		digits := strings.TrimPrefix(strings.TrimPrefix(s, "0o"), "0O")
		m, err := strconv.ParseUint(digits, 8, 32)
		switch {
		case err != nil || digits == "":
			v.errorf(n, path, "%q is not an octal mode", s)
		case m > 0o7777:
			v.errorf(n, path, "mode %q is out of range", s)
		}
	case "integer":
		i := val.(int)
		if i < 0 || i > 0o7777 {
			v.errorf(n, path, "mode %d is out of range", i)
			return
		}
		raw := v.deref(n).Value
		if len(raw) > 1 && raw[0] == '0' && raw[1] != 'x' && raw[1] != 'b' {
			v.warnf(n, path, "unquoted %s is YAML 1.1 octal for %d, i.e. mode %#o as meant: quote it (\"%s\") so that YAML 1.2 tools agree", raw, i, i, raw)
		} else {
			v.warnf(n, path, "unquoted %s is the decimal integer %d, i.e. mode %#o: likely a mistake; for mode %s write \"0%s\"", raw, i, i, raw, raw)
		}
	default:
		v.typeError(n, path, []string{"string"}, k, val)
	}
}

// chpasswdUser is one chpasswd.users entry: {name, type: RANDOM} or
// {name, password, type: hash|text}.
func chpasswdUser(v *validator, n *yaml.Node, path string) {
	if v.declared != nil { // both forms' keys
		obj{props: map[string]check{"name": str, "password": str, "type": str}}.check(v, n, path)
		return
	}
	k, val, ok := v.kind(n, path)
	if !ok {
		return
	}
	if k != "map" {
		v.typeError(n, path, []string{"map"}, k, val)
		return
	}
	hasPassword := false
	walkMap(v, v.deref(n), path, func(key, _ *yaml.Node) {
		if key.Value == "password" {
			hasPassword = true
		}
	})
	if hasPassword {
		obj{required: []string{"name", "password"}, props: map[string]check{
			"name": str, "password": str, "type": enum("hash", "text"),
		}}.check(v, n, path)
		return
	}
	obj{required: []string{"name", "type"}, props: map[string]check{
		"name": str, "type": enum("RANDOM"),
	}}.check(v, n, path)
}

func unsupported(c check) check {
	return func(v *validator, n *yaml.Node, path string) {
		v.warnf(n, path, "not supported by earlyinit: ignored")
		if c != nil {
			c(v, n, path)
		}
	}
}

func mergeHow(v *validator, n *yaml.Node, path string) {
	if !v.spend(n, path) {
		return
	}
	val, ok := v.resolve(n, path)
	if !ok {
		return
	}
	if val == nil {
		return
	}
	specs, err := parseMergeHow(val)
	if err == nil {
		_, err = newMerger(specs)
	}
	if err != nil {
		v.errorf(n, path, "%v", err)
	}
}

// cloudInitOnly are top-level keys cloud-init 22.4 knows (its schema and its
// base configuration) that earlyinit does not act on.
var cloudInitOnly = []string{
	"autoinstall",
	"apt_pipelining", "byobu_by_default", "fan",
	"grub-dpkg", "grub_dpkg", "updates", "landscape", "lxd", "mcollective",
	"migrate",
	"snap", "spacewalk",
	"ubuntu_advantage", "drivers", "reporting",
	"datasource", "datasource_list", "def_log_file", "log_cfgs", "output", "syslog_fix_perms",
	"vendor_data2", "manual_cache_clean", "launch-index",
}

// TopLevelKey says what earlyinit does with a top-level cloud-config key:
// known is true for the keys the schema knows (cloud-init 22.4's), and
// supported for those earlyinit acts on. A key known but not supported is
// the schema's warning "KEY: not supported by earlyinit: ignored"; one
// not known is its error "unknown key". The late stage uses it for the
// keys of the image's configuration too.
func TopLevelKey(key string) (supported, known bool) {
	s := topSchema()
	_, known = s.top.props[key]
	return known && !s.notImplemented[key], known
}

// moduleList checks cloud_init_modules, cloud_config_modules and
// cloud_final_modules: entries are a module name, a list [name,
// frequency, args...] or a map {name, frequency, args}, as cloud-init's
// Modules._read_modules reads them.
func moduleList(v *validator, n *yaml.Node, path string) {
	listOf(oneOf(map[string]check{
		"string": nil,
		"null":   nil,
		"list": func(v *validator, n *yaml.Node, path string) {
			d := v.deref(n)
			if len(d.Content) == 0 {
				return
			}
			str(v, d.Content[0], path+".0")
			if len(d.Content) > 1 {
				moduleFrequency(v, d.Content[1], path+".1")
			}
		},
		"map": obj{required: []string{"name"}, props: map[string]check{
			"name": str, "frequency": moduleFrequency, "args": nil,
		}}.check,
	}), 0, 0)(v, n, path)
}

// moduleFrequency is a module list entry's frequency: cloud-init uses the
// module's own for any other value, with a warning.
var moduleFrequency = func(v *validator, n *yaml.Node, path string) {
	k, val, ok := v.kind(n, path)
	if !ok {
		return
	}
	if k == "string" {
		switch val {
		case "once-per-instance", "always", "once":
			return
		}
	}
	v.warnf(n, path, `not "once-per-instance", "always" or "once": the module's own frequency is used`)
}

// schema is the top-level schema and the keys in it earlyinit does not
// act on (each a "not supported by earlyinit" warning).
type schema struct {
	top            obj
	notImplemented map[string]bool
}

// topSchema is built on first use: a few hundred maps, closures and
// regular expressions nothing but validation and TopLevelKey needs.
var topSchema = sync.OnceValue(newTopSchema)

func newTopSchema() schema {
	notImplemented := map[string]bool{}
	top := obj{props: map[string]check{}}
	for k, s := range ccfg.Schemas() {
		top.props[k] = fromSchema(s)
		if s.Unsupported {
			notImplemented[k] = true
		}
	}
	for k, c := range aptLegacySchemas() {
		top.props[k] = c
	}
	for _, k := range cloudInitOnly {
		if _, ok := top.props[k]; !ok {
			top.props[k] = unsupported(nil)
			notImplemented[k] = true
		}
	}
	return schema{top: top, notImplemented: notImplemented}
}

// anyKeyPath stands in DeclaredKeys' paths for a key a map takes by a
// pattern (apt.sources.<key>.source).
const anyKeyPath = "<key>"

// DeclaredKeys are the schema's keys as dotted paths: "ntp",
// "ntp.servers", "apt.sources.<key>.source" (anyKeyPath for a key taken by
// a pattern), "users.*.name" ("*" for a list's items). Every alternative
// of a value counts.
func DeclaredKeys() map[string]bool {
	v := &validator{declared: map[string]bool{}}
	topSchema().top.check(v, nil, "")
	return v.declared
}

func topLevel(v *validator, n *yaml.Node, path string) {
	k, val, ok := v.kind(n, path)
	if !ok {
		return
	}
	if k != "map" {
		// Not a map: the value is the whole body, which may hold anything.
		v.errorf(n, path, "cloud-config must be a map of keys, got %s", describe(v.deref(n), k, val, true))
		return
	}
	topSchema().top.check(v, n, path)
}
