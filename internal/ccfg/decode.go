package ccfg

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/pyyaml"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// Decode reads cfg[key] (the merged cloud-config, as userdata.Merge makes
// it) into a T. ok is false when the key is missing, or null where the
// schema takes null (NullEmpty reads it as an empty map) or for a scalar;
// v is then the field's default, if it has one. A null map of keys (a
// struct type) the schema refuses is an error, as cloud-init's module
// fails on None. It reads as
// cloud-init's modules do, not as its schema: a number where a string is
// wanted is its Python str(), a boolean is util.is_true (with "y"), a lone
// string where a list of strings is wanted is a one-item list, and a key
// the type does not declare is ignored (the schema check reports it, with
// its line). TestDecodeAsCloudInit holds these readings to cloud-init's
// own helpers (util.is_true, is_false, get_cfg_option_list, str(),
// int()) on 40 values, with its differences listed (null is the key not
// given, where cloud-init reads is_true(None) or str(None)). A value
// Decode cannot read is an error naming its key path; so is a key that is
// not a field of Config of type T (or *T).
func Decode[T any](cfg map[string]any, key string) (v T, ok bool, err error) {
	k, declared := lookup(key)
	want := reflect.TypeFor[T]()
	if !declared || (k.Type != want && (k.Type.Kind() != reflect.Pointer || k.Type.Elem() != want)) {
		// A module's mistake, not the user's: the key is not Config's,
		// or not of this type.
		return v, false, fmt.Errorf("ccfg: %s is not a key of type %s in ccfg.Config", key, want)
	}
	raw, present := cfg[key]
	if present && raw == nil && k.Null == NullInvalid && want.Kind() == reflect.Struct {
		// The schema refuses it, and the cloud-init module that reads
		// a map of keys fails on None (TestNullConfigAsCloudInit). A
		// list or a map by any name (util.get_cfg_option_list,
		// cfg.get(key, {})) reads null as empty.
		return v, true, wrongType(key, "a map", nil)
	}
	if !present || (raw == nil && k.Null != NullEmpty) {
		if k.opts.def != nil {
			if err := decode(reflect.ValueOf(&v).Elem(), *k.opts.def, key, k.opts); err != nil {
				panic(fmt.Sprintf("ccfg: %s: default %q: %v", key, *k.opts.def, err))
			}
		}
		return v, false, nil
	}
	if raw == nil {
		raw = map[string]any{}
	}
	if err := decode(reflect.ValueOf(&v).Elem(), raw, key, k.opts); err != nil {
		return v, true, err
	}
	return v, true, nil
}

// GivenNull tells whether cfg gives key as null, which Decode reads as
// the key not given. A few of cloud-init's readings tell the two apart:
// util.get_cfg_option_list reads a null as [] where a key not given is its
// default (ssh_key_console_blacklist's ssh-dss, ssh_genkeytypes' the
// image's types), and is_key_in_nested_dict finds a null (ssh_import_id).
// key must be one of Config's.
func GivenNull(cfg map[string]any, key string) bool {
	if _, declared := lookup(key); !declared {
		panic(fmt.Sprintf("ccfg: %s is not a key of ccfg.Config", key))
	}
	return isNull(cfg, key)
}

// DecodeValue reads raw into *out as Decode does, naming path in errors.
func DecodeValue(raw any, path string, out any) error {
	return decode(reflect.ValueOf(out).Elem(), raw, path, options{})
}

// String is Python's str() of a YAML scalar, as cloud-init formats one
// where it wants text: True/False, a float as Python writes it (1.0, not
// 1).
func String(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case []byte:
		return string(t)
	case bool:
		if t {
			return "True"
		}
		return "False"
	case float64:
		return pyyaml.FloatRepr(t)
	}
	return fmt.Sprint(v)
}

// IsTrue is cloud-init's util.is_true, which also takes "y" (cloud-init
// does not).
func IsTrue(v any) bool { return scalar.IsTrue(v, "y") }

// IsFalse is cloud-init's util.is_false, which also takes "n".
func IsFalse(v any) bool { return scalar.IsFalse(v, "n") }

func wrongType(path, want string, v any) error {
	return fmt.Errorf("%s: want %s, got %s", path, want, scalar.YAMLNoun(v))
}

