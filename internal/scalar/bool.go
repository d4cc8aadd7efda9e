// Package scalar reads the small scalars every part of earlyinit shares:
// the boolean words of YAML 1.1 and of cloud-init, and the names of decoded
// JSON and YAML value types for messages. It is pure (standard library only,
// no I/O), so any package may import it.
//
// There are three sets of boolean words, and they differ on purpose:
//
//   - Bool: YAML 1.1 as PyYAML's resolver types a plain scalar (cloud-init
//     reads YAML with PyYAML): 18 exact spellings, case matters, no y/n,
//     no 1/0.
//   - Word and IsTrue / IsFalse: cloud-init's util.TRUE_STRINGS and
//     FALSE_STRINGS ("true", "1", "on", "yes" / "false", "0", "off", "no"),
//     in any case.
//   - WordYN: Word plus "y" and "n", the spellings earlyinit's network
//     parsers and renderers accept.
package scalar

import (
	"fmt"
	"strings"
)

// Bool reads s as a YAML 1.1 boolean exactly as PyYAML's resolver
// (yaml/resolver.py, and so cloud-init) types a plain scalar: yes, Yes,
// YES, true, True, TRUE, on, On, ON are true; no, No, NO, false, False,
// FALSE, off, Off, OFF are false. Case matters ("yEs" is a string), and y,
// n, 1 and 0 are not booleans (the YAML 1.1 spec lists y and n; PyYAML
// does not). ok is false for anything else.
func Bool(s string) (v, ok bool) {
	switch s {
	case "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON":
		return true, true
	case "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

// YAML11Only reports whether s is a boolean in YAML 1.1 (Bool) but a
// string in YAML 1.2's core schema, whose only booleans are true, True,
// TRUE, false, False and FALSE: that is yes, no, on and off in the
// spellings Bool accepts (yes, Yes, YES, ...). It is false for everything
// else, "yEs" included.
func YAML11Only(s string) bool {
	switch s {
	case "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF":
		return true
	}
	return false
}

// Word reads s as one of cloud-init's boolean words, util.TRUE_STRINGS
// ("true", "1", "on", "yes") and util.FALSE_STRINGS ("false", "0", "off",
// "no"), in any case (s is lower-cased with strings.ToLower). It does not
// trim: " yes" is not a word. ok is false for anything else, the empty
// string included.
func Word(s string) (v, ok bool) {
	switch strings.ToLower(s) {
	case "true", "1", "on", "yes":
		return true, true
	case "false", "0", "off", "no":
		return false, true
	}
	return false, false
}

// WordYN reads s as Word does and also takes "y" as true and "n" as false,
// in any case: the spellings earlyinit's network parsers and renderers
// accept for a boolean (netcfg's v1/v2 booleans, bond and bridge
// parameters). cloud-init's util.is_true does not take y or n. ok is false
// for anything else.
func WordYN(s string) (v, ok bool) {
	switch strings.ToLower(s) {
	case "y":
		return true, true
	case "n":
		return false, true
	}
	return Word(s)
}

// IsTrue is cloud-init's util.is_true(v, addons): a bool is itself; a
// string, trimmed of white space and lower-cased, is true when it is one of
// Word's true words ("true", "1", "on", "yes") or one of addons; an integer
// of any Go integer type is read by its decimal text the same way (so 1 is
// true). Anything else (nil, floats, lists, maps, bytes) is not true:
// Python's str() of those spells no word. addons are compared as given, so
// they should be lower case, as cloud-init's are.
func IsTrue(v any, addons ...string) bool {
	if b, ok := v.(bool); ok {
		return b
	}
	return isWord(v, true, addons)
}

// IsFalse is cloud-init's util.is_false(v, addons): a bool is its negation;
// a string, trimmed and lower-cased, is false when it is one of Word's
// false words ("false", "0", "off", "no") or one of addons; an integer is
// read by its decimal text (so 0 is false). Anything else is not false.
// Note that a value can be neither true nor false ("maybe", 2, nil).
func IsFalse(v any, addons ...string) bool {
	if b, ok := v.(bool); ok {
		return !b
	}
	return isWord(v, false, addons)
}

// isWord reports whether v's text, as Python's str(v).lower().strip()
// spells it, is one of want's words or one of addons.
func isWord(v any, want bool, addons []string) bool {
	var s string
	switch t := v.(type) {
	case string:
		s = strings.ToLower(strings.TrimSpace(t))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr:
		s = fmt.Sprint(t)
	default:
		return false
	}
	if b, ok := Word(s); ok && b == want {
		return true
	}
	for _, a := range addons {
		if s == a {
			return true
		}
	}
	return false
}

// Truthy is Python's truth of a decoded YAML or JSON value, as cloud-init
// tests a setting with `if cfg.get(key):` — nil, false, zero, "", and
// empty lists, maps and byte strings are false; anything else is true.
func Truthy(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case bool:
		return t
	case int:
		return t != 0
	case int64:
		return t != 0
	case uint64:
		return t != 0
	case float64:
		return t != 0
	case string:
		return t != ""
	case []any:
		return len(t) > 0
	case map[string]any:
		return len(t) > 0
	case []byte:
		return len(t) > 0
	}
	return true
}
