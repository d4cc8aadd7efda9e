package netcfg

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/scalar"
	"github.com/earlyinit/earlyinit/internal/yamlwalk"
)

// ParseYAML parses network config version 1 or 2 (cloud-init's
// network-config), with or without the top-level "network:" key.
// `config: disabled` (under "network:" or at the top) gives a Config with
// Disabled set. Errors name the key path and line: `network-config: line 7:
// ethernets.eth0.addresses[1]: "10.0.0.300/24": invalid IP`.
//
// v2 is interpreted as cloud-init's network_state does (see parseV2), with no
// live system: a v2 ethernet is named by set-name, else by its id.
func ParseYAML(data []byte) (*Config, error) {
	return parseYAML(data, nil)
}

// yamlBudget bounds the nodes visited, aliases included, so that an alias
// bomb cannot make the parser walk an exponential tree.
const yamlBudget = 1 << 16

type yparser struct {
	budget *yamlwalk.Budget
	// macToName names v2 ethernets matched by MAC without set-name, as
	// cloud-init does from the live system. May be nil.
	macToName map[string]string
	// ignored are the key paths read but not kept (Config.Ignored).
	ignored []string
}

// yerror is an error at a YAML node.
type yerror struct {
	line int
	path string
	msg  string
}

func (e *yerror) Error() string {
	if e.path == "" {
		return fmt.Sprintf("line %d: %s", e.line, e.msg)
	}
	return fmt.Sprintf("line %d: %s: %s", e.line, e.path, e.msg)
}

func yerr(n *yaml.Node, path, format string, args ...any) error {
	return &yerror{line: n.Line, path: path, msg: fmt.Sprintf(format, args...)}
}

func parseYAML(data []byte, macToName map[string]string) (*Config, error) {
	p := &yparser{budget: yamlwalk.New(yamlBudget), macToName: macToName}
	c, err := p.parse(data)
	if err != nil {
		return nil, fmt.Errorf("network-config: %w", err)
	}
	if !c.Disabled {
		c.Ignored = append(c.Ignored, p.ignored...)
	}
	return c, nil
}

// node resolves aliases and charges the budget.
func (p *yparser) node(n *yaml.Node) (*yaml.Node, error) {
	n, ok := yamlwalk.Deref(n)
	if !ok {
		return nil, yerr(n, "", "bad alias")
	}
	if p.budget.Spend(n) != nil {
		return nil, yerr(n, "", "%s", p.budget.Exceeded())
	}
	return n, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if isNull(n) {
			return "null"
		}
		return fmt.Sprintf("%q", n.Value)
	}
	return "?"
}

// ykv is one mapping entry, in document order.
type ykv struct {
	key   string
	knode *yaml.Node
	val   *yaml.Node
}

// mapping returns the entries of a mapping (null is an empty mapping).
func (p *yparser) mapping(n *yaml.Node, path string) ([]ykv, error) {
	n, err := p.node(n)
	if err != nil {
		return nil, err
	}
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, yerr(n, path, "want a mapping, have %s", kindName(n))
	}
	var kvs []ykv
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, err := p.node(n.Content[i])
		if err != nil {
			return nil, err
		}
		if k.Kind != yaml.ScalarNode {
			return nil, yerr(k, path, "want a scalar key, have %s", kindName(k))
		}
		if k.Value == "<<" && k.Tag == "!!merge" {
			return nil, yerr(k, path, "merge keys are not supported")
		}
		if seen[k.Value] {
			return nil, yerr(k, path, "duplicate key %q", k.Value)
		}
		seen[k.Value] = true
		kvs = append(kvs, ykv{key: k.Value, knode: k, val: n.Content[i+1]})
	}
	return kvs, nil
}

// get returns the value under key in kvs, or nil.
func get(kvs []ykv, key string) *yaml.Node {
	for _, kv := range kvs {
		if kv.key == key {
			return kv.val
		}
	}
	return nil
}

func (p *yparser) list(n *yaml.Node, path string) ([]*yaml.Node, error) {
	n, err := p.node(n)
	if err != nil {
		return nil, err
	}
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, yerr(n, path, "want a list, have %s", kindName(n))
	}
	return n.Content, nil
}