func isCollection(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

func decode(out reflect.Value, raw any, path string, o options) error {
	if out.CanAddr() && out.Addr().Type().Implements(reflect.TypeFor[Decoder]()) {
		return out.Addr().Interface().(Decoder).DecodeCC(raw, path)
	}
	switch out.Kind() {
	case reflect.Pointer:
		if raw == nil {
			return nil
		}
		p := reflect.New(out.Type().Elem())
		if err := decode(p.Elem(), raw, path, o); err != nil {
			return err
		}
		out.Set(p)
		return nil
	case reflect.Interface:
		if raw != nil {
			out.Set(reflect.ValueOf(raw))
		}
		return nil
	case reflect.String:
		if raw == nil || isCollection(raw) {
			return wrongType(path, "a string", raw)
		}
		if _, isBytes := raw.([]byte); o.strict && !isBytes {
			if _, ok := raw.(string); !ok {
				return wrongType(path, "a string", raw)
			}
		}
		out.SetString(String(raw))
	case reflect.Bool:
		switch {
		case o.truthy:
			out.SetBool(scalar.Truthy(raw))
		case o.notFalse:
			out.SetBool(!IsFalse(raw))
		default:
			out.SetBool(IsTrue(raw))
		}
	case reflect.Int:
		n, err := Int(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out.SetInt(int64(n))
	case reflect.Float64:
		f, err := toFloat(raw)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out.SetFloat(f)
	case reflect.Slice:
		return decodeList(out, raw, path, o)
	case reflect.Map:
		m, ok := raw.(map[string]any)
		if !ok {
			return wrongType(path, "a map", raw)
		}
		mv := reflect.MakeMapWithSize(out.Type(), len(m))
		for k, v := range m {
			e := reflect.New(out.Type().Elem()).Elem()
			if v != nil || e.Kind() == reflect.Interface {
				if err := decode(e, v, path+"."+k, options{}); err != nil {
					return err
				}
			}
			mv.SetMapIndex(reflect.ValueOf(k), e)
		}
		out.Set(mv)
	case reflect.Struct:
		return decodeStruct(out, raw, path)
	default:
		panic(fmt.Sprintf("ccfg: %s: cannot decode into %s", path, out.Type()))
	}
	return nil
}

// decodeList reads a list; a lone scalar where a list of scalars is
// wanted is a one-item list (cloud-init's modules take a string for a
// list of one). Items of a list of strings are trimmed. With strict or
// untrimmed, the items are read strictly and kept as they are; strict
// also refuses a lone string, untrimmed (util.get_cfg_option_list) takes
// one, but no other scalar.
func decodeList(out reflect.Value, raw any, path string, o options) error {
	strict := o.strict || o.untrimmed
	l, ok := raw.([]any)
	if !ok {
		_, isString := raw.(string)
		if o.strict || (o.untrimmed && !isString) || isCollection(raw) || out.Type().Elem().Kind() != reflect.String {
			return wrongType(path, "a list", raw)
		}
		l = []any{raw}
	}
	sv := reflect.MakeSlice(out.Type(), len(l), len(l))
	for i, item := range l {
		p := path + "." + strconv.Itoa(i)
		if err := decode(sv.Index(i), item, p, options{strict: strict}); err != nil {
			return err
		}
		if sv.Index(i).Kind() == reflect.String && !strict {
			sv.Index(i).SetString(strings.TrimSpace(sv.Index(i).String()))
		}
	}
	out.Set(sv)
	return nil
}

func decodeStruct(out reflect.Value, raw any, path string) error {
	m, ok := raw.(map[string]any)
	if !ok {
		return wrongType(path, "a map", raw)
	}
	for _, f := range fields(out.Type()) {
		fv := out.FieldByIndex(f.index)
		v, present := m[f.key]
		if !present || v == nil {
			if f.opts.def != nil {
				if err := decode(fv, *f.opts.def, path+"."+f.key, f.opts); err != nil {
					panic(fmt.Sprintf("ccfg: %s: default %q: %v", path+"."+f.key, *f.opts.def, err))
				}
			}
			continue
		}
		if err := decode(fv, v, path+"."+f.key, f.opts); err != nil {
			return err
		}
	}
	return nil
}

// decodeEachKey reads the map v into the struct out points to (a type
// without its own DecodeCC) one key at a time, as a module that reads each
// key only when it comes to it: a key that cannot be read is left zero and
// its error is in errs, by key; the other keys are read all the same. A
// null or missing key is left zero (no default). v that is not a map is
// the error.
func decodeEachKey(out, v any, path string) (errs map[string]error, err error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, wrongType(path, "a map", v)
	}
	ov := reflect.ValueOf(out).Elem()
	for _, f := range fields(ov.Type()) {
		x, ok := m[f.key]
		if !ok || x == nil {
			continue
		}
		if err := decode(ov.FieldByIndex(f.index), x, path+"."+f.key, f.opts); err != nil {
			if errs == nil {
				errs = map[string]error{}
			}
			errs[f.key] = err
		}
	}
	return errs, nil
}

// Int reads an integer as cloud-init's modules do (int()): an integer, a
// float truncated, a string of digits.
func Int(v any) (int, error) {
	switch t := v.(type) {
	case int:
		return t, nil
	case float64:
		// int() of a float; inf and nan raise, and Go's conversion of
		// them (or of a float past int64) is undefined.
		if t != t || t >= 1<<63 || t < -(1<<63) {
			return 0, fmt.Errorf("want an integer, got %s", pyyaml.FloatRepr(t))
		}
		return int(t), nil
	case string:
		if n, err := strconv.Atoi(strings.TrimSpace(t)); err == nil {
			return n, nil
		}
	}
	return 0, fmt.Errorf("want an integer, got %s", scalar.YAMLNoun(v))
}

// toFloat reads a number: an integer, a float, a string of one.
func toFloat(v any) (float64, error) {
	switch t := v.(type) {
	case int:
		return float64(t), nil
	case float64:
		return t, nil
	case string:
		if f, err := strconv.ParseFloat(strings.TrimSpace(t), 64); err == nil {
			return f, nil
		}
	}
	return 0, fmt.Errorf("want a number, got %s", scalar.YAMLNoun(v))
}
