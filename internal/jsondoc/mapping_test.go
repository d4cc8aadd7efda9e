package jsondoc

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// DecodeMapping, the one reader of NoCloud's meta-data and VMware's
// guestinfo metadata: YAML or JSON, the scalars' text as written.
func TestDecodeMapping(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		empty    bool
		m        string // JSON of M
		text     map[string]string
		err      string
	}{
		{name: "empty", in: "", empty: true, m: `{}`, text: map[string]string{}},
		{name: "null", in: "~\n", empty: true, m: `{}`, text: map[string]string{}},
		// The values as yaml.v3 reads them (0123 octal, yes a string);
		// the text as written.
		{name: "yaml", in: "instance-id: 0123\nflag: yes\nn: ~\nl: [1]\n", m: `{"flag":"yes","instance-id":83,"l":[1],"n":null}`,
			text: map[string]string{"instance-id": "0123", "flag": "yes"}},
		{name: "json", in: `{"instance-id": "i-1", "n": 10, "b": true}`, m: `{"b":true,"instance-id":"i-1","n":10}`,
			text: map[string]string{"instance-id": "i-1", "n": "10", "b": "true"}},
		// "\/" is JSON, not YAML: read as JSON, numbers and booleans
		// with their text, as in YAML.
		{name: "json only", in: "{\"url\": \"http:\\/\\/x\", \"n\": 1.50, \"b\": false}", m: `{"b":false,"n":1.50,"url":"http://x"}`,
			text: map[string]string{"url": "http://x", "n": "1.50", "b": "false"}},
		{name: "keys", in: "1: int\ntrue: b\nd: 2024-05-06\n", m: `{"1":"int","d":"2024-05-06T00:00:00Z","true":"b"}`,
			text: map[string]string{"1": "int", "true": "b", "d": "2024-05-06"}},
		{name: "list", in: "- a\n", err: "line 1: want a mapping, got a list"},
		{name: "scalar", in: "\n\nword\n", err: "line 3: want a mapping, got a scalar (str)"},
		{name: "broken", in: "a: [1\n", err: "yaml: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeMapping([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(got.M)
			if string(b) != tc.m || got.Empty != tc.empty || !reflect.DeepEqual(got.Text, tc.text) {
				t.Errorf("got M %s empty %v text %v\nwant M %s empty %v text %v", b, got.Empty, got.Text, tc.m, tc.empty, tc.text)
			}
		})
	}
}
