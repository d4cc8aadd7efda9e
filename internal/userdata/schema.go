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
