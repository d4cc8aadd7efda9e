// Package vmware reads VMware's guestinfo transport into the instance
// model, as cloud-init's DataSourceVMware does: the VM's extra config keys
// guestinfo.metadata, guestinfo.userdata and guestinfo.vendordata, each
// with its optional .encoding (base64 or gzip+base64), the metadata JSON or
// YAML with instance-id, local-hostname, public keys and a network
// configuration under "network" (itself encoded as network.encoding says,
// or a mapping).
//
// The keys are read through GuestInfo. On a real VM that is the VMware
// backdoor (the RPCI channel of I/O port 0x5658): RPCTool runs
// vmware-rpctool or vmtoolsd from open-vm-tools, which must then be in the
// initramfs (or the real root, in distro mode). QEMU emulates the backdoor
// port (-machine vmport=on) but not its RPCI channel, so guestinfo cannot
// be read under QEMU; the decoding is unit-tested instead.
//
// VMware's guest customization (IMC) and the OVF environment in
// guestinfo.ovfEnv are cloud-init's OVF source's, and earlyinit's ovf
// source's (internal/datasource/ovf), which uses RPCTool too.
//
// Differences from cloud-init: only the guestinfo transport (not the
// VMX_GUESTINFO environment variables cloud-init reads in containers); the
// local IP addresses are not
// advertised back into guestinfo (cloud-init's setup does that once the
// network is up, after the initramfs). Metadata that is neither JSON nor
// a YAML mapping is an error.
package vmware

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// GuestInfo reads and writes the VM's guestinfo keys. Keys are given
// without the "guestinfo." prefix ("metadata", "userdata.encoding").
type GuestInfo interface {
	// Get returns the key's value; ok is false when the key is not set.
	Get(ctx context.Context, key string) (value string, ok bool, err error)
	// Set sets the key's value ("" cannot be set: a blank is).
	Set(ctx context.Context, key, value string) error
}

// maxValue bounds each decoded value: user-data, vendor-data, metadata.
const maxValue = datasource.MaxFileSize

// emptyValue is what a redacted key holds: empty YAML, so a later read
// finds nothing.
const emptyValue = "---"

// Reader reads the guestinfo transport.
type Reader struct {
	// GuestInfo reads the keys.
	GuestInfo GuestInfo
	// UUID returns the SMBIOS system UUID, the instance id when the
	// metadata has none (cloud-init reads /sys/class/dmi/id/product_uuid);
	// nil means none.
	UUID func() (string, error)
	// Logf, if set, is told of keys cleared and of failures to clear
	// them (never of values).
	Logf func(format string, args ...any)
}

// ErrNoData is returned (wrapped) when none of guestinfo.metadata,
// userdata and vendordata is set: not a VMware guestinfo VM, as opposed to
// a broken one.
var ErrNoData = datasource.Absent("no guestinfo.metadata, guestinfo.userdata or guestinfo.vendordata")

// Read reads the three keys, decodes them and clears the keys the
// metadata's "redact" (or "cleanup-guestinfo") names.
func (r *Reader) Read(ctx context.Context) (*instance.Data, error) {
	var raw [3][]byte
	for i, key := range []string{"metadata", "userdata", "vendordata"} {
		v, err := r.value(ctx, key)
		if err != nil {
			return nil, err
		}
		raw[i] = v
	}
	if raw[0] == nil && raw[1] == nil && raw[2] == nil {
		return nil, ErrNoData
	}
	d, err := Parse(raw[0])
	if err != nil {
		return nil, err
	}
	d.UserData, d.VendorData = raw[1], raw[2]
	if d.InstanceID == "" {
		if r.UUID == nil {
			return nil, errors.New("guestinfo.metadata: no instance-id, and no SMBIOS UUID to use instead")
		}
		uuid, err := r.UUID()
		if err != nil {
			return nil, fmt.Errorf("guestinfo.metadata: no instance-id, and the SMBIOS UUID: %w", err)
		}
		if d.InstanceID = strings.ToLower(strings.TrimSpace(uuid)); d.InstanceID == "" {
			return nil, errors.New("guestinfo.metadata: no instance-id, and the SMBIOS UUID is empty")
		}
		d.Meta["instance-id"] = d.InstanceID
	}
	r.redact(ctx, d.Meta)
	d.Subplatform = "guestinfo (guestinfo.metadata)"
	return d, nil
}

// value reads guestinfo.<key> and decodes it as guestinfo.<key>.encoding
// says; nil when the key is unset, empty or "---".
func (r *Reader) value(ctx context.Context, key string) ([]byte, error) {
	v, err := r.get(ctx, key)
	if err != nil || v == "" {
		return nil, err
	}
	enc, err := r.get(ctx, key+".encoding")
	if err != nil {
		return nil, err
	}
	b, err := Decode(enc, v)
	if err != nil {
		return nil, fmt.Errorf("guestinfo.%s: %w", key, err)
	}
	return b, nil
}

// get reads a key as cloud-init does: trailing blanks dropped, "---" as
// empty.
func (r *Reader) get(ctx context.Context, key string) (string, error) {
	v, ok, err := r.GuestInfo.Get(ctx, key)
	if err != nil {
		return "", fmt.Errorf("guestinfo.%s: %w", key, err)
	}
	v = strings.TrimRight(v, " \t\r\n")
	if !ok || v == emptyValue {
		return "", nil
	}
	return v, nil
}

