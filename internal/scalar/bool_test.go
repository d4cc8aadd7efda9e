package scalar

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// pyyamlBool is the bool resolver of PyYAML 6.0 (yaml/resolver.py), which
// cloud-init reads YAML with.
var pyyamlBool = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)

// caseVariants returns every upper/lower-case spelling of s.
func caseVariants(s string) []string {
	out := []string{""}
	for _, r := range s {
		var next []string
		for _, p := range out {
			lo, up := strings.ToLower(string(r)), strings.ToUpper(string(r))
			next = append(next, p+lo)
			if up != lo {
				next = append(next, p+up)
			}
		}
		out = next
	}
	return out
}

// candidates are every case spelling of every boolean word any of the
// functions knows, and some near misses.
func candidates() []string {
	var out []string
	for _, w := range []string{"yes", "no", "true", "false", "on", "off", "y", "n", "t", "f", "1", "0", "enabled", "none", "null"} {
		out = append(out, caseVariants(w)...)
	}
	return append(out, "", " ", " yes", "yes ", "\tno\n", "01", "1.0", "-1", "+1", "yess", "ye", "o", "tru", "ſ", "yeſ")
}

func TestBool(t *testing.T) {
	for _, tc := range []struct {
		in    string
		v, ok bool
	}{
		{"yes", true, true}, {"Yes", true, true}, {"YES", true, true},
		{"true", true, true}, {"True", true, true}, {"TRUE", true, true},
		{"on", true, true}, {"On", true, true}, {"ON", true, true},
		{"no", false, true}, {"No", false, true}, {"NO", false, true},
		{"false", false, true}, {"False", false, true}, {"FALSE", false, true},
		{"off", false, true}, {"Off", false, true}, {"OFF", false, true},
		// Not PyYAML booleans: mixed case, y/n, numbers, space.
		{"yEs", false, false}, {"tRUE", false, false}, {"oN", false, false}, {"oFF", false, false},
		{"y", false, false}, {"Y", false, false}, {"n", false, false}, {"N", false, false},
		{"1", false, false}, {"0", false, false}, {"", false, false},
		{" yes", false, false}, {"yes ", false, false}, {"null", false, false}, {"~", false, false},
	} {
		if v, ok := Bool(tc.in); v != tc.v || ok != tc.ok {
			t.Errorf("Bool(%q) = %v, %v; want %v, %v", tc.in, v, ok, tc.v, tc.ok)
		}
	}
}

// TestBoolIsPyYAML checks Bool against PyYAML's own expression on every case
// spelling of every word.
func TestBoolIsPyYAML(t *testing.T) {
	for _, s := range candidates() {
		v, ok := Bool(s)
		if ok != pyyamlBool.MatchString(s) {
			t.Errorf("Bool(%q): ok = %v, PyYAML resolver says %v", s, ok, !ok)
		}
		if ok {
			want := strings.ToLower(s) == "yes" || strings.ToLower(s) == "true" || strings.ToLower(s) == "on"
			if v != want {
				t.Errorf("Bool(%q) = %v, want %v", s, v, want)
			}
		}
	}
}