// scalar returns a scalar's text ("" for null).
func (p *yparser) scalar(n *yaml.Node, path string) (string, *yaml.Node, error) {
	n, err := p.node(n)
	if err != nil {
		return "", nil, err
	}
	if isNull(n) {
		return "", n, nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", nil, yerr(n, path, "want a scalar, have %s", kindName(n))
	}
	return n.Value, n, nil
}

// str is scalar under key; "" when absent or null.
func (p *yparser) str(kvs []ykv, key, path string) (string, error) {
	n := get(kvs, key)
	if n == nil {
		return "", nil
	}
	s, _, err := p.scalar(n, join(path, key))
	return s, err
}

func (p *yparser) integer(kvs []ykv, key, path string) (int, bool, error) {
	n := get(kvs, key)
	if n == nil {
		return 0, false, nil
	}
	s, sn, err := p.scalar(n, join(path, key))
	if err != nil || s == "" {
		return 0, false, err
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, false, yerr(sn, join(path, key), "%q is not an integer", s)
	}
	return v, true, nil
}

// boolean accepts a scalar's text as scalar.WordYN reads it: true, yes,
// on, y, 1 and false, no, off, n, 0, in any case (YAML 1.1's booleans, as
// cloud-init reads them, and more).
func (p *yparser) boolean(kvs []ykv, key, path string) (bool, bool, error) {
	n := get(kvs, key)
	if n == nil {
		return false, false, nil
	}
	s, sn, err := p.scalar(n, join(path, key))
	if err != nil || s == "" {
		return false, false, err
	}
	if v, ok := scalar.WordYN(s); ok {
		return v, true, nil
	}
	return false, false, yerr(sn, join(path, key), "%q is not a boolean", s)
}

// nonNegative is integer under key, which must not be negative; 0 when
// absent.
func (p *yparser) nonNegative(kvs []ykv, key, path string) (int, error) {
	v, _, err := p.integer(kvs, key, path)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, yerr(get(kvs, key), join(path, key), "%d is negative", v)
	}
	return v, nil
}

// strings reads a list of scalars, or one whitespace-separated scalar when
// split is set (cloud-init's listify).
func (p *yparser) strings(n *yaml.Node, path string, split bool) ([]string, []*yaml.Node, error) {
	r, err := p.node(n)
	if err != nil {
		return nil, nil, err
	}
	if r.Kind == yaml.ScalarNode && !isNull(r) && split {
		f := strings.Fields(r.Value)
		ns := make([]*yaml.Node, len(f))
		for i := range ns {
			ns[i] = r
		}
		return f, ns, nil
	}
	items, err := p.list(r, path)
	if err != nil {
		return nil, nil, err
	}
	var out []string
	var nodes []*yaml.Node
	for i, it := range items {
		s, sn, err := p.scalar(it, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return nil, nil, err
		}
		out = append(out, s)
		nodes = append(nodes, sn)
	}
	return out, nodes, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (p *yparser) parse(data []byte) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, errors.New("empty document")
	}
	root := doc.Content[0]
	top, err := p.mapping(root, "")
	if err != nil {
		return nil, err
	}
	path := ""
	if n := get(top, "network"); n != nil {
		path = "network"
		if top, err = p.mapping(n, path); err != nil {
			return nil, err
		}
		root = n
	}
	if n := get(top, "config"); n != nil {
		if n, err := p.node(n); err == nil && n.Kind == yaml.ScalarNode && n.Value == "disabled" {
			return &Config{Disabled: true}, nil
		}
	}
	vn := get(top, "version")
	if vn == nil {
		return nil, yerr(root, path, "no version")
	}
	v, vnode, err := p.scalar(vn, join(path, "version"))
	if err != nil {
		return nil, err
	}
	switch v {
	case "1":
		cn := get(top, "config")
		if cn == nil {
			return nil, yerr(root, path, "version 1 without config")
		}
		return p.parseV1(cn, join(path, "config"))
	case "2":
		return p.parseV2(top, path)
	}
	return nil, yerr(vnode, join(path, "version"), "unsupported version %q", v)
}
