package jsondoc

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

func TestDecodeObject(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want map[string]any
		err  string
	}{
		{`{"a": "b"}`, map[string]any{"a": "b"}, ""},
		{`{}`, map[string]any{}, ""},
		{`[{"a": 1}]`, nil, "doc: want a JSON object"},
		{`"text"`, nil, "doc: want a JSON object"},
		{`null`, nil, "doc: want a JSON object"},
		{`{"a": }`, nil, "parse doc: invalid JSON at byte 7 (line 1:7): invalid character '}' looking for beginning of value"},
		{`{} []`, nil, "parse doc: invalid JSON at byte 4 (line 1:4): data after the top-level value"},
	} {
		got, err := DecodeObject("doc", []byte(tt.in), nil)
		if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("DecodeObject(%q) error = %v, want %q", tt.in, err, tt.err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("DecodeObject(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
	m, err := DecodeObject("doc", []byte(`{"n": 10000000000000000001}`), nil)
	if n, ok := m["n"].(json.Number); err != nil || !ok || n != "10000000000000000001" {
		t.Errorf("a number did not survive as written: %#v, %v", m, err)
	}
}

// TestDecodeObjectInto: the object is kept whole and its fields taken
// into the struct; a syntax error or a value that is not an object is
// Decode's error, a wrong-typed field Unmarshal's.
func TestDecodeObjectInto(t *testing.T) {
	type doc struct {
		ID   Text   `json:"id"`
		Zone string `json:"zone"`
	}
	for _, tt := range []struct {
		in   string
		want doc
		keep map[string]any
		err  string
	}{
		{`{"id": 7, "zone": "z", "other": true}`, doc{ID: "7", Zone: "z"}, map[string]any{"id": json.Number("7"), "zone": "z", "other": true}, ""},
		{`{}`, doc{}, map[string]any{}, ""},
		{`{"zone": ["z"]}`, doc{}, nil, "doc: zone: want string, got array"},
		{`{"id": {}}`, doc{}, nil, "doc: id: want string, got object"},
		{`["id"]`, doc{}, nil, "doc: want a JSON object"},
		{`{"id": 1,}`, doc{}, nil, "parse doc: invalid JSON at byte 10 (line 1:10): invalid character '}' looking for beginning of object key string"},
	} {
		var got doc
		m, err := DecodeObject("doc", []byte(tt.in), &got)
		if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("DecodeObject(%s) error = %v, want %q", tt.in, err, tt.err)
			continue
		}
		if !reflect.DeepEqual(m, tt.keep) || (err == nil && got != tt.want) {
			t.Errorf("DecodeObject(%s) = %#v, %#v; want %#v, %#v", tt.in, m, got, tt.keep, tt.want)
		}
	}
}

func TestUnmarshal(t *testing.T) {
	type nested struct {
		Port int `json:"port"`
	}
	type doc struct {
		ID    Text    `json:"id"`
		Name  string  `json:"name"`
		Net   *nested `json:"net"`
		Names []Text  `json:"names"`
	}
	for _, tt := range []struct {
		in   string
		want doc
		err  string
	}{
		{`{"id": "i-1", "name": "a"}`, doc{ID: "i-1", Name: "a"}, ""},
		{`{"id": 12345678901234567890}`, doc{ID: "12345678901234567890"}, ""},
		{`{"id": -1.5e3}`, doc{ID: "-1.5e3"}, ""},
		{`{"id": null}`, doc{}, ""},
		{`{"names": ["a", 2, null]}`, doc{Names: []Text{"a", "2", ""}}, ""},
		{`{"id": {"a": 1}}`, doc{}, "u: id: want string, got object"},
		{`{"id": [1]}`, doc{}, "u: id: want string, got array"},
		{`{"id": true}`, doc{}, "u: id: want string, got bool"},
		{`{"name": 7}`, doc{}, "u: name: want string, got number"},
		{`{"net": {"port": "80"}}`, doc{}, "u: net.port: want int, got string"},
		{`{"names": [false]}`, doc{}, "u: names: want string, got bool"},
		{`[1]`, doc{}, "u: json: cannot unmarshal array into Go value of type jsondoc.doc"},
		{`{`, doc{}, "u: unexpected end of JSON input"},
	} {
		var got doc
		err := Unmarshal("u", []byte(tt.in), &got)
		if (err == nil) != (tt.err == "") || (err != nil && err.Error() != tt.err) {
			t.Errorf("Unmarshal(%s) error = %v, want %q", tt.in, err, tt.err)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Unmarshal(%s) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
	// The error without a key wraps json's.
	var se *json.SyntaxError
	if err := Unmarshal("u", []byte(`{"id": x}`), new(doc)); !errors.As(err, &se) {
		t.Errorf("syntax error: %v does not wrap a *json.SyntaxError", err)
	}
}

func TestTextKeepsOld(t *testing.T) {
	// null keeps what the value held, as encoding/json does for a
	// string.
	v := struct {
		ID Text `json:"id"`
	}{ID: "before"}
	if err := json.Unmarshal([]byte(`{"id": null}`), &v); err != nil || v.ID != "before" {
		t.Errorf("null: %q, %v; want \"before\" kept", v.ID, err)
	}
}