// redact clears the keys the metadata lists under "redact" (or
// "cleanup-guestinfo"), and their encodings, as cloud-init does, so the
// secrets they held do not stay readable from the guest. Failures are
// logged; they do not reject the source.
func (r *Reader) redact(ctx context.Context, meta map[string]any) {
	v, ok := meta["redact"]
	if !ok {
		v = meta["cleanup-guestinfo"]
	}
	var keys []string
	switch v := v.(type) {
	case string:
		keys = []string{v}
	case []any:
		for _, k := range v {
			if s, ok := k.(string); ok {
				keys = append(keys, s)
			}
		}
	}
	for _, k := range keys {
		for _, kv := range [][2]string{{k, emptyValue}, {k + ".encoding", " "}} {
			if err := r.GuestInfo.Set(ctx, kv[0], kv[1]); err != nil {
				r.logf("vmware: clearing guestinfo.%s: %v", kv[0], err)
				continue
			}
			r.logf("vmware: cleared guestinfo.%s", kv[0])
		}
	}
}

func (r *Reader) logf(format string, args ...any) {
	if r.Logf != nil {
		r.Logf(format, args...)
	}
}

// Decode decodes a guestinfo value by its encoding: "base64" or "b64",
// "gzip+base64" or "gz+b64", anything else plain text. Line breaks and
// blanks in base64 are ignored; the result is at most maxValue bytes.
func Decode(encoding, value string) ([]byte, error) {
	switch strings.TrimSpace(encoding) {
	case "base64", "b64":
		return unbase64(value)
	case "gzip+base64", "gz+b64":
		z, err := unbase64(value)
		if err != nil {
			return nil, err
		}
		zr, err := gzip.NewReader(bytes.NewReader(z))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		b, err := io.ReadAll(io.LimitReader(zr, maxValue+1))
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		if len(b) > maxValue {
			return nil, fmt.Errorf("gzip: over the %d byte limit once decompressed", maxValue)
		}
		return b, nil
	}
	if len(value) > maxValue {
		return nil, fmt.Errorf("over the %d byte limit", maxValue)
	}
	return []byte(value), nil
}

func unbase64(v string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v), ""))
	if err != nil {
		return nil, fmt.Errorf("base64: %w", err)
	}
	if len(b) > maxValue {
		return nil, fmt.Errorf("over the %d byte limit", maxValue)
	}
	return b, nil
}

// Parse reads the decoded guestinfo.metadata (JSON or YAML; nil for none)
// as cloud-init's process_metadata does: its "network" (with
// "network.encoding") is the network configuration, kept in the metadata
// as {"config": ...}. The instance id is left empty when the metadata has
// none.
func Parse(md []byte) (*instance.Data, error) {
	meta, text, nodes, err := decodeMapping(md)
	if err != nil {
		return nil, fmt.Errorf("guestinfo.metadata: %w", err)
	}
	d := &instance.Data{
		Datasource:      "vmware",
		DatasourceClass: "VMware",
		CloudName:       "vmware",
		Platform:        "vmware",
		Meta:            meta,
	}
	str := func(key string) (string, error) {
		v, ok := meta[key]
		if !ok || v == nil {
			return "", nil
		}
		if t, ok := text[key]; ok {
			return t, nil
		}
		return "", fmt.Errorf("guestinfo.metadata: %s: want a string, got %s", key, scalar.JSONNoun(v))
	}
	if d.InstanceID, err = str("instance-id"); err != nil {
		return nil, err
	}
	d.InstanceID = strings.TrimSpace(d.InstanceID)
	if d.LocalHostname, err = str("local-hostname"); err != nil {
		return nil, err
	}
	for _, k := range []string{"public-keys-data", "public_keys_data", "public-keys", "public_keys"} {
		if v, ok := meta[k]; ok {
			if d.PublicKeys, err = datasource.PublicKeys(v); err != nil {
				return nil, fmt.Errorf("guestinfo.metadata: %s: %w", k, err)
			}
			break
		}
	}

	enc, err := str("network.encoding")
	if err != nil {
		return nil, err
	}
	delete(meta, "network.encoding")
	switch nw := meta["network"].(type) {
	case nil:
		delete(meta, "network")
	case map[string]any:
		// As written (YAML's "yes" stays a word for internal/netcfg to read
		// as cloud-init's YAML reads it), else as JSON.
		if n := nodes["network"]; n != nil {
			d.Network, err = yaml.Marshal(n)
		} else {
			d.Network, err = json.Marshal(nw)
		}
		if err != nil {
			return nil, fmt.Errorf("guestinfo.metadata: network: %w", err)
		}
		d.NetworkFormat = instance.NetworkYAML
		meta["network"] = map[string]any{"config": nw}
	case string:
		b, err := Decode(enc, nw)
		if err != nil {
			return nil, fmt.Errorf("guestinfo.metadata: network: %w", err)
		}
		cfg, _, _, err := decodeMapping(b)
		if err != nil {
			return nil, fmt.Errorf("guestinfo.metadata: network: %w", err)
		}
		if len(cfg) > 0 {
			d.Network, d.NetworkFormat = b, instance.NetworkYAML
		}
		meta["network"] = map[string]any{"config": cfg}
	default:
		return nil, fmt.Errorf("guestinfo.metadata: network: want a mapping or an encoded string, got %s", scalar.JSONNoun(nw))
	}
	return d, nil
}

// decodeMapping decodes JSON or YAML that must be a mapping, or empty
// (jsondoc.DecodeMapping): the mapping, the text of its top-level scalars
// (so an instance-id of 0123 stays "0123") and the YAML nodes of its
// top-level values.
func decodeMapping(b []byte) (map[string]any, map[string]string, map[string]*yaml.Node, error) {
	m, err := jsondoc.DecodeMapping(b)
	if err != nil {
		return nil, nil, nil, err
	}
	return m.M, m.Text, m.Nodes, nil
}
