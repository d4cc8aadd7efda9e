package ovf

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// envNS is the OVF environment's namespace, the one of its Property
// elements' key and value attributes.
const envNS = "http://schemas.dmtf.org/ovf/environment/1"

// EnvFiles are the names of the OVF environment on a drive or in a seed
// directory, in the order cloud-init's get_ovf_env tries them.
var EnvFiles = []string{"ovf-env.xml", "ovf_env.xml", "OVF_ENV.XML", "OVF-ENV.XML"}

// maxEnv bounds an ovf-env.xml (vSphere's are a few KiB; user-data in a
// property is base64 of at most what user-data may be).
const maxEnv = datasource.MaxFileSize

// Properties reads an ovf-env.xml as cloud-init's get_properties does: the
// document element must be an Environment (any namespace), and the first
// of its PropertySection children gives its Property children's
// ovfenv:key = ovfenv:value, a later key winning. A Property without both
// attributes, no PropertySection, or XML that does not parse is an error.
// Go's XML reader expands no entity and reads no DTD.
func Properties(b []byte) (map[string]string, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.Strict = true
	depth := 0
	var root string
	sections, inSection := 0, false
	children := 0
	props := map[string]string{}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch {
			case depth == 1:
				root = t.Name.Local
				if root != "Environment" {
					return nil, fmt.Errorf("the document element is %q, not an Environment", root)
				}
			case depth == 2:
				children++
				if t.Name.Local == "PropertySection" {
					sections++
					inSection = sections == 1
				}
			case depth == 3 && inSection && t.Name.Local == "Property":
				var key, value *string
				for _, a := range t.Attr {
					if a.Name.Space != envNS {
						continue
					}
					v := a.Value
					switch a.Name.Local {
					case "key":
						key = &v
					case "value":
						value = &v
					}
				}
				if key == nil || value == nil {
					return nil, fmt.Errorf("line %d: a Property without ovfenv:key and ovfenv:value", lineOf(b, dec.InputOffset()))
				}
				props[*key] = *value
			}
		case xml.EndElement:
			if depth == 2 {
				inSection = false
			}
			depth--
		case xml.CharData:
			if depth == 1 && len(bytes.TrimSpace(t)) > 0 {
				children++
			}
		}
	}
	switch {
	case root == "":
		return nil, errors.New("XML: no document element")
	case children == 0:
		return nil, errors.New("the Environment is empty")
	case sections == 0:
		return nil, errors.New("the Environment has no PropertySection")
	}
	return props, nil
}

func lineOf(b []byte, off int64) int {
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	return 1 + bytes.Count(b[:off], []byte("\n"))
}

// Env is what an OVF environment gives, as cloud-init's
// read_ovf_environment reads its properties.
type Env struct {
	// Meta are the properties seedfrom, local-hostname (or hostname),
	// public-keys and instance-id, and with the network read,
	// network-config (its "network" mapping).
	Meta map[string]any
	// UserData is the user-data property, base64-decoded (as it is when
	// it does not decode).
	UserData []byte
	// Password is the password property: the default user's password,
	// cloud-config's `password`.
	Password    string
	HasPassword bool
	// Network is network-config's "network" mapping as YAML, nil when
	// none (or when it does not decode, which cloud-init ignores too).
	Network []byte
}

// ReadEnv reads an ovf-env.xml's properties as read_ovf_environment does;
// readNetwork is its read_network (the guestinfo and ISO transports read
// the network-config property, a seed directory does not).
func ReadEnv(b []byte, readNetwork bool) (*Env, error) {
	props, err := Properties(b)
	if err != nil {
		return nil, err
	}
	e := &Env{Meta: map[string]any{}}
	// Properties in document order matter when both hostname and
	// local-hostname are set: the later wins. The map lost the order, so
	// read it again.
	for _, kv := range orderedProps(b, props) {
		prop, val := kv[0], kv[1]
		if prop == "hostname" {
			prop = "local-hostname"
		}
		switch prop {
		case "seedfrom", "local-hostname", "public-keys", "instance-id":
			e.Meta[prop] = val
		case "password":
			e.Password, e.HasPassword = val, true
		case "network-config":
			if !readNetwork {
				continue
			}
			e.Network = nil
			delete(e.Meta, "network-config")
			raw, err := pyB64Decode(val)
			if err != nil {
				continue
			}
			if v, ok, y := networkOf(raw); ok {
				e.Meta["network-config"] = v
				e.Network = y
			}
		case "user-data":
			ud, err := pyB64Decode(val)
			if err != nil {
				ud = []byte(val)
			}
			e.UserData = ud
		}
	}
	return e, nil
}

