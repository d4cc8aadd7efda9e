// Package nocloud reads a NoCloud seed (a "cidata" drive, or a seed
// directory) into the instance model, and parses the kernel command line's
// ds=nocloud. It only reads an fs.FS, so it works the same on a mounted drive,
// a directory in the real root or a test fixture.
//
// The seed:
//
//	meta-data       required, YAML (or JSON); instance-id is required
//	user-data       optional, raw
//	vendor-data     optional, raw
//	network-config  optional, YAML network config v1 or v2, raw
//
// Differences from cloud-init: a missing user-data is fine (cloud-init
// ignores a seed without one); a missing instance-id is an error, where
// cloud-init quietly uses "nocloud"; meta-data, or network-config, that is not
// valid YAML or not a mapping is an error, where cloud-init logs a warning and
// goes on without it.
package nocloud

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/pkg/datasource"
	"github.com/earlyinit/earlyinit/pkg/instance"
	"github.com/earlyinit/earlyinit/pkg/jsondoc"
	"github.com/earlyinit/earlyinit/pkg/scalar"
)

// MaxDocSize bounds meta-data and network-config, which are parsed as YAML:
// a real one is a few KiB, and YAML parsing costs about 3 s per MiB of
// worst-case input, time the boot cannot spend. user-data and vendor-data are
// not parsed here and get datasource.MaxFileSize.
const MaxDocSize = 1 << 20

// ErrNoSeed is returned (wrapped) when fsys has no meta-data file: it is not
// a NoCloud seed, as opposed to a broken one.
var ErrNoSeed = errors.New("not a NoCloud seed")

// Read reads a NoCloud seed (cidata drive, or a seed directory) whose root is
// fsys. Subplatform is left for the caller, which knows where fsys is.
func Read(fsys fs.FS) (*instance.Data, error) {
	raw, err := datasource.ReadFile(fsys, "meta-data", MaxDocSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no meta-data: %w", ErrNoSeed)
	}
	if err != nil {
		return nil, err
	}
	d, eni, err := parseMetaData("meta-data", raw)
	if err != nil {
		return nil, err
	}
	if d.UserData, err = datasource.ReadOptional(fsys, "user-data", datasource.MaxFileSize); err != nil {
		return nil, err
	}
	if d.VendorData, err = datasource.ReadOptional(fsys, "vendor-data", datasource.MaxFileSize); err != nil {
		return nil, err
	}
	nc, err := datasource.ReadOptional(fsys, "network-config", MaxDocSize)
	if err != nil {
		return nil, err
	}
	if nc != nil {
		// Kept raw: with or without a top-level "network:" key, v1 or v2,
		// or "config: disabled", pkg/netcfg decides. Only check that it
		// is a YAML mapping; an empty file counts as none, as in
		// cloud-init.
		doc, err := decode("network-config", nc)
		if err != nil {
			return nil, err
		}
		if doc.m != nil {
			d.Network, d.NetworkFormat = nc, instance.NetworkYAML
		}
	}
	if d.Network == nil && eni != "" {
		d.Network, d.NetworkFormat = []byte(eni), instance.NetworkENI
	}
	return d, nil
}

// parseMetaData fills the instance model from meta-data. It returns the
// legacy network-interfaces text ("" if none) for the caller.
func parseMetaData(name string, raw []byte) (*instance.Data, string, error) {
	doc, err := decode(name, raw)
	if err != nil {
		return nil, "", err
	}
	if doc.m == nil {
		doc.m = map[string]any{}
	}
	keyErr := func(key, format string, a ...any) error {
		return fmt.Errorf("%s: %q: %s", name, key, fmt.Sprintf(format, a...))
	}
	d := &instance.Data{
		Datasource: "nocloud",
		CloudName:  "nocloud",
		Platform:   "nocloud",
		Meta:       doc.m,
	}
	if d.InstanceID, err = doc.scalar(name, "instance-id"); err != nil {
		return nil, "", err
	}
	if strings.TrimSpace(d.InstanceID) == "" {
		return nil, "", keyErr("instance-id", "missing or empty")
	}
	if d.LocalHostname, err = doc.scalar(name, "local-hostname"); err != nil {
		return nil, "", err
	}
	hostname, err := doc.scalar(name, "hostname")
	if err != nil {
		return nil, "", err
	}
	if d.LocalHostname == "" {
		d.LocalHostname = hostname
	}
	cloud, err := doc.scalar(name, "cloud-name")
	if err != nil {
		return nil, "", err
	}
	if cloud != "" {
		d.CloudName = strings.ToLower(cloud)
	}
	if d.PublicKeys, err = datasource.PublicKeys(doc.m["public-keys"]); err != nil {
		return nil, "", keyErr("public-keys", "%v", err)
	}
	var eni string
	switch v := doc.m["network-interfaces"].(type) {
	case nil:
	case string:
		eni = v
	default:
		return nil, "", keyErr("network-interfaces", "want a string (interfaces(5) text), got %s", scalar.JSONNoun(v))
	}
	return d, eni, nil
}

