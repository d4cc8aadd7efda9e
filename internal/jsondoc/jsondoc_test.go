package jsondoc

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecode(t *testing.T) {
	for _, tt := range []struct {
		in, err string
	}{
		{`{"a": 1}`, ""},
		{" [1, 2]\n", ""},
		{`{"a": }`, "parse doc: invalid JSON at byte 7 (line 1:7): invalid character '}' looking for beginning of value"},
		{"{\n\"a\": 1,\n", "parse doc: invalid JSON at byte 10 (line 3:1): unexpected end of JSON input"},
		{"", "parse doc: invalid JSON at byte 0 (line 1:1): unexpected end of JSON input"},
		{`{} {}`, "parse doc: invalid JSON at byte 4 (line 1:4): data after the top-level value"},
	} {
		_, err := Decode("doc", []byte(tt.in))
		if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("Decode(%q) = %v, want %q", tt.in, err, tt.err)
		}
	}
	v, err := Decode("doc", []byte(`{"n": 12345678901234567890.5}`))
	if n, ok := v.(map[string]any)["n"].(json.Number); err != nil || !ok || n.String() != "12345678901234567890.5" {
		t.Errorf("a number did not survive as written: %#v, %v", v, err)
	}
	if _, err := Decode("x", []byte(strings.Repeat("[", 20000))); err == nil {
		t.Error("deep nesting: no error")
	}
}