// orderedProps is props in the order of the document's Property elements
// (each key once, at its last place), read the way Properties reads them.
func orderedProps(b []byte, props map[string]string) [][2]string {
	dec := xml.NewDecoder(bytes.NewReader(b))
	depth, sections := 0, 0
	inSection := false
	var keys []string
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 2 && t.Name.Local == "PropertySection" {
				sections++
				inSection = sections == 1
			}
			if depth == 3 && inSection && t.Name.Local == "Property" {
				for _, a := range t.Attr {
					if a.Name.Space == envNS && a.Name.Local == "key" {
						keys = append(keys, a.Value)
					}
				}
			}
		case xml.EndElement:
			if depth == 2 {
				inSection = false
			}
			depth--
		}
	}
	last := map[string]int{}
	for i, k := range keys {
		last[k] = i
	}
	var out [][2]string
	for i, k := range keys {
		if last[k] == i {
			out = append(out, [2]string{k, props[k]})
		}
	}
	return out
}

// networkOf reads network-config's YAML (or JSON) as cloud-init does
// (safeload_yaml_or_dict(...).get("network")): its "network" value (nil
// when it has none) and, when that is a mapping, the mapping as YAML for
// internal/netcfg. ok is false when the document is no mapping: cloud-init
// then ignores the property.
func networkOf(b []byte) (v any, ok bool, y []byte) {
	if len(b) == 0 {
		return nil, true, nil
	}
	doc, err := userdata.LoadYAML(b)
	if err != nil {
		return nil, false, nil
	}
	m, isMap := doc.(map[string]any)
	if !isMap {
		return nil, false, nil
	}
	v = m["network"]
	if _, isMap := v.(map[string]any); !isMap {
		return v, true, nil
	}
	// As written, so that internal/netcfg reads its YAML 1.1 words ("no") as
	// cloud-init does.
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil || len(n.Content) == 0 {
		return v, true, nil
	}
	root := n.Content[0]
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "network" {
			if y, err = yaml.Marshal(root.Content[i+1]); err != nil {
				y = nil
			}
		}
	}
	return v, true, y
}

// DefaultInstanceID is the instance id of an OVF environment that gives
// none: cloud-init's DataSourceOVF default.
const DefaultInstanceID = "iid-dsovf"

// fromEnv makes the instance of an OVF environment read from where
// (cloud-init's seed name: "com.vmware.guestInfo", "iso", a seed
// directory): instance-id (DefaultInstanceID when none), local-hostname,
// public-keys, user-data, network-config (a seedfrom is an error: its
// seed is not read); the password property becomes
// vendor-data cloud-config (`password:`, the default user's), as it is
// the datasource's configuration in cloud-init.
func fromEnv(e *Env, where string) (*instance.Data, error) {
	d := &instance.Data{
		Datasource: "ovf", DatasourceClass: "OVF", CloudName: "ovf", Platform: "ovf",
		Subplatform: "ovf (" + where + ")",
		Meta:        e.Meta,
		UserData:    e.UserData,
	}
	str := func(k string) string {
		s, _ := e.Meta[k].(string)
		return strings.TrimSpace(s)
	}
	if str("seedfrom") != "" {
		// cloud-init reads a seed directory (or file:// URL) it names,
		// and finds no datasource for any other; earlyinit reads none.
		return nil, errors.New("seedfrom: not supported (the seed it names is not read)")
	}
	if d.InstanceID = str("instance-id"); d.InstanceID == "" {
		d.InstanceID = DefaultInstanceID
		e.Meta["instance-id"] = DefaultInstanceID
	}
	d.LocalHostname = str("local-hostname")
	if v, ok := e.Meta["public-keys"]; ok {
		keys, err := datasource.PublicKeys(v)
		if err != nil {
			return nil, fmt.Errorf("public-keys: %w", err)
		}
		d.PublicKeys = keys
	}
	if e.Network != nil {
		d.Network, d.NetworkFormat = e.Network, instance.NetworkYAML
	}
	if e.HasPassword {
		vd, err := vendorConfig(map[string]any{"password": e.Password})
		if err != nil {
			return nil, err
		}
		d.VendorData = vd
	}
	return d, nil
}

// vendorConfig is cfg as cloud-config vendor-data.
func vendorConfig(cfg map[string]any) ([]byte, error) {
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("vendor-data: %w", err)
	}
	return append([]byte("#cloud-config\n"), b...), nil
}
