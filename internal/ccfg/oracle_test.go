package ccfg_test

import (
	"fmt"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
)

// decodeOracle reads each document ("k: VALUE", loaded by cloud-init's
// util.load_yaml, as its modules get the value) and answers what
// cloud-init's helpers make of the value:
//   - is_true: util.get_cfg_option_bool(cfg, "k") (util.is_true);
//   - not_false: not util.is_false(v) (cc_ntp's enabled);
//   - bool_true: util.get_cfg_option_bool(cfg, "k", True), a key that
//     defaults to true but is read by is_true when given;
//   - truthy: Python's bool(v), a module's `if cfg.get(key)`;
//   - str: str(v), where a module formats a value;
//   - list: util.get_cfg_option_list(cfg, "k"), the items as str() (null
//     when an item is not a string: the Go side refuses those);
//   - int: int(v), or null where int() raises.
const decodeOracle = `
from cloudinit import util
out = []
for doc in json.load(sys.stdin):
    v = util.load_yaml(doc)["k"]
    r = {"is_true": util.get_cfg_option_bool({"k": v}, "k"),
         "not_false": not util.is_false(v),
         "bool_true": util.get_cfg_option_bool({"k": v}, "k", True),
         "truthy": bool(v),
         "str": str(v)}
    l = util.get_cfg_option_list({"k": v}, "k")
    r["list"] = l if all(isinstance(x, str) for x in l) else None
    try:
        r["int"] = int(v)
    except Exception:
        r["int"] = None
    out.append(r)
json.dump(out, sys.stdout)
`

type decoded struct {
	IsTrue   bool     `json:"is_true"`
	NotFalse bool     `json:"not_false"`
	BoolTrue bool     `json:"bool_true"`
	Truthy   bool     `json:"truthy"`
	Str      string   `json:"str"`
	List     []string `json:"list"`
	Int      *int     `json:"int"`
}

// probe holds a value in every field form Decode has.
type probe struct {
	IsTrue   bool     `yaml:"is_true"`
	NotFalse bool     `yaml:"not_false" cc:"default=true,notfalse"`
	BoolTrue bool     `yaml:"bool_true" cc:"default=true"`
	Truthy   bool     `yaml:"truthy" cc:"truthy"`
	Str      string   `yaml:"str"`
	List     []string `yaml:"list" cc:"untrimmed"`
	Int      int      `yaml:"int"`
}

// The values Decode reads otherwise than cloud-init's helpers, by
// design, and the form each differs in.
var decodeDifferences = map[string]string{
	// earlyinit's is_true also takes y (and is_false n): the ssh
	// module's pre-YAML configs wrote them.
	"y/is_true": "y is true", "Y/is_true": "Y is true",
	"y/bool_true": "y is true", "Y/bool_true": "Y is true",
	"n/not_false": "n is false", "N/not_false": "N is false",
	// int() of a boolean is 0 or 1; Decode refuses a boolean for a
	// number.
	"true/int": "a boolean is no integer", "false/int": "a boolean is no integer",
	"on/int": "a boolean is no integer", "off/int": "a boolean is no integer",
	"yes/int": "a boolean is no integer", "no/int": "a boolean is no integer",
	"True/int": "a boolean is no integer", "FALSE/int": "a boolean is no integer",
	// null (which the schema refuses for these) is the key not given:
	// its default, not is_true(None), the text "None" or int()'s error.
	// For disable_root and ssh_deletekeys that keeps the safe default.
	"~/bool_true": "null is the default", "~/str": "null is missing", "~/int": "null is missing",
}

func TestDecodeAsCloudInit(t *testing.T) {
	values := []string{
		"yes", "no", "on", "off", "true", "false", "True", "FALSE", "y", "Y", "n", "N",
		"1", "0", "-3", "010", "0x1f", "1_000", "1.0", "1.5", "-0.5", "1e3", ".inf", "2.",
		"'1'", "' 7 '", "'yes'", "'off'", "'true '", "'0'", "''", "maybe", "hello world",
		"' padded '", "[]", "[a, b]", "[' a ', b]", "2001-01-01", "~",
	}
	d := newDifferences(t, decodeDifferences)
	oracleValues(t, decodeOracle, values, func(v string, x any, _ bool, w decoded) {
		check := func(form string, agree bool, got, cloudInit any) { d.check(v, form, agree, got, cloudInit) }
		one := func(field string) (probe, error) {
			var p probe
			err := ccfg.DecodeValue(map[string]any{field: x}, "k", &p)
			return p, err
		}
		if p, err := one("is_true"); err == nil {
			check("is_true", p.IsTrue == w.IsTrue, p.IsTrue, w.IsTrue)
		}
		if p, err := one("not_false"); err == nil {
			check("not_false", p.NotFalse == w.NotFalse, p.NotFalse, w.NotFalse)
		}
		if p, err := one("bool_true"); err == nil {
			check("bool_true", p.BoolTrue == w.BoolTrue, p.BoolTrue, w.BoolTrue)
		}
		if p, err := one("truthy"); err == nil {
			check("truthy", p.Truthy == w.Truthy, p.Truthy, w.Truthy)
		}
		if _, isList := x.([]any); !isList {
			p, err := one("str")
			check("str", err == nil && p.Str == w.Str, p.Str, w.Str)
		}
		if p, err := one("list"); err == nil || w.List != nil {
			// Decode refuses what get_cfg_option_list would make of
			// a lone non-string (its str()): a list of strings or a
			// string is what a module can use.
			_, lone := x.(string)
			_, list := x.([]any)
			switch {
			case x == nil:
				// get_cfg_option_list's [] for None; Decode: none.
				check("list", err == nil && len(p.List) == 0 && len(w.List) == 0, p.List, w.List)
			case lone || list:
				check("list", err == nil && fmt.Sprint(p.List) == fmt.Sprint(w.List), p.List, w.List)
			case err == nil:
				t.Errorf("%s: list: Decode takes a lone %T", v, x)
			}
		}
		p, err := one("int")
		switch {
		case w.Int == nil:
			check("int", err != nil, p.Int, "int() raises")
		default:
			check("int", err == nil && p.Int == *w.Int, fmt.Sprint(p.Int, " ", err), *w.Int)
		}
	})
	d.done()
}
