// Package yamlread reads a network-config YAML document's node tree
// (yaml.v3's) as typed values for netcfg's v1 and v2 parsers: mappings in
// document order, lists, scalars, integers and booleans. Aliases are
// followed and every node read is charged to one yamlwalk.Budget, so an
// alias bomb cannot make a parser walk an exponential tree. Errors name
// the key path and line: `line 7: ethernets.eth0.mtu: "x" is not an
// integer`.
package yamlread

import (
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/scalar"
	"github.com/earlyinit/earlyinit/internal/yamlwalk"
)

// Reader reads the nodes of one document, charging each to its budget.
type Reader struct {
	budget *yamlwalk.Budget
}

// New is a Reader that visits at most budget nodes, aliases included.
func New(budget int) *Reader {
	return &Reader{budget: yamlwalk.New(budget)}
}

// Error is an error at a YAML node.
type Error struct {
	Line int
	Path string
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Msg)
	}
	return fmt.Sprintf("line %d: %s: %s", e.Line, e.Path, e.Msg)
}

// Errorf is an *Error at node n and key path path.
func Errorf(n *yaml.Node, path, format string, args ...any) error {
	return &Error{Line: n.Line, Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Node resolves aliases and charges the budget.
func (r *Reader) Node(n *yaml.Node) (*yaml.Node, error) {
	n, ok := yamlwalk.Deref(n)
	if !ok {
		return nil, Errorf(n, "", "bad alias")
	}
	if r.budget.Spend(n) != nil {
		return nil, Errorf(n, "", "%s", r.budget.Exceeded())
	}
	return n, nil
}

// IsNull tells whether n is a null scalar.
func IsNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// KindName describes n for an error: "a mapping", "a list", "null" or the
// scalar's quoted text.
func KindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if IsNull(n) {
			return "null"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "?"
}

// KV is one mapping entry, in document order.
type KV struct {
	Key   string
	KNode *yaml.Node
	Val   *yaml.Node
}

// Mapping returns the entries of a mapping (null is an empty mapping).
func (r *Reader) Mapping(n *yaml.Node, path string) ([]KV, error) {
	n, err := r.Node(n)
	if err != nil {
		return nil, err
	}
	if IsNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, Errorf(n, path, "want a mapping, have %s", KindName(n))
	}
	var kvs []KV
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, err := r.Node(n.Content[i])
		if err != nil {
			return nil, err
		}
		if k.Kind != yaml.ScalarNode {
			return nil, Errorf(k, path, "want a scalar key, have %s", KindName(k))
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			return nil, Errorf(k, path, "merge keys are not supported")
		}
		if seen[k.Value] {
			return nil, Errorf(k, path, "duplicate key %q", k.Value)
		}
		seen[k.Value] = true
		kvs = append(kvs, KV{Key: k.Value, KNode: k, Val: n.Content[i+1]})
	}
	return kvs, nil
}

// Get returns the value under key in kvs, or nil.
func Get(kvs []KV, key string) *yaml.Node {
	for _, kv := range kvs {
		if kv.Key == key {
			return kv.Val
		}
	}
	return nil
}

// List returns the items of a list (null is an empty list).
func (r *Reader) List(n *yaml.Node, path string) ([]*yaml.Node, error) {
	n, err := r.Node(n)
	if err != nil {
		return nil, err
	}
	if IsNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, Errorf(n, path, "want a list, have %s", KindName(n))
	}
	return n.Content, nil
}

// Scalar returns a scalar's text ("" for null).
func (r *Reader) Scalar(n *yaml.Node, path string) (string, *yaml.Node, error) {
	n, err := r.Node(n)
	if err != nil {
		return "", nil, err
	}
	if IsNull(n) {
		return "", n, nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", nil, Errorf(n, path, "want a scalar, have %s", KindName(n))
	}
	return n.Value, n, nil
}

// Str is Scalar under key; "" when absent or null.
func (r *Reader) Str(kvs []KV, key, path string) (string, error) {
	n := Get(kvs, key)
	if n == nil {
		return "", nil
	}
	s, _, err := r.Scalar(n, Join(path, key))
	return s, err
}

// Integer is the integer under key, and whether there is one (not absent,
// null or empty).
func (r *Reader) Integer(kvs []KV, key, path string) (int, bool, error) {
	n := Get(kvs, key)
	if n == nil {
		return 0, false, nil
	}
	s, sn, err := r.Scalar(n, Join(path, key))
	if err != nil || s == "" {
		return 0, false, err
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, false, Errorf(sn, Join(path, key), "%q is not an integer", s)
	}
	return v, true, nil
}

// Boolean accepts a scalar's text as scalar.WordYN reads it: true, yes,
// on, y, 1 and false, no, off, n, 0, in any case (YAML 1.1's booleans, as
// cloud-init reads them, and more).
func (r *Reader) Boolean(kvs []KV, key, path string) (bool, bool, error) {
	n := Get(kvs, key)
	if n == nil {
		return false, false, nil
	}
	s, sn, err := r.Scalar(n, Join(path, key))
	if err != nil || s == "" {
		return false, false, err
	}
	if v, ok := scalar.WordYN(s); ok {
		return v, true, nil
	}
	return false, false, Errorf(sn, Join(path, key), "%q is not a boolean", s)
}

// NonNegative is Integer under key, which must not be negative; 0 when
// absent.
func (r *Reader) NonNegative(kvs []KV, key, path string) (int, error) {
	v, _, err := r.Integer(kvs, key, path)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, Errorf(Get(kvs, key), Join(path, key), "%d is negative", v)
	}
	return v, nil
}

// Strings reads a list of scalars, or one whitespace-separated scalar when
// split is set (cloud-init's listify).
func (r *Reader) Strings(n *yaml.Node, path string, split bool) ([]string, []*yaml.Node, error) {
	n, err := r.Node(n)
	if err != nil {
		return nil, nil, err
	}
	if n.Kind == yaml.ScalarNode && !IsNull(n) && split {
		f := strings.Fields(n.Value)
		ns := make([]*yaml.Node, len(f))
		for i := range ns {
			ns[i] = n
		}
		return f, ns, nil
	}
	items, err := r.List(n, path)
	if err != nil {
		return nil, nil, err
	}
	var out []string
	var nodes []*yaml.Node
	for i, it := range items {
		s, sn, err := r.Scalar(it, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, s)
		nodes = append(nodes, sn)
	}
	return out, nodes, nil
}

// Join is the key path of key under path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
