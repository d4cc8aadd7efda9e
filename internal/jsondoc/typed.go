package jsondoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// DecodeObject is Decode for a document that must be a JSON object: any
// other value is an error naming name ("name: want a JSON object"). If
// into is not nil, the object is also unmarshalled into it, as Unmarshal
// does: a reader keeps the whole document and takes the fields it reads
// into a struct.
func DecodeObject(name string, b []byte, into any) (map[string]any, error) {
	v, err := Decode(name, b)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a JSON object", name)
	}
	if into != nil {
		if err := Unmarshal(name, b, into); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Unmarshal decodes b into v with encoding/json, for the fields a reader
// takes into a struct. An error names name and, for a value of the wrong
// type, its key: "name: droplet_id: want string, got array". Call it on a
// document Decode has accepted, whose syntax errors say more.
func Unmarshal(name string, b []byte, v any) error {
	err := json.Unmarshal(b, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%s: %s: want %s, got %s", name, te.Field, te.Type, te.Value)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// Text is a JSON string or number, kept as its text (an id that one
// service sends as a number and another, or an older version, as a
// string). null leaves it unchanged; any other value is an
// *json.UnmarshalTypeError naming the value's kind.
type Text string

// UnmarshalJSON implements json.Unmarshaler.
func (t *Text) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*t = Text(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return &json.UnmarshalTypeError{Value: kind(b), Type: reflect.TypeFor[string]()}
	}
	*t = Text(n)
	return nil
}

// kind names the kind of a JSON value by its first byte, as
// json.UnmarshalTypeError.Value does.
func kind(b []byte) string {
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	}
	return "value"
}
