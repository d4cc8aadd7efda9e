package pyjson

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/oracle"
)

// Dumps against Python's json.dumps(sort_keys=True) itself, compact and
// with cloud-init's indent=1 and a wider one: nesting, empty containers,
// escapes, non-ASCII and astral characters, numbers as json.load reads
// them.
func TestDumpsMatchesPython(t *testing.T) {
	doc := `{"run_list": ["a", "b"], "b": {"x": 1.0, "y": null, "z": true, "u": "é\"\n\u0001\ud83d\ude00<\u007f"},
		"empty": {}, "none": [], "n": [1, -0, 1e3, 2.5e-7, 12345678901234567890, 0.1], "nested": [[{}], {"k": [[]]}]}`
	dec := json.NewDecoder(strings.NewReader(doc))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	for _, indent := range []int{-1, 0, 1, 4} {
		var want string
		oracle.Run(t, `a = json.load(sys.stdin); print(json.dumps(json.dumps(json.loads(a["doc"]), sort_keys=True, indent=None if a["indent"] < 0 else a["indent"])))`,
			map[string]any{"doc": doc, "indent": indent}, &want)
		got, err := Dumps(v, indent)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("indent %d:\n got %s\nwant %s", indent, got, want)
		}
	}
	if _, err := Dumps(map[string]any{"c": make(chan int)}, 1); err == nil {
		t.Errorf("Dumps of a channel: no error")
	}
}
