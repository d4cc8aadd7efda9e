package scalar

import "fmt"

// The three type namers below spell the same decoded values three ways, one
// for each family of messages. They are kept apart so that every existing
// message stays word for word what it was.

// TypeName names the type of a value decoded from YAML (the values
// userdata's decoder produces) as the cloud-config schema does, bare:
// "null", "string", "boolean", "integer" (int), "number" (float64), "list"
// ([]any), "map" (map[string]any), "binary" ([]byte, from !!binary). Any
// other type is named by its Go type (fmt's %T, e.g. "int64").
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int:
		return "integer"
	case float64:
		return "number"
	case []any:
		return "list"
	case map[string]any:
		return "map"
	case []byte:
		return "binary"
	}
	return fmt.Sprintf("%T", v)
}

// YAMLNoun names the type of a cloud-config value with its article, for
// the config modules' messages ("want a map, got a list"): "null", "a
// string", "a boolean", "a number" (int, int64 and float64 alike), "a list"
// ([]any), "a map" (map[string]any). Any other type is "a " and its Go type
// (e.g. "a []uint8").
func YAMLNoun(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int, int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a map"
	}
	return fmt.Sprintf("a %T", v)
}

// JSONNoun names the JSON type of a decoded JSON (or YAML) value with its
// article, for the datasource readers' messages ("want an object, got a
// list"): "null", "a string", "a boolean", "a number" (every Go integer and
// float type, and json.Number or anything else with an Int64 method), "a
// list" ([]any), "an object" (map[string]any or map[any]any). Any other
// type is named by its Go type alone (fmt's %T, without an article).
func JSONNoun(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case map[string]any, map[any]any:
		return "an object"
	case float32, float64, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, interface{ Int64() (int64, error) }:
		return "a number"
	default:
		return fmt.Sprintf("%T", v)
	}
}