// doc is a decoded meta-data or network-config document.
type doc struct {
	// m is the top-level mapping with JSON-compatible values; nil for an
	// empty document.
	m map[string]any
	// text holds top-level scalar values as written, so that an
	// instance-id of 0123 stays "0123" and does not become 83.
	text map[string]string
}

// scalar returns the top-level key's scalar text, "" when absent or null.
func (d doc) scalar(name, key string) (string, error) {
	v, ok := d.m[key]
	if !ok || v == nil {
		return "", nil
	}
	if t, ok := d.text[key]; ok {
		return t, nil
	}
	switch v := v.(type) { // e.g. a value from a YAML merge key
	case string:
		return v, nil
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v), nil
	}
	return "", fmt.Errorf("%s: %q: want a string, got %s", name, key, scalar.JSONNoun(v))
}

// decode parses a YAML document that must be a mapping (or empty). JSON that
// YAML refuses (a "\/" escape, tab indentation) is read as JSON. Errors name
// the file and keep yaml's line numbers.
func decode(name string, b []byte) (doc, error) {
	root, yerr := parseYAML(b)
	if yerr != nil {
		if t := strings.TrimSpace(string(b)); strings.HasPrefix(t, "{") {
			if v, err := jsondoc.Decode(name, b); err == nil {
				return jsonDoc(name, v)
			}
		}
		return doc{}, fmt.Errorf("parse %s: %w", name, yerr)
	}
	if root == nil || (root.Kind == yaml.ScalarNode && root.Tag == "!!null") {
		return doc{}, nil
	}
	if root.Kind != yaml.MappingNode {
		return doc{}, fmt.Errorf("parse %s: line %d: want a mapping, got %s", name, root.Line, nodeKind(root))
	}
	var v any
	if err := decodeNode(root, &v); err != nil {
		return doc{}, fmt.Errorf("parse %s: %w", name, err)
	}
	m, ok := jsonValue(v).(map[string]any)
	if !ok {
		return doc{}, fmt.Errorf("parse %s: want a mapping", name)
	}
	d := doc{m: m, text: map[string]string{}}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, val := root.Content[i], root.Content[i+1]
		for val.Kind == yaml.AliasNode && val.Alias != nil {
			val = val.Alias
		}
		if k.Kind == yaml.ScalarNode && val.Kind == yaml.ScalarNode && val.Tag != "!!null" {
			d.text[k.Value] = val.Value
		}
	}
	return d, nil
}

func jsonDoc(name string, v any) (doc, error) {
	switch v := v.(type) {
	case nil:
		return doc{}, nil
	case map[string]any:
		d := doc{m: v, text: map[string]string{}}
		for k, e := range v {
			switch e := e.(type) {
			case string:
				d.text[k] = e
			case interface{ String() string }: // json.Number
				d.text[k] = e.String()
			case bool:
				d.text[k] = strconv.FormatBool(e)
			}
		}
		return d, nil
	default:
		return doc{}, fmt.Errorf("parse %s: want a mapping, got %s", name, scalar.JSONNoun(v))
	}
}

// parseYAML returns the document's root node, nil for an empty document.
// yaml.v3 is not supposed to panic, but it must not take the boot with it if
// it does.
func parseYAML(b []byte) (root *yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			root, err = nil, fmt.Errorf("yaml: %v", r)
		}
	}()
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return nil, err
	}
	if n.Kind != yaml.DocumentNode || len(n.Content) == 0 {
		return nil, nil
	}
	return n.Content[0], nil
}

func decodeNode(n *yaml.Node, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	return n.Decode(v)
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

// jsonValue turns what yaml.v3 decodes into values encoding/json can write:
// non-string keys become their text, timestamps RFC 3339 text, NaN and
// infinities their text.
func jsonValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = jsonValue(e)
		}
		return v
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			if s, ok := k.(string); ok {
				m[s] = jsonValue(e)
			}
		}
		for k, e := range v {
			if _, ok := k.(string); ok {
				continue
			}
			s := fmt.Sprint(jsonValue(k))
			if _, dup := m[s]; !dup {
				m[s] = jsonValue(e)
			}
		}
		return m
	case []any:
		for i, e := range v {
			v[i] = jsonValue(e)
		}
		return v
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return strconv.FormatFloat(v, 'g', -1, 64)
		}
		return v
	case time.Time:
		return v.Format(time.RFC3339Nano)
	case nil, string, bool, int, int64, uint64, float32, int32, uint, uint32:
		return v
	default:
		return fmt.Sprint(v)
	}
}
