package pyfmt

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// oracleMap is the mapping every oracle template is formatted with.
var oracleMap = map[string]string{
	"a":          "x",
	"label":      "data",
	"filesystem": "ext4",
	"device":     "/dev/vdb",
	"region":     "us-east-1",
	"empty":      "",
	"e":          "é",
	"q":          "it's",
	"dq":         `say "hi"`,
	"both":       `it's "so"`,
	"ab":         "ab",
	"ctl":        "\x00\n\t\r\\\x1f\x7f\u0080\u00a0\u00ad\u200b\u0378 z",
	"wide":       "\U0001F600\u4e2d\U000e0001",
	"bad":        "a\xffb",
	"a(b)c":      "nested",
	"%":          "percent",
}

// oracleTemplates are run through Python 3 and Format; they must agree.
var oracleTemplates = []string{
	"", "plain text", "no conversions at all: ( ) s",
	"%(a)s", "%(label)s", "%(filesystem)s", "%(device)s", "%(empty)s|",
	"mkfs -t %(filesystem)s -L %(label)s %(device)s",
	"http://%(region)s.ec2.archive.ubuntu.com/ubuntu/",
	"100%%", "%%(label)s", "%%%(a)s%%", "%%%%",
	"%(missing)s", "%(label)s %(missing)s", "%()s", "%(Label)s",
	"%", "abc%", "% ", "%(a)s%", "%(a)", "%(a)5", "%(a)-", "%(a", "%(a)s%(",
	"%(a)d", "%(a)i", "%(a)u", "%(a)x", "%(a)X", "%(a)o", "%(a)e", "%(a)f", "%(a)g", "%(a)G",
	"%(a)r", "%(q)r", "%(dq)r", "%(both)r", "%(e)r", "%(e)a", "%(ctl)r", "%(ctl)a",
	"%(wide)r", "%(wide)a", "%(bad)s", "%(bad)r", "%(bad)a",
	"%(a)c", "%(e)c", "%(ab)c", "%(empty)c", "%(a)3c|", "%(a)-3c|", "%(a).0c|",
	"%(a)10s|", "%(a)-5s|", "%(a)05s|", "%(a)+s", "%(a) s", "%(a)#s", "%(a)0-5s|",
	"%(a)- 3.2s|", "%(label).2s", "%(label).s|", "%(label).0s|", "%(e)3s|",
	"%(wide)5.2s|", "%(a)10.1r|", "%(bad)4s|", "%(bad).2s|",
	"%(a)ls", "%(a)hs", "%(a)Ls", "%(a)lls", "%(a)l", "%(a)lz",
	"%(a)z", "%(missing)z", "%(a)%", "%(missing)%", "%(a)%%", "%5%", "%-%",
	"%(a)é", "%(a)\xff",
	"%(a(b)c)s", "%(a(b)s", "%(%)s", "%(a)s and %(a)s",
	"%(a)*s", "%(a).*s", "%(missing)*s", "%(a)*z",
	"%(a)999999999999999999999s", "%(a).9999999999s", "%(a).2147483647s|",
	"%s", "%r", "%a", "%5s", "%c", "%d", "%x", "%f", "%z", "%*s", "%.*s",
	"%(a)s %s", "%(a)s %z", "%(a)s %5%", "%(a)s %*s", "%(a)s %5", "%(a)s %%",
	"%s %(a)s", "%(a)70000s", "%(a)40000s%(a)40000s", "%(a)65537s", "%(a)30000s%(a)-30000s|",
	"über %(e)s ∂ %(wide)s",
}

// refused are the templates Python formats and Format refuses on
// purpose (Unsupported): a conversion without a name formats the whole
// mapping, and padding past MaxPad.
var refused = map[string]bool{
	"%s": true, "%r": true, "%a": true, "%5s": true, "%s %(a)s": true,
	"%(a)70000s": true, "%(a)40000s%(a)40000s": true,
}

// pythonFormat is Python's half of the oracle: each template and the
// mapping are sent in hex (bytes decoded with surrogateescape, so invalid
// UTF-8 goes through), and each result comes back as {"ok": hex} or
// {"err": exception type, "msg": str(exception)}.
//
// Python's semantics (Objects/unicodeobject.c, PyUnicode_Format, 3.11):
// "%%" is "%"; "%(key)" looks key up in the mapping at once (KeyError);
// then flags "-+ #0", a width (digits or "*"), "." and a precision, one
// of h, l, L ignored, and the conversion character; an end of the string
// anywhere there is "incomplete format" (ValueError), an unknown
// character "unsupported format character" (ValueError). A conversion
// without a key takes the next argument, which for a mapping is the
// mapping itself the first time and "not enough arguments" (TypeError)
// after any other conversion.
const pythonFormat = `
import json, sys
def dec(h): return bytes.fromhex(h).decode("utf-8", "surrogateescape")
inp = json.load(sys.stdin)
m = {dec(k): dec(v) for k, v in inp["map"].items()}
out = []
for t in inp["templates"]:
    try:
        out.append({"ok": (dec(t) % m).encode("utf-8", "surrogateescape").hex()})
    except Exception as e:
        out.append({"err": type(e).__name__, "msg": str(e)})
json.dump(out, sys.stdout)
`

type pyResult struct {
	OK  *string `json:"ok"`
	Err string  `json:"err"`
	Msg string  `json:"msg"`
}

// runPython formats templates with oracleMap in /usr/bin/python3; the
// test fails without it.
func runPython(t *testing.T, templates []string) []pyResult {
	t.Helper()
	in := map[string]any{"map": map[string]string{}, "templates": []string{}}
	for k, v := range oracleMap {
		in["map"].(map[string]string)[hex.EncodeToString([]byte(k))] = hex.EncodeToString([]byte(v))
	}
	var ts []string
	for _, s := range templates {
		ts = append(ts, hex.EncodeToString([]byte(s)))
	}
	in["templates"] = ts
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/usr/bin/python3", "-c", pythonFormat)
	cmd.Stdin = strings.NewReader(string(b))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3, the oracle: %v", err)
	}
	var res []pyResult
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(templates) {
		t.Fatalf("python3 output %q: %v", out, err)
	}
	return res
}

func TestFormatMatchesPython(t *testing.T) {
	if len(oracleTemplates) < 30 {
		t.Fatal("the oracle table is too small")
	}
	for i, py := range runPython(t, oracleTemplates) {
		tmpl := oracleTemplates[i]
		got, err := Format(tmpl, oracleMap)
		var fe *Error
		switch {
		case py.OK != nil:
			want, _ := hex.DecodeString(*py.OK)
			if refused[tmpl] {
				if !errors.As(err, &fe) || fe.Kind != Unsupported {
					t.Errorf("%q: got %q, %v; want it refused (Python gives %q)", tmpl, got, err, want)
				}
				continue
			}
			if err != nil || got != string(want) {
				t.Errorf("%q: got %q, %v; Python gives %q", tmpl, got, err, want)
			}
		case !errors.As(err, &fe):
			t.Errorf("%q: got %q, %v; Python raises %s: %s", tmpl, got, err, py.Err, py.Msg)
		case fe.Kind.String() != py.Err || fe.Msg != py.Msg:
			t.Errorf("%q: got %s: %s; Python raises %s: %s", tmpl, fe.Kind, fe.Msg, py.Err, py.Msg)
		}
	}
}
