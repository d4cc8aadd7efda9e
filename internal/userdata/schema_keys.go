package userdata

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

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
