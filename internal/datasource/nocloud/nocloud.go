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
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/scalar"
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
		// or "config: disabled", internal/netcfg decides. Only check that it
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

// decode parses a YAML (or JSON) document that must be a mapping, or
// empty (jsondoc.DecodeMapping). Errors name the file and keep yaml's line
// numbers.
func decode(name string, b []byte) (doc, error) {
	m, err := jsondoc.DecodeMapping(b)
	if err != nil {
		return doc{}, fmt.Errorf("parse %s: %w", name, err)
	}
	if m.Empty {
		return doc{}, nil
	}
	return doc{m: m.M, text: m.Text}, nil
}
