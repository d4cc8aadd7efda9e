package jsondoc

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Mapping is a metadata document that must be a mapping, decoded from
// YAML or JSON (DecodeMapping).
type Mapping struct {
	// M is the mapping with values encoding/json can write (FromYAML);
	// never nil.
	M map[string]any
	// Text holds the top-level scalars as written, so that an instance
	// id of 0123 stays "0123" and does not become 83 (nor true "True").
	Text map[string]string
	// Nodes are the top-level values' YAML nodes, for line numbers;
	// none when the document was read as JSON.
	Nodes map[string]*yaml.Node
	// Empty: the document was empty or null (no mapping at all).
	Empty bool
}

// DecodeMapping decodes b, YAML or JSON, which must be a mapping, empty or
// null: NoCloud's meta-data and network-config, VMware's guestinfo
// metadata (values as yaml.v3 resolves them). JSON that YAML
// refuses (a "\/" escape, tab indentation) is read as JSON. Errors keep
// yaml's line numbers; the caller names the document. A panic in the YAML
// decoder is an error.
func DecodeMapping(b []byte) (m *Mapping, err error) {
	m = &Mapping{M: map[string]any{}, Text: map[string]string{}, Nodes: map[string]*yaml.Node{}}
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("yaml: %v", r)
		}
	}()
	var doc yaml.Node
	if yerr := yaml.Unmarshal(b, &doc); yerr != nil {
		v, jerr := Decode("document", b)
		obj, ok := v.(map[string]any)
		if jerr != nil || !ok {
			return nil, yerr
		}
		m.M = obj
		for k, e := range obj {
			switch e := e.(type) {
			case string:
				m.Text[k] = e
			case json.Number:
				m.Text[k] = e.String()
			case bool:
				m.Text[k] = strconv.FormatBool(e)
			}
		}
		return m, nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		m.Empty = true
		return m, nil
	}
	root := doc.Content[0]
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		m.Empty = true
		return m, nil
	}
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a mapping, got %s", root.Line, nodeKind(root))
	}
	var v any
	if err := root.Decode(&v); err != nil {
		return nil, err
	}
	obj, ok := FromYAML(v).(map[string]any)
	if !ok {
		return nil, errors.New("want a mapping")
	}
	m.M = obj
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, val := root.Content[i], root.Content[i+1]
		for val.Kind == yaml.AliasNode && val.Alias != nil {
			val = val.Alias
		}
		if k.Kind != yaml.ScalarNode {
			continue
		}
		m.Nodes[k.Value] = val
		if val.Kind == yaml.ScalarNode && val.Tag != "!!null" {
			m.Text[k.Value] = val.Value
		}
	}
	return m, nil
}

func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a scalar (" + strings.TrimPrefix(n.ShortTag(), "!!") + ")"
	default:
		return "something else"
	}
}
