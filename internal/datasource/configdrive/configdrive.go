// Package configdrive reads an OpenStack config drive (the "config-2" ISO9660
// or vfat filesystem) into the instance model. It only reads an fs.FS, so it
// works the same on a mounted drive, a seed directory or a test fixture.
//
// The layout, as Nova writes it:
//
//	openstack/<version>/meta_data.json    required; uuid is the instance id
//	openstack/<version>/user_data         optional, raw
//	openstack/<version>/vendor_data.json  optional, JSON
//	openstack/<version>/vendor_data2.json optional, JSON
//	openstack/<version>/network_data.json optional, JSON
//	openstack/content/NNNN                files and legacy network_config
//	ec2/latest/meta-data.json             optional, EC2-style metadata
//
// Differences from cloud-init's reader: only dated versions cloud-init knows
// (and "latest") are versions, where cloud-init counts any directory under
// openstack/ (content/ included); a known version is only chosen if its
// meta_data.json exists; wrongly typed keys are errors, not ignored or a
// Python traceback; the legacy config-drive v1 layout (meta.js) is not read.
package configdrive

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// ErrNotConfigDrive is returned (wrapped) when fsys has no
// openstack/<version>/meta_data.json at all: it is not a config drive, as
// opposed to a broken one.
var ErrNotConfigDrive = errors.New("not an OpenStack config drive")

// Versions are the dated metadata versions this reader knows, oldest first:
// cloud-init's OS_VERSIONS, from Nova's nova/api/metadata/base.py.
func Versions() []string {
	return []string{
		"2012-08-10", // Folsom
		"2013-04-04", // Grizzly
		"2013-10-17", // Havana
		"2015-10-15", // Liberty
		"2016-06-30", // Newton: devices
		"2016-10-06", // Newton: vendor_data2.json
		"2017-02-22", // Ocata: devices[].vif
		"2018-08-27", // Rocky: devices[].vf_trusted
	}
}

// Read reads an OpenStack config drive whose root is fsys (os.DirFS of the
// mount point). Subplatform is left for the caller, which knows the device.
func Read(fsys fs.FS) (*instance.Data, error) {
	dir, err := findVersion(fsys)
	if err != nil {
		return nil, err
	}
	mdPath := path.Join(dir, "meta_data.json")
	raw, err := datasource.ReadFile(fsys, mdPath, datasource.MaxFileSize)
	if err != nil {
		return nil, err
	}
	d, netCfg, err := parseMetaData(mdPath, raw)
	if err != nil {
		return nil, err
	}
	if d.UserData, err = datasource.ReadOptional(fsys, path.Join(dir, "user_data"), datasource.MaxFileSize); err != nil {
		return nil, err
	}
	if err := readNetworkData(fsys, dir, d); err != nil {
		return nil, err
	}
	if err := readVendorData(fsys, dir, d); err != nil {
		return nil, err
	}
	if err := readFiles(fsys, mdPath, d); err != nil {
		return nil, err
	}

	// The legacy network_config (an interfaces(5) file in content/) only
	// counts when there is no network_data.json, as in cloud-init.
	if netCfg != "" && d.Network == nil {
		b, err := readContent(fsys, netCfg)
		if err != nil {
			return nil, fmt.Errorf("%s: \"network_config\": %w", mdPath, err)
		}
		d.Network, d.NetworkFormat = b, instance.NetworkENI
	}

	if err := readEC2Metadata(fsys, d); err != nil {
		return nil, err
	}
	return d, nil
}

// readNetworkData reads dir's network_data.json, if any, into d.Network,
// checking that it is a JSON object.
func readNetworkData(fsys fs.FS, dir string, d *instance.Data) error {
	name := path.Join(dir, "network_data.json")
	b, err := datasource.ReadOptional(fsys, name, datasource.MaxFileSize)
	if err != nil {
		return err
	}
	d.Network = b
	if b == nil {
		return nil
	}
	v, err := jsondoc.Decode(name, b)
	if err != nil {
		return err
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("%s: want an object, got %s", name, scalar.JSONNoun(v))
	}
	d.NetworkFormat = instance.NetworkDataJSON
	return nil
}

// readVendorData reads dir's vendor_data.json and vendor_data2.json, if
// any, into d as vendor-data (see ConvertVendorData).
func readVendorData(fsys fs.FS, dir string, d *instance.Data) error {
	for _, f := range []struct {
		name string
		dst  *[]byte
	}{
		{"vendor_data.json", &d.VendorData},
		{"vendor_data2.json", &d.VendorData2},
	} {
		name := path.Join(dir, f.name)
		b, err := datasource.ReadOptional(fsys, name, datasource.MaxFileSize)
		if err != nil {
			return err
		}
		if b == nil {
			continue
		}
		if *f.dst, err = ConvertVendorData(name, b); err != nil {
			return err
		}
	}
	return nil
}

