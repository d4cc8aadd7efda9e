package userdata

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/scalar"
	"github.com/earlyinit/earlyinit/internal/yamlwalk"
)

// cloud-init reads YAML with PyYAML's SafeLoader, which implements YAML 1.1;
// gopkg.in/yaml.v3 implements YAML 1.2. They disagree on plain scalars: for
// PyYAML `off`, `no`, `yes` and `on` are booleans, `0644` is octal 420 but
// `09` is the string "09", `1:20` is the sexagesimal integer 80 and `1e3` is
// a string. So we let yaml.v3 build the node tree (which keeps positions) and
// resolve plain scalars ourselves with PyYAML's rules.
//
// Values come out as map[string]any, []any, string, int, float64, bool,
// []byte (!!binary) or nil. Timestamps stay strings (PyYAML would build a
// date; every cloud-config key that takes one wants the text anyway).
// Non-string mapping keys become their source text.

// maxYAMLNodes bounds the nodes one document may expand to through aliases
// (the "billion laughs" document), far above any real cloud-config.
const maxYAMLNodes = 1 << 20

// PyYAML's int and float resolvers, compiled on first use.
var (
	yaml11Int = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	})
	yaml11Float = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	})
)

// yaml11Null is PyYAML's null resolver.
func yaml11Null(s string) bool {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return true
	}
	return false
}

// parseYAML parses one YAML document into its node tree. It returns nil for
// an empty document. Like PyYAML's safe_load it refuses a stream holding
// more than one document.
//
// Text that is not UTF-8 (and has no UTF-16 byte order mark) is refused
// with the position of the first bad byte; yaml.v3 would say only
// "invalid leading UTF-8 octet". Nesting deeper than yaml.v3's 10,000
// levels is refused by yaml.v3.
func parseYAML(data []byte) (*yaml.Node, error) {
	if line, col, off, ok := invalidUTF8(data); ok {
		return nil, fmt.Errorf("line %d column %d: not valid UTF-8 (byte offset %d): YAML must be UTF-8", line, col, off)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, fmt.Errorf("expected a single YAML document, found another at line %d", extra.Line)
	} else if !errors.Is(err, io.EOF) {
		return nil, err
	}
	if doc.Kind == yaml.DocumentNode {
		if len(doc.Content) == 0 {
			return nil, nil
		}
		return doc.Content[0], nil
	}
	return &doc, nil
}

// invalidUTF8 finds the first byte of data that is not UTF-8: its 1-based
// line and column (in characters) and its offset. Text starting with a
// UTF-16 byte order mark is left to the YAML parser.
func invalidUTF8(data []byte) (line, col, off int, bad bool) {
	if utf8.Valid(data) || bytes.HasPrefix(data, []byte{0xff, 0xfe}) || bytes.HasPrefix(data, []byte{0xfe, 0xff}) {
		return 0, 0, 0, false
	}
	line, col = 1, 1
	for off < len(data) {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			return line, col, off, true
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
		off += size
	}
	return 0, 0, 0, false
}

// loadYAML parses data and resolves it to plain Go values as PyYAML would.
func loadYAML(data []byte) (any, error) {
	n, err := parseYAML(data)
	if err != nil || n == nil {
		return nil, err
	}
	r := resolver{yamlwalk.New(maxYAMLNodes)}
	return r.value(n)
}

// resolver resolves a node tree to values, charging its document's budget.
type resolver struct {
	budget *yamlwalk.Budget
}

func (r *resolver) spend(n *yaml.Node) error { return r.budget.Spend(n) }

func (r *resolver) value(n *yaml.Node) (any, error) {
	if err := r.spend(n); err != nil {
		return nil, err
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return r.value(n.Content[0])
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, fmt.Errorf("line %d: unknown alias", n.Line)
		}
		return r.value(n.Alias)
	case yaml.ScalarNode:
		return scalarValue(n)
	case yaml.SequenceNode:
		if err := checkCollectionTag(n, "!!seq"); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := r.value(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		if err := checkCollectionTag(n, "!!map"); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(n.Content)/2)
		if err := r.mapping(n, out); err != nil {
			return nil, err
		}
		return out, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node kind %d", n.Line, n.Kind)
}

// mapping fills out from the mapping node n. Keys given explicitly win over
// keys brought in by a merge key (`<<: *anchor`), as in PyYAML.
func (r *resolver) mapping(n *yaml.Node, out map[string]any) error {
	var merged []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			merged = append(merged, v)
			continue
		}
		key, err := r.key(k)
		if err != nil {
			return err
		}
		val, err := r.value(v)
		if err != nil {
			return err
		}
		out[key] = val
	}
	for _, m := range merged {
		for m.Kind == yaml.AliasNode && m.Alias != nil {
			m = m.Alias
		}
		var sources []*yaml.Node
		switch m.Kind {
		case yaml.MappingNode:
			sources = []*yaml.Node{m}
		case yaml.SequenceNode:
			sources = m.Content
		default:
			return fmt.Errorf("line %d: merge key << needs a mapping or a list of mappings", m.Line)
		}
		for _, s := range sources {
			for s.Kind == yaml.AliasNode && s.Alias != nil {
				s = s.Alias
			}
			if s.Kind != yaml.MappingNode {
				return fmt.Errorf("line %d: merge key << needs a mapping or a list of mappings", s.Line)
			}
			sub := map[string]any{}
			if err := r.mapping(s, sub); err != nil {
				return err
			}
			for k, v := range sub {
				if _, ok := out[k]; !ok {
					out[k] = v
				}
			}
		}
	}
	return nil
}

