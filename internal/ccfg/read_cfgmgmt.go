package ccfg

// How the configuration management modules' types decode: the readings
// of cc_puppet, cc_chef, cc_ansible and cc_rh_subscription that Decode's
// own do not give (a null key read otherwise than a missing one, Python's
// truth of a section, values checked only at the step that uses them).

import (
	"maps"
	"reflect"
	"slices"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// Given is the set of keys a map of keys was given with, null ones
// included: for a module that reads a null key otherwise than a missing
// one (cloud-init's `k in cfg`, where Decode reads null as missing).
type Given map[string]bool

// Has tells whether key k was given (null or not).
func (g Given) Has(k string) bool { return g[k] }

func givenOf(m map[string]any) Given {
	g := make(Given, len(m))
	for k := range m {
		g[k] = true
	}
	return g
}

// decodeKeys decodes the map of keys v into the struct out points to;
// v that is not a map is an error.
func decodeKeys(v any, path string, out any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, wrongType(path, "a map", v)
	}
	return m, decodeStruct(reflect.ValueOf(out).Elem(), m, path)
}

// isNull tells whether m has key k, null.
func isNull(m map[string]any, k string) bool {
	v, ok := m[k]
	return ok && v == nil
}

// Args is a command's arguments as cc_puppet's exec_args and cc_chef's
// exec_arguments are read. Set: given, null included (the type holding
// it sets that). A list's items are each str() (trimmed; null, a list or
// a map refused); a string is kept whole as the one item of List, with
// String set (cc_puppet splits it at blanks, cc_chef does not). Another
// kind, null included, is Other, its kind: the modules warn of it and run
// their default arguments.
type Args struct {
	Set    bool
	List   []string
	String bool
	Other  string
}

// Schema is a list of strings'.
func (Args) Schema() *Schema { return Of(reflect.TypeFor[[]string]()) }

// DecodeCC reads a list, a string or another kind.
func (a *Args) DecodeCC(v any, path string) error {
	*a = Args{Set: true}
	switch t := v.(type) {
	case []any:
		return DecodeValue(t, path, &a.List)
	case string:
		a.List, a.String = []string{t}, true
	default:
		a.Other = scalar.YAMLNoun(v)
	}
	return nil
}

// Argv is a list of strings that must be a list (no lone string as a
// list of one): an argv (cc_ansible's galaxy actions), or IDs
// cc_rh_subscription refuses unless they are a list. Its items are read
// as Decode reads a list of strings' (str(), trimmed).
type Argv []string

// DecodeCC refuses any value but a list.
func (a *Argv) DecodeCC(v any, path string) error {
	l, ok := v.([]any)
	if !ok {
		return wrongType(path, "a list", v)
	}
	var s []string
	if err := DecodeValue(l, path, &s); err != nil {
		return err
	}
	*a = s
	return nil
}

// TruthyString is a string its module tests for Python truth first
// (cc_chef's `if vcert:`): a false value (0, false, "", an empty list or
// map) is no string, "", and another value must be a string.
type TruthyString string

// DecodeCC reads a false value as "", a string as itself.
func (s *TruthyString) DecodeCC(v any, path string) error {
	if !scalar.Truthy(v) {
		*s = ""
		return nil
	}
	t, ok := v.(string)
	if !ok {
		return wrongType(path, "a string", v)
	}
	*s = TruthyString(t)
	return nil
}

// Later is a value its module checks only at the step that uses it, as
// cloud-init's does (cc_rh_subscription reads each key where it uses it,
// once subscription-manager says the system is not registered): Decode
// keeps V and the error reading the value as a T gives, for the module
// to report at that step. Set: the key was given, not null. Truthy:
// Python's truth of the value given.
type Later[T any] struct {
	V           T
	Err         error
	Set, Truthy bool
}

// Schema is T's.
func (Later[T]) Schema() *Schema { return Of(reflect.TypeFor[T]()) }

// DecodeCC keeps the value and its error.
func (l *Later[T]) DecodeCC(v any, path string) error {
	*l = Later[T]{Set: v != nil, Truthy: scalar.Truthy(v)}
	l.Err = DecodeValue(v, path, &l.V)
	return nil
}

// Get is the value, or the error reading it.
func (l Later[T]) Get() (T, error) { return l.V, l.Err }

// BoolWord is a boolean its module checks itself, at its step
// (cc_rh_subscription's auto-attach, which must be util.is_true or
// util.is_false): Set when given (not null); True and False what
// is_true and is_false make of it (a value may be neither: "maybe", 2);
// Kind its kind, for the module's message.
type BoolWord struct {
	Set, True, False bool
	Kind             string
}

// Schema is a boolean's.
func (BoolWord) Schema() *Schema { return Of(reflect.TypeFor[bool]()) }

// DecodeCC reads any value.
func (b *BoolWord) DecodeCC(v any, path string) error {
	*b = BoolWord{Set: v != nil, True: IsTrue(v), False: IsFalse(v), Kind: scalar.YAMLNoun(v)}
	return nil
}