func TestYAML11Only(t *testing.T) {
	yaml12 := regexp.MustCompile(`^(?:true|True|TRUE|false|False|FALSE)$`)
	for _, s := range candidates() {
		_, ok := Bool(s)
		want := ok && !yaml12.MatchString(s)
		if got := YAML11Only(s); got != want {
			t.Errorf("YAML11Only(%q) = %v, want %v", s, got, want)
		}
	}
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"yes", true}, {"Yes", true}, {"YES", true}, {"no", true}, {"NO", true},
		{"on", true}, {"On", true}, {"off", true}, {"OFF", true},
		{"true", false}, {"False", false}, {"TRUE", false},
		{"yEs", false}, {"y", false}, {"n", false}, {"1", false}, {"", false},
	} {
		if got := YAML11Only(tc.in); got != tc.want {
			t.Errorf("YAML11Only(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestWord(t *testing.T) {
	for _, tc := range []struct {
		in             string
		v, ok, yv, yok bool // Word, then WordYN
	}{
		{"true", true, true, true, true}, {"TRUE", true, true, true, true}, {"tRuE", true, true, true, true},
		{"1", true, true, true, true},
		{"on", true, true, true, true}, {"On", true, true, true, true}, {"oN", true, true, true, true},
		{"yes", true, true, true, true}, {"YeS", true, true, true, true},
		{"false", false, true, false, true}, {"FaLsE", false, true, false, true},
		{"0", false, true, false, true},
		{"off", false, true, false, true}, {"OFF", false, true, false, true},
		{"no", false, true, false, true}, {"nO", false, true, false, true},
		// y and n only in WordYN.
		{"y", false, false, true, true}, {"Y", false, false, true, true},
		{"n", false, false, false, true}, {"N", false, false, false, true},
		// Never words: no trimming, no empty value, no other numbers.
		{"", false, false, false, false}, {" yes", false, false, false, false}, {"no\n", false, false, false, false},
		{"01", false, false, false, false}, {"-1", false, false, false, false}, {"1.0", false, false, false, false},
		{"t", false, false, false, false}, {"f", false, false, false, false}, {"enabled", false, false, false, false},
		{"yess", false, false, false, false}, {"ye", false, false, false, false},
		// strings.ToLower, not case folding: the long s is not an s.
		{"yeſ", false, false, false, false},
	} {
		if v, ok := Word(tc.in); v != tc.v || ok != tc.ok {
			t.Errorf("Word(%q) = %v, %v; want %v, %v", tc.in, v, ok, tc.v, tc.ok)
		}
		if v, ok := WordYN(tc.in); v != tc.yv || ok != tc.yok {
			t.Errorf("WordYN(%q) = %v, %v; want %v, %v", tc.in, v, ok, tc.yv, tc.yok)
		}
	}
}

func TestIsTrueIsFalse(t *testing.T) {
	for _, tc := range []struct {
		name        string
		in          any
		ta, fa      []string // addons for IsTrue, for IsFalse
		true, false bool
	}{
		{"bool true", true, nil, nil, true, false},
		{"bool false", false, nil, nil, false, true},
		{"true", "true", nil, nil, true, false},
		{"True", "True", nil, nil, true, false},
		{"trimmed YES", "  YES\n", nil, nil, true, false},
		{"on", "on", nil, nil, true, false},
		{"string 1", "1", nil, nil, true, false},
		{"false", "false", nil, nil, false, true},
		{"OFF", "OFF", nil, nil, false, true},
		{"trimmed no", "\tNo ", nil, nil, false, true},
		{"string 0", "0", nil, nil, false, true},
		{"int 1", 1, nil, nil, true, false},
		{"int 0", 0, nil, nil, false, true},
		{"int 2", 2, nil, nil, false, false},
		{"int -1", -1, nil, nil, false, false},
		{"int64 1", int64(1), nil, nil, true, false},
		{"uint8 0", uint8(0), nil, nil, false, true},
		{"y without addons", "y", nil, nil, false, false},
		{"n without addons", "n", nil, nil, false, false},
		{"Y with y, n", " Y ", []string{"y"}, []string{"n"}, true, false},
		{"template addon", "Template", []string{"template"}, nil, true, false},
		{"upper-case addon never matches", "template", []string{"Template"}, []string{"Template"}, false, false},
		{"N with y, n", "N", []string{"y"}, []string{"n"}, false, true},
		{"y with n only", "y", nil, []string{"n"}, false, false},
		{"int with addons", 2, []string{"2"}, []string{"2"}, true, true},
		{"maybe", "maybe", nil, nil, false, false},
		{"empty", "", nil, nil, false, false},
		{"nil", nil, nil, nil, false, false},
		{"float 1", 1.0, nil, nil, false, false},
		{"float 0", 0.0, nil, nil, false, false},
		{"json.Number 1", json.Number("1"), nil, nil, false, false},
		{"bytes yes", []byte("yes"), nil, nil, false, false},
		{"list", []any{"yes"}, nil, nil, false, false},
		{"map", map[string]any{"yes": true}, nil, nil, false, false},
	} {
		if got := IsTrue(tc.in, tc.ta...); got != tc.true {
			t.Errorf("%s: IsTrue(%#v, %q) = %v, want %v", tc.name, tc.in, tc.ta, got, tc.true)
		}
		if got := IsFalse(tc.in, tc.fa...); got != tc.false {
			t.Errorf("%s: IsFalse(%#v, %q) = %v, want %v", tc.name, tc.in, tc.fa, got, tc.false)
		}
	}
}

func TestTruthy(t *testing.T) {
	for _, tt := range []struct {
		v    any
		want bool
	}{
		{nil, false}, {false, false}, {true, true}, {0, false}, {3, true}, {int64(0), false}, {uint64(1), true},
		{0.0, false}, {0.5, true}, {"", false}, {"false", true}, {[]any{}, false}, {[]any{nil}, true},
		{map[string]any{}, false}, {map[string]any{"a": 1}, true}, {[]byte{}, false}, {[]byte("x"), true}, {struct{}{}, true},
	} {
		if got := Truthy(tt.v); got != tt.want {
			t.Errorf("Truthy(%#v) = %v, want %v", tt.v, got, tt.want)
		}
	}
}