func (r *resolver) key(k *yaml.Node) (string, error) {
	for k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("line %d column %d: mapping key must be a scalar", k.Line, k.Column)
	}
	if err := r.spend(k); err != nil {
		return "", err
	}
	return k.Value, nil
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && (isPlain(k) || k.Tag == "!!merge")
}

func checkCollectionTag(n *yaml.Node, want string) error {
	if n.Style&yaml.TaggedStyle != 0 && n.Tag != want {
		return fmt.Errorf("line %d column %d: unsupported YAML tag %s", n.Line, n.Column, n.Tag)
	}
	return nil
}

// isPlain says whether a scalar is untagged and unquoted, the only kind
// whose type the YAML 1.1 resolver guesses.
func isPlain(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Style&(yaml.TaggedStyle|yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0
}

func scalarValue(n *yaml.Node) (any, error) {
	s := n.Value
	if isPlain(n) {
		return resolvePlain(s), nil
	}
	if n.Style&yaml.TaggedStyle == 0 {
		return s, nil // quoted or block scalar
	}
	// The value is not quoted: it may be a secret (a password given as
	// !!int); the position finds it.
	bad := func(err error) error {
		return fmt.Errorf("line %d column %d: %s value: %v", n.Line, n.Column, n.Tag, err)
	}
	switch n.Tag {
	case "!!str", "!!python/unicode", "!!timestamp":
		return s, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		b, ok := scalar.Bool(s)
		if !ok {
			return nil, bad(errors.New("not a boolean"))
		}
		return b, nil
	case "!!int":
		if v, ok := parseYAML11Int(s); ok {
			return v, nil
		}
		return nil, bad(errors.New("not an integer"))
	case "!!float":
		if v, ok := parseYAML11Float(s); ok {
			return v, nil
		}
		if v, ok := parseYAML11Int(s); ok {
			if i, isInt := v.(int); isInt {
				return float64(i), nil
			}
		}
		return nil, bad(errors.New("not a float"))
	case "!!binary":
		b, err := base64.StdEncoding.DecodeString(strings.Map(dropSpace, s))
		if err != nil {
			return nil, bad(err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("line %d column %d: unsupported YAML tag %s", n.Line, n.Column, n.Tag)
}

func dropSpace(r rune) rune {
	switch r {
	case ' ', '\t', '\n', '\r':
		return -1
	}
	return r
}

// resolvePlain types a plain scalar as PyYAML's SafeLoader does.
func resolvePlain(s string) any {
	if yaml11Null(s) {
		return nil
	}
	if b, ok := scalar.Bool(s); ok {
		return b
	}
	if v, ok := parseYAML11Int(s); ok {
		return v
	}
	if v, ok := parseYAML11Float(s); ok {
		return v
	}
	return s
}

// parseYAML11Int returns an int, or the text when the value does not fit
// (Python's integers are unbounded; ours are not).
func parseYAML11Int(s string) (any, bool) {
	if !yaml11Int().MatchString(s) {
		return nil, false
	}
	t := strings.ReplaceAll(s, "_", "")
	neg := false
	switch {
	case strings.HasPrefix(t, "-"):
		neg, t = true, t[1:]
	case strings.HasPrefix(t, "+"):
		t = t[1:]
	}
	var u uint64
	var err error
	switch {
	case t == "0":
	case strings.HasPrefix(t, "0b"):
		u, err = strconv.ParseUint(t[2:], 2, 63)
	case strings.HasPrefix(t, "0x"):
		u, err = strconv.ParseUint(t[2:], 16, 63)
	case strings.HasPrefix(t, "0"):
		u, err = strconv.ParseUint(t[1:], 8, 63)
	case strings.Contains(t, ":"):
		for _, d := range strings.Split(t, ":") {
			x, perr := strconv.ParseUint(d, 10, 63)
			if perr != nil || u > (math.MaxInt64-x)/60 {
				return s, true
			}
			u = u*60 + x
		}
	default:
		u, err = strconv.ParseUint(t, 10, 63)
	}
	if err != nil || u > math.MaxInt {
		return s, true
	}
	v := int(u)
	if neg {
		v = -v
	}
	return v, true
}

func parseYAML11Float(s string) (float64, bool) {
	if !yaml11Float().MatchString(s) {
		return 0, false
	}
	t := strings.ReplaceAll(s, "_", "")
	switch strings.ToLower(strings.TrimLeft(t, "+-")) {
	case ".inf":
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case ".nan":
		return math.NaN(), true
	}
	if strings.Contains(t, ":") {
		neg := strings.HasPrefix(t, "-")
		t = strings.TrimLeft(t, "+-")
		var v float64
		parts := strings.Split(t, ":")
		for _, p := range parts {
			x, err := strconv.ParseFloat(p, 64)
			if err != nil {
				return 0, false
			}
			v = v*60 + x
		}
		if neg {
			v = -v
		}
		return v, true
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, false
	}
	return v, true
}