// readEC2Metadata reads ec2/latest/meta-data.json, if any, into
// d.Meta["ec2_metadata"], checking that it is a JSON object.
func readEC2Metadata(fsys fs.FS, d *instance.Data) error {
	const name = "ec2/latest/meta-data.json"
	b, err := datasource.ReadOptional(fsys, name, datasource.MaxFileSize)
	if err != nil || b == nil {
		return err
	}
	v, err := jsondoc.Decode(name, b)
	if err != nil {
		return err
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("%s: want an object, got %s", name, scalar.JSONNoun(v))
	}
	d.Meta["ec2_metadata"] = v
	return nil
}

// findVersion returns "openstack/<v>" for the newest known version with a
// meta_data.json, else "openstack/latest".
func findVersion(fsys fs.FS) (string, error) {
	known := Versions()
	var vs []string
	for i := len(known) - 1; i >= 0; i-- {
		vs = append(vs, known[i])
	}
	vs = append(vs, "latest")
	for _, v := range vs {
		dir := path.Join("openstack", v)
		fi, err := fs.Stat(fsys, path.Join(dir, "meta_data.json"))
		if err == nil && !fi.IsDir() {
			return dir, nil
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("stat %s: %w", path.Join(dir, "meta_data.json"), err)
		}
	}
	return "", fmt.Errorf("no openstack/{latest,%s}/meta_data.json: %w", strings.Join(Versions(), ","), ErrNotConfigDrive)
}

// parseMetaData fills the instance model from meta_data.json. It returns the
// legacy network_config content path ("" if none) for the caller to read.
func parseMetaData(name string, raw []byte) (*instance.Data, string, error) {
	v, err := jsondoc.Decode(name, raw)
	if err != nil {
		return nil, "", err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("%s: want an object, got %s", name, scalar.JSONNoun(v))
	}
	md := metaData{name: name, m: m}
	d := &instance.Data{
		Datasource: "configdrive",
		CloudName:  "openstack",
		Platform:   "openstack",
	}
	if err := md.identity(d); err != nil {
		return nil, "", err
	}
	if err := md.access(d); err != nil {
		return nil, "", err
	}
	if d.LaunchIndex, err = md.launchIndex(); err != nil {
		return nil, "", err
	}
	if d.RandomSeed, err = md.randomSeed(); err != nil {
		return nil, "", err
	}
	netCfg, err := md.nested()
	if err != nil {
		return nil, "", err
	}

	// Secrets have their own fields and are only ever written to the
	// sensitive file: keep them out of Meta, which is not redacted.
	delete(m, "random_seed")
	delete(m, "admin_pass")
	d.Meta = m
	return d, netCfg, nil
}

// metaData is meta_data.json's object m, read from the file name.
type metaData struct {
	name string
	m    map[string]any
}

// keyErr is an error about key, naming the file.
func (md metaData) keyErr(key, format string, a ...any) error {
	return fmt.Errorf("%s: %q: %s", md.name, key, fmt.Sprintf(format, a...))
}

// str returns md[key] as a string, "" if absent or null.
func (md metaData) str(key string) (string, error) {
	switch s := md.m[key].(type) {
	case nil:
		return "", nil
	case string:
		return s, nil
	default:
		return "", md.keyErr(key, "want a string, got %s", scalar.JSONNoun(s))
	}
}

// identity reads uuid (the instance id, required), hostname (name when it
// is missing) and availability_zone into d.
func (md metaData) identity(d *instance.Data) error {
	if _, ok := md.m["uuid"]; !ok {
		return md.keyErr("uuid", "missing (it is the instance id)")
	}
	var err error
	if d.InstanceID, err = md.str("uuid"); err != nil {
		return err
	}
	if strings.TrimSpace(d.InstanceID) == "" {
		return md.keyErr("uuid", "empty or null (it is the instance id)")
	}
	hostname, err := md.str("hostname")
	if err != nil {
		return err
	}
	nm, err := md.str("name")
	if err != nil {
		return err
	}
	d.LocalHostname = hostname
	if d.LocalHostname == "" {
		d.LocalHostname = nm
	}
	d.AvailabilityZone, err = md.str("availability_zone")
	return err
}

// access reads admin_pass and public_keys into d.
func (md metaData) access(d *instance.Data) error {
	var err error
	if d.AdminPass, err = md.str("admin_pass"); err != nil {
		return err
	}
	if d.PublicKeys, err = datasource.PublicKeys(md.m["public_keys"]); err != nil {
		return md.keyErr("public_keys", "%v", err)
	}
	return nil
}