// DecodeCC reads puppet: util.get_cfg_option_bool's True default for
// install, cleanup and start_service (null is false); a null exec_args is
// Other; a null conf or csr_attributes fails, as cc_puppet does on None.
func (p *Puppet) DecodeCC(v any, path string) error {
	*p = Puppet{Install: true, Cleanup: true, StartService: true}
	m, err := decodeKeys(v, path, p)
	if err != nil {
		return err
	}
	for k, b := range map[string]*bool{"install": &p.Install, "cleanup": &p.Cleanup, "start_service": &p.StartService} {
		if isNull(m, k) {
			*b = false
		}
	}
	if isNull(m, "exec_args") {
		p.ExecArgs = Args{Set: true, Other: "null"}
	}
	for _, k := range []string{"conf", "csr_attributes"} {
		if isNull(m, k) {
			return wrongType(path+"."+k, "a map", nil)
		}
	}
	return nil
}

// DecodeCC reads puppet.conf: each key, in sorted order, a section (a
// map) or ca_cert (a string).
func (c *PuppetConf) DecodeCC(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, "a map", v)
	}
	*c = PuppetConf{Sections: map[string]map[string]any{}}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if k == "ca_cert" {
			s, ok := m[k].(string)
			if !ok {
				return wrongType(path+"."+k, "a string", m[k])
			}
			c.CACert = &s
			continue
		}
		sec, ok := m[k].(map[string]any)
		if !ok {
			return wrongType(path+"."+k, "a map", m[k])
		}
		c.Sections[k] = sec
	}
	c.Main, c.Server, c.Agent, c.User = c.Sections["main"], c.Sections["server"], c.Sections["agent"], c.Sections["user"]
	return nil
}

// DecodeCC reads puppet.csr_attributes: a map, its values as given.
func (c *PuppetCSRAttrs) DecodeCC(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, "a map", v)
	}
	*c = PuppetCSRAttrs{All: m}
	c.CustomAttributes, _ = m["custom_attributes"].(map[string]any)
	c.ExtensionRequests, _ = m["extension_requests"].(map[string]any)
	return nil
}

// DecodeCC reads chef, recording the keys given; a null exec_arguments is
// Other; a null initial_attributes fails, as cc_chef does on None.
func (c *Chef) DecodeCC(v any, path string) error {
	*c = Chef{}
	m, err := decodeKeys(v, path, c)
	if err != nil {
		return err
	}
	c.Given = givenOf(m)
	if isNull(m, "exec_arguments") {
		c.ExecArguments = Args{Set: true, Other: "null"}
	}
	if isNull(m, "initial_attributes") {
		return wrongType(path+".initial_attributes", "a map", nil)
	}
	return nil
}

// ansibleTested are the keys of ansible that cc_ansible tests for Python
// truth (`if cfg.get(key):`, validate_config's get_cfg_by_path): a false
// value is as missing.
var ansibleTested = []string{"install_method", "package_name", "ansible_config", "galaxy", "pull", "setup_controller"}

// withoutFalse is m without the keys of keys whose values are false in
// Python.
func withoutFalse(m map[string]any, keys ...string) map[string]any {
	out := maps.Clone(m)
	for _, k := range keys {
		if !scalar.Truthy(out[k]) {
			delete(out, k)
		}
	}
	return out
}

// DecodeCC reads ansible: a false value is Empty; a false value of the
// keys ansibleTested is as missing.
func (a *Ansible) DecodeCC(v any, path string) error {
	*a = Ansible{}
	if !scalar.Truthy(v) {
		a.Empty = true
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, "a map", v)
	}
	return decodeStruct(reflect.ValueOf(a).Elem(), withoutFalse(m, ansibleTested...), path)
}

// DecodeCC reads ansible.galaxy: a false actions is as missing (cc_ansible
// loops over no action).
func (g *AnsibleGalaxy) DecodeCC(v any, path string) error {
	*g = AnsibleGalaxy{}
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, "a map", v)
	}
	return decodeStruct(reflect.ValueOf(g).Elem(), withoutFalse(m, "actions"), path)
}

// DecodeCC reads ansible.pull, keeping its keys in Options; a false url
// or playbook_name (validate_config's test) is as missing.
func (p *AnsiblePull) DecodeCC(v any, path string) error {
	*p = AnsiblePull{}
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, "a map", v)
	}
	if err := decodeStruct(reflect.ValueOf(p).Elem(), withoutFalse(m, "url", "playbook_name"), path); err != nil {
		return err
	}
	p.Options = m
	return nil
}

// DecodeCC reads a run_ansible entry, keeping its keys in Options.
func (r *AnsibleRun) DecodeCC(v any, path string) error {
	*r = AnsibleRun{}
	m, err := decodeKeys(v, path, r)
	if err != nil {
		return err
	}
	r.Options = m
	return nil
}

// DecodeCC reads rh_subscription, listing the keys it does not declare.
func (r *RHSubscription) DecodeCC(v any, path string) error {
	*r = RHSubscription{}
	m, err := decodeKeys(v, path, r)
	if err != nil {
		return err
	}
	declared := map[string]bool{}
	for _, f := range fields(reflect.TypeFor[RHSubscription]()) {
		declared[f.key] = true
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !declared[k] {
			r.Unknown = append(r.Unknown, k)
		}
	}
	return nil
}
