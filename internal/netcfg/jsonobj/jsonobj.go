// Package jsonobj reads a decoded JSON document (numbers kept as
// json.Number) as typed values for netcfg's network_data.json parser:
// an object's strings, integers, lists and objects by key, and the
// scalars or lists cloud-init takes as a parameter value or a list of
// strings. Errors name the key and the JSON type found.
package jsonobj

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// Object is a decoded JSON object.
type Object map[string]any

// Str is the string (or number, as text) under key, and whether there
// is one (absent and null are not).
func (o Object) Str(key string) (string, bool, error) {
	v, ok := o[key]
	if !ok || v == nil {
		return "", false, nil
	}
	switch v := v.(type) {
	case string:
		return v, true, nil
	case json.Number:
		return v.String(), true, nil
	}
	return "", false, fmt.Errorf("%s: want a string, have %s", key, scalar.JSONNoun(v))
}

// Integer is the integer (a number or a numeric string) under key, and
// whether there is one.
func (o Object) Integer(key string) (int, bool, error) {
	v, ok := o[key]
	if !ok || v == nil {
		return 0, false, nil
	}
	var s string
	switch v := v.(type) {
	case json.Number:
		s = v.String()
	case string:
		s = strings.TrimSpace(v)
	default:
		return 0, false, fmt.Errorf("%s: want an integer, have %s", key, scalar.JSONNoun(v))
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, false, fmt.Errorf("%s: %q is not an integer", key, s)
	}
	return n, true, nil
}

// List is the list under key; nil when absent or null.
func (o Object) List(key string) ([]any, error) {
	v, ok := o[key]
	if !ok || v == nil {
		return nil, nil
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a list, have %s", key, scalar.JSONNoun(v))
	}
	return l, nil
}

// Objects is the list of objects under key; nil when absent or null.
func (o Object) Objects(key string) ([]Object, error) {
	l, err := o.List(key)
	if err != nil {
		return nil, err
	}
	objs := make([]Object, len(l))
	for i, v := range l {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d]: want an object, have %s", key, i, scalar.JSONNoun(v))
		}
		objs[i] = m
	}
	return objs, nil
}

// Decode decodes data as exactly one JSON object, numbers kept as
// json.Number.
func Decode(data []byte) (Object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var top any
	if err := dec.Decode(&top); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON object")
	}
	root, ok := top.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a JSON object, have %s", scalar.JSONNoun(top))
	}
	return Object(root), nil
}

// ParamString renders a JSON scalar or list of scalars as a parameter value;
// lists are joined with spaces (as cloud-init's ENI renderer does).
func ParamString(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case json.Number:
		return v.String(), nil
	case bool:
		if v {
			return "true", nil
		}
		return "false", nil
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			s, err := ParamString(e)
			if err != nil {
				return "", err
			}
			if _, ok := e.([]any); ok {
				return "", errors.New("nested list")
			}
			parts[i] = s
		}
		return strings.Join(parts, " "), nil
	}
	return "", fmt.Errorf("want a value, have %s", scalar.JSONNoun(v))
}

// StringList accepts a list of strings or one whitespace-separated string,
// as cloud-init's _normalize_subnet listify does.
func StringList(v any) ([]string, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return strings.Fields(v), nil
	case []any:
		out := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("[%d]: want a string, have %s", i, scalar.JSONNoun(e))
			}
			out[i] = s
		}
		return out, nil
	}
	return nil, fmt.Errorf("want a list, have %s", scalar.JSONNoun(v))
}