// launchIndex is launch_index, nil if absent or null.
func (md metaData) launchIndex() (*int, error) {
	li, ok := md.m["launch_index"]
	if !ok || li == nil {
		return nil, nil
	}
	n, ok := li.(json.Number)
	if !ok {
		return nil, md.keyErr("launch_index", "want an integer, got %s", scalar.JSONNoun(li))
	}
	i, err := n.Int64()
	if err != nil || i < 0 || i > math.MaxInt32 {
		return nil, md.keyErr("launch_index", "want a non-negative integer, got %s", n)
	}
	idx := int(i)
	return &idx, nil
}

// randomSeed is random_seed decoded from base64, nil if absent, null or
// empty. The error never holds the seed.
func (md metaData) randomSeed() ([]byte, error) {
	seed, err := md.str("random_seed")
	if err != nil || seed == "" {
		return nil, err
	}
	b, err := decodeBase64(seed)
	if err != nil {
		return nil, md.keyErr("random_seed", "bad base64: %v", err)
	}
	return b, nil
}

// nested checks the types of meta, network_config and files (read later
// from Meta) and returns network_config's content path, "" if none.
func (md metaData) nested() (string, error) {
	switch m := md.m["meta"].(type) {
	case nil, map[string]any:
	default:
		return "", md.keyErr("meta", "want an object, got %s", scalar.JSONNoun(m))
	}
	var netCfg string
	switch nc := md.m["network_config"].(type) {
	case nil:
	case map[string]any:
		p, ok := nc["content_path"].(string)
		if !ok || p == "" {
			return "", md.keyErr("network_config", "no content_path string")
		}
		netCfg = p
	default:
		return "", md.keyErr("network_config", "want an object, got %s", scalar.JSONNoun(nc))
	}
	switch f := md.m["files"].(type) {
	case nil, []any:
	default:
		return "", md.keyErr("files", "want a list, got %s", scalar.JSONNoun(f))
	}
	return netCfg, nil
}

// decodeBase64 accepts padded standard base64 with embedded newlines, as
// Python's b64decode does.
func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '\r', '\n':
			return -1
		}
		return r
	}, s)
	return base64.StdEncoding.DecodeString(s)
}

// readFiles reads meta_data.json's "files" (injected files) into d.Files, in
// list order. An entry without "path" is skipped, as cloud-init does; one
// without a readable content_path rejects the drive.
func readFiles(fsys fs.FS, mdPath string, d *instance.Data) error {
	list, _ := d.Meta["files"].([]any)
	for i, e := range list {
		keyErr := func(format string, a ...any) error {
			return fmt.Errorf("%s: \"files\" element %d: %s", mdPath, i, fmt.Sprintf(format, a...))
		}
		item, ok := e.(map[string]any)
		if !ok {
			return keyErr("want an object, got %s", scalar.JSONNoun(e))
		}
		p, ok := item["path"]
		if !ok {
			continue
		}
		dst, ok := p.(string)
		if !ok {
			return keyErr("\"path\": want a string, got %s", scalar.JSONNoun(p))
		}
		if strings.TrimSpace(dst) == "" {
			return keyErr("\"path\": empty")
		}
		cp, ok := item["content_path"].(string)
		if !ok {
			return keyErr("file %s: \"content_path\": missing or not a string", dst)
		}
		b, err := readContent(fsys, cp)
		if err != nil {
			return keyErr("file %s: %v", dst, err)
		}
		// cloud-init writes a relative path under /; confining the write to
		// the real root is internal/rootfs's job.
		d.Files = append(d.Files, instance.File{Path: path.Clean("/" + dst), Content: b})
	}
	return nil
}

// readContent reads a content_path ("/content/0000"), which is relative to
// openstack/. It refuses paths that would leave openstack/.
func readContent(fsys fs.FS, contentPath string) ([]byte, error) {
	var parts []string
	for _, p := range strings.Split(contentPath, "/") {
		switch p {
		case "", ".":
		case "..":
			return nil, fmt.Errorf("content_path %q: \"..\" is not allowed", contentPath)
		default:
			parts = append(parts, p)
		}
	}
	if len(parts) == 0 {
		return nil, fmt.Errorf("content_path %q: names no file", contentPath)
	}
	name := path.Join(append([]string{"openstack"}, parts...)...)
	if !fs.ValidPath(name) {
		return nil, fmt.Errorf("content_path %q: invalid path", contentPath)
	}
	b, err := datasource.ReadFile(fsys, name, datasource.MaxFileSize)
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
