//go:build !initrd

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/earlyinit/earlyinit/internal/pyyaml"
)

// `earlyinit query --format TEMPLATE` is cloud-init query's -f: cloud-init
// renders the template with Jinja over the instance data. earlyinit has no
// Jinja: it substitutes {{ KEY }}, a dotted path into the instance data
// (v1.instance_id, local_hostname, ds.meta_data.local_hostname), with the
// value as Jinja prints it, and refuses every other Jinja construct, so a
// template means the same to both or is refused.

// queryMissing is what cloud-init prints for a key the data lacks
// (cloudinit/templater.py's MISSING_JINJA_PREFIX and the missing name).
const queryMissing = "CI_MISSING_JINJA_VAR/"

// queryPart is a piece of a parsed template: literal text, or a key path.
type queryPart struct {
	text string
	path []string // nil for text
}

// queryKeyPath is what {{ }} may hold: a name, then .name or .index parts.
// Compiled on first use, as every regexp here: no work at start-up.
var queryKeyPath = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$`) })

// parseQueryFormat splits a template into text and {{ KEY }} parts, or
// says which construct it refuses.
func parseQueryFormat(t string) ([]queryPart, error) {
	// Jinja drops a trailing newline, and cloud-init's templater puts it
	// back: the text is as it is.
	var parts []queryPart
	for t != "" {
		i := strings.IndexByte(t, '{')
		if i < 0 || i == len(t)-1 {
			parts = append(parts, queryPart{text: t})
			break
		}
		switch t[i+1] {
		case '%', '#':
			return nil, fmt.Errorf("%q: Jinja statements and comments are not supported, only {{ KEY }} and {{ v1.KEY }}", t[i:i+2])
		case '{':
		default:
			parts = append(parts, queryPart{text: t[:i+1]})
			t = t[i+1:]
			continue
		}
		end := strings.Index(t[i:], "}}")
		if end < 0 {
			return nil, fmt.Errorf("%q: no closing }}", t[i:])
		}
		expr := t[i+2 : i+end]
		if strings.HasPrefix(expr, "-") || strings.HasSuffix(expr, "-") || strings.HasPrefix(expr, "+") || strings.HasSuffix(expr, "+") {
			return nil, fmt.Errorf("{{%s}}: Jinja whitespace control is not supported, only {{ KEY }} and {{ v1.KEY }}", expr)
		}
		key := strings.TrimSpace(expr)
		if !queryKeyPath().MatchString(key) {
			return nil, fmt.Errorf("{{%s}}: not a key path: only {{ KEY }} and {{ v1.KEY }} are supported (no filters, tests, expressions or other Jinja)", expr)
		}
		if i > 0 {
			parts = append(parts, queryPart{text: t[:i]})
		}
		parts = append(parts, queryPart{path: strings.Split(key, ".")})
		t = t[i+end+2:]
	}
	return parts, nil
}

// renderQueryFormat renders parts over the instance data (query's JSON):
// each key path's value as Jinja prints it, a missing last part as
// cloud-init's marker (returned in missing, for its warning). A missing
// part with more after it is an error, as Jinja's UndefinedError is in
// cloud-init (which then prints nothing and exits 1), and so is an object
// or a list, which Jinja would print as a Python repr.
func renderQueryFormat(data []byte, parts []queryPart) (out string, missing []string, err error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var top map[string]any
	if err := d.Decode(&top); err != nil {
		return "", nil, fmt.Errorf("instance data: %w", err)
	}
	vars := jinjaVars(top)
	var b strings.Builder
	for _, p := range parts {
		if p.path == nil {
			b.WriteString(p.text)
			continue
		}
		var v any = vars
		for i, name := range p.path {
			next, ok := jinjaAttr(v, name)
			if !ok {
				if i < len(p.path)-1 {
					return "", nil, fmt.Errorf("{{ %s }}: '%s' is undefined", strings.Join(p.path, "."), name)
				}
				missing = append(missing, name)
				next = queryMissing + name
			}
			v = next
		}
		s, err := jinjaString(v)
		if err != nil {
			return "", nil, fmt.Errorf("{{ %s }}: %w", strings.Join(p.path, "."), err)
		}
		b.WriteString(s)
	}
	return b.String(), missing, nil
}

// jinjaOperators is Jinja's lexer operator_re, with which cloud-init makes
// the underscore alias of a key ("local-hostname": "local_hostname").
var jinjaOperators = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`//|\*\*|==|!=|>=|<=|\+|-|/|\*|%|~|\[|\]|\(|\)|\{|\}|>|<|=|\.|:|\||,|;`)
})

// jinjaVars is cloud-init's convert_jinja_instance_data with key aliases:
// the keys of a "vN" object are copied into the object holding it, and a
// key with an operator in it also has its underscore alias.
func jinjaVars(m map[string]any) map[string]any {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make(map[string]any, len(m))
	for _, k := range keys {
		if sub, ok := m[k].(map[string]any); ok {
			c := jinjaVars(sub)
			out[k] = c
			if len(k) > 1 && k[0] == 'v' && strings.Trim(k[1:], "0123456789") == "" {
				for sk, sv := range c {
					out[sk] = sv
				}
			}
		} else {
			out[k] = m[k]
		}
		if a := jinjaOperators().ReplaceAllString(k, "_"); a != k {
			out[a] = out[k]
		}
	}
	return out
}

// jinjaAttr is Jinja's v.name: an object's key, or a list's element by
// its index.
func jinjaAttr(v any, name string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		r, ok := x[name]
		return r, ok
	case []any:
		if i, err := strconv.Atoi(name); err == nil && i >= 0 && i < len(x) {
			return x[i], true
		}
	}
	return nil, false
}

// jinjaString is a scalar as Jinja prints it: Python's str().
func jinjaString(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		if x {
			return "True", nil
		}
		return "False", nil
	case nil:
		return "None", nil
	case json.Number:
		if !strings.ContainsAny(string(x), ".eE") {
			return string(x), nil
		}
		f, err := x.Float64()
		if err != nil {
			return "", err
		}
		return pyyaml.FloatRepr(f), nil
	case map[string]any:
		return "", fmt.Errorf("an object: --format substitutes strings, numbers, booleans and null; `earlyinit query KEY` prints an object as JSON")
	case []any:
		return "", fmt.Errorf("a list: --format substitutes strings, numbers, booleans and null; `earlyinit query KEY` prints a list as JSON")
	}
	return "", fmt.Errorf("a value of type %T", v)
}
