package instance

import (
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Instance-data files, as cloud-init writes them under /run/cloud-init.
const (
	InstanceDataFile          = "instance-data.json"           // 0644, secrets redacted
	InstanceDataSensitiveFile = "instance-data-sensitive.json" // 0600, everything
	// Redacted replaces every sensitive value in the 0644 file; it is
	// cloud-init's REDACT_SENSITIVE_VALUE.
	Redacted = "redacted for non-root user"
	// experimentalDoc is cloud-init's EXPERIMENTAL_TEXT, put at ds._doc.
	experimentalDoc = "EXPERIMENTAL: The structure and format of content scoped under the 'ds'" +
		" key may change in subsequent releases of cloud-init."
	// unknown is cloud-init's METADATA_UNKNOWN.
	unknown = "unknown"
	// b64Prefix marks a base64-encoded string value, as in cloud-init.
	b64Prefix = "ci-b64:"
)

// SysInfo is what cloud-init's v1 keys say about the system. The boot step
// fills it from the real root's /etc/os-release (OSRelease) and uname.
// Empty fields are left out of instance-data.json.
type SysInfo struct {
	Distro        string // os-release ID ("rhel" reads "redhat", as in cloud-init)
	DistroVersion string // VERSION_ID
	DistroRelease string // VERSION_CODENAME, or the "(codename)" of VERSION
	Variant       string // cloud-init's variant: "debian", "ubuntu", "rhel", ...
	KernelRelease string // uname -r
	Machine       string // uname -m
}

// OSRelease parses an os-release(5) file into the distro fields of SysInfo,
// as cloud-init's util.get_linux_distro does for the common cases.
func OSRelease(b []byte) SysInfo {
	kv := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		v = strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			q := v[0]
			v = v[1 : len(v)-1]
			if q == '"' {
				r := strings.NewReplacer(`\"`, `"`, `\\`, `\`, `\$`, `$`, "\\`", "`")
				v = r.Replace(v)
			}
		}
		kv[strings.TrimSpace(k)] = v
	}
	s := SysInfo{Distro: kv["ID"], DistroVersion: kv["VERSION_ID"], DistroRelease: kv["VERSION_CODENAME"]}
	if s.DistroRelease == "" {
		// "VERSION=10 (buster)"
		v := kv["VERSION"]
		if i := strings.Index(v, " ("); i > 0 && strings.HasSuffix(v, ")") && !strings.Contains(v[:i], " ") {
			s.DistroRelease = v[i+2 : len(v)-1]
		}
	}
	if s.Distro == "rhel" {
		s.Distro = "redhat"
	}
	s.Variant = variant(s.Distro)
	return s
}

// variant is cloud-init's util._get_variant for Linux.
func variant(distro string) string {
	d := strings.ToLower(distro)
	switch d {
	case "":
		return ""
	case "almalinux", "alpine", "arch", "centos", "cloudlinux", "debian", "eurolinux",
		"fedora", "mariner", "miraclelinux", "openeuler", "openmandriva", "photon",
		"rhel", "rocky", "suse", "virtuozzo":
		return d
	case "ubuntu", "linuxmint", "mint":
		return "ubuntu"
	case "redhat":
		return "rhel"
	case "opensuse", "opensuse-tumbleweed", "opensuse-leap", "sles", "sle_hpc":
		return "suse"
	}
	return "linux"
}

// DatasourceString is what earlyinit writes to data/datasource-like files:
// "DataSource<Name>: <subplatform>", for example
// "DataSourceConfigDrive: config-disk (/dev/sr0)". cloud-init writes
// "DataSourceConfigDrive: DataSourceConfigDrive [net,ver=2][source=/dev/sr0]";
// the class name before the colon is the same.
func DatasourceString(d *Data) string {
	name := d.DatasourceClass
	if name == "" && d.Datasource != "" {
		name = strings.ToUpper(d.Datasource[:1]) + d.Datasource[1:]
	}
	sub := d.Subplatform
	if sub == "" {
		sub = unknown
	}
	return "DataSource" + name + ": " + sub
}

// InstanceData renders instance-data.json (redacted, for mode 0644) and
// instance-data-sensitive.json (everything, for mode 0600) for d, in
// cloud-init's format: top-level "v1" (the standardized keys), "ds" (the
// datasource's own metadata under "meta_data", OpenStack's
// network_data.json under "network_json"), "base64_encoded_keys" and
// "sensitive_keys". Both are encoded as Python's json.dumps(indent=1,
// sort_keys=True) would.
//
// Sensitive values are found by key name, at any depth (lists included,
// their indices being path components): see IsSensitiveKey. In the redacted
// file each is replaced by Redacted and its "/"-separated path is listed in
// "sensitive_keys" (in both files, as cloud-init does). Data.AdminPass and
// Data.RandomSeed are added to ds.meta_data as admin_pass and random_seed
// (base64) unless the metadata already has them. User-data and vendor-data
// are not in either file (cloud-init keeps them out too; query reads them
// from user-data.txt).
//
// Differences from cloud-init: merged_cfg, sys_info, python_version and
// system_platform are not written; cloud-init matches only a fixed list of
// sensitive key paths, earlyinit matches names and also looks into lists.
func InstanceData(d *Data, sys SysInfo) (redacted, sensitive []byte, err error) {
	full, err := instanceData(d, sys)
	if err != nil {
		return nil, nil, err
	}
	sensitive, err = pyJSON(full)
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s: %w", InstanceDataSensitiveFile, err)
	}
	redacted, err = pyJSON(redact(full))
	if err != nil {
		return nil, nil, fmt.Errorf("encode %s: %w", InstanceDataFile, err)
	}
	return redacted, sensitive, nil
}

func instanceData(d *Data, sys SysInfo) (map[string]any, error) {
	meta := map[string]any{}
	if d.Meta != nil {
		g, err := generic(d.Meta)
		if err != nil {
			return nil, fmt.Errorf("instance metadata: %w", err)
		}
		meta = g.(map[string]any)
	}
	b64 := []string{}
	if d.AdminPass != "" {
		if _, ok := meta["admin_pass"]; !ok {
			meta["admin_pass"] = d.AdminPass
		}
	}
	if len(d.RandomSeed) > 0 {
		if _, ok := meta["random_seed"]; !ok {
			meta["random_seed"] = base64.StdEncoding.EncodeToString(d.RandomSeed)
			b64 = append(b64, "ds/meta_data/random_seed")
		}
	}
	ds := map[string]any{"_doc": experimentalDoc, "meta_data": meta}
	if d.NetworkFormat == NetworkDataJSON && len(d.Network) > 0 {
		nj, err := decodeGeneric(d.Network)
		if err != nil {
			return nil, fmt.Errorf("network_data.json: %w", err)
		}
		ds["network_json"] = nj
	}
	top := map[string]any{"ds": ds, "v1": v1(d, sys)}
	stripB64(top, "", &b64)
	sort.Strings(b64)
	sens := []string{}
	findSensitive(top, "", &sens)
	sort.Strings(sens)
	top["base64_encoded_keys"] = strSlice(b64)
	top["sensitive_keys"] = strSlice(sens)
	return top, nil
}

func strSlice(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		a[i] = v
	}
	return a
}

// v1 is cloud-init's _get_standardized_metadata.
func v1(d *Data, sys SysInfo) map[string]any {
	orNull := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	platform := d.Platform
	if platform == "" {
		platform = strings.ToLower(d.Datasource)
	}
	cloud := d.CloudName
	if cloud == "" {
		if s, ok := d.Meta["cloud-name"].(string); ok && s != "" {
			cloud = strings.ToLower(s)
		} else if d.Datasource != "" {
			cloud = strings.ToLower(d.Datasource)
		} else {
			cloud = unknown
		}
	}
	sub := d.Subplatform
	if sub == "" {
		sub = unknown
	}
	var host any
	if d.LocalHostname != "" {
		host = shortHostname(d.LocalHostname)
	}
	keys := []any{}
	for _, k := range d.PublicKeys {
		keys = append(keys, k)
	}
	v := map[string]any{
		"_beta_keys":        []any{"subplatform"},
		"availability-zone": orNull(d.AvailabilityZone),
		"availability_zone": orNull(d.AvailabilityZone),
		"cloud_id":          cloudID(cloud, d.Region, platform),
		"cloud-name":        cloud,
		"cloud_name":        cloud,
		"instance-id":       d.InstanceID,
		"instance_id":       d.InstanceID,
		"local-hostname":    host,
		"local_hostname":    host,
		"platform":          platform,
		"public_ssh_keys":   keys,
		"region":            orNull(d.Region),
		"subplatform":       sub,
	}
	for k, s := range map[string]string{
		"distro":         sys.Distro,
		"distro_version": sys.DistroVersion,
		"distro_release": sys.DistroRelease,
		"variant":        sys.Variant,
		"kernel_release": sys.KernelRelease,
		"machine":        sys.Machine,
	} {
		if s != "" {
			v[k] = s
		}
	}
	return v
}

// cloudID is cloud-init's canonical_cloud_id.
func cloudID(cloud, region, platform string) string {
	if region == "" || region == unknown {
		if cloud != unknown {
			return cloud
		}
		return platform
	}
	for _, m := range []struct{ prefix, id, cloud string }{
		{"cn-", "aws-china", "aws"},
		{"us-gov-", "aws-gov", "aws"},
		{"china", "azure-china", "azure"},
	} {
		if strings.HasPrefix(region, m.prefix) && cloud == m.cloud {
			return m.id
		}
	}
	if cloud != unknown {
		return cloud
	}
	return platform
}

// IsSensitiveKey tells whether a metadata key's value is a secret that only
// the 0600 file may hold: cloud-init's sensitive keys (merged_cfg,
// security-credentials, user-data and vendor-data in any spelling) plus
// random_seed and any key whose name contains, case-insensitively, "pass"
// (password, passwd, admin_pass), "secret", "token", "credential" or
// "private_key"/"private-key"/"privatekey".
func IsSensitiveKey(key string) bool {
	k := strings.ToLower(key)
	switch strings.NewReplacer("-", "_").Replace(k) {
	case "merged_cfg", "userdata", "user_data", "vendordata", "vendor_data", "random_seed":
		return true
	}
	for _, s := range []string{"pass", "secret", "token", "credential", "private_key", "private-key", "privatekey"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "/" + key
}

// findSensitive lists the paths of sensitive keys in v, not looking inside
// a value already found sensitive.
func findSensitive(v any, prefix string, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			p := join(prefix, k)
			if IsSensitiveKey(k) {
				*out = append(*out, p)
				continue
			}
			findSensitive(e, p, out)
		}
	case []any:
		for i, e := range v {
			findSensitive(e, join(prefix, strconv.Itoa(i)), out)
		}
	}
}

// stripB64 removes cloud-init's "ci-b64:" prefix from string values and
// lists their paths, as process_instance_metadata does.
func stripB64(v any, prefix string, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			p := join(prefix, k)
			if s, ok := e.(string); ok && strings.HasPrefix(s, b64Prefix) {
				v[k] = strings.TrimPrefix(s, b64Prefix)
				*out = append(*out, p)
				continue
			}
			stripB64(e, p, out)
		}
	case []any:
		for i, e := range v {
			p := join(prefix, strconv.Itoa(i))
			if s, ok := e.(string); ok && strings.HasPrefix(s, b64Prefix) {
				v[i] = strings.TrimPrefix(s, b64Prefix)
				*out = append(*out, p)
				continue
			}
			stripB64(e, p, out)
		}
	}
}

// redact returns a copy of v with the values of sensitive keys replaced.
func redact(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if IsSensitiveKey(k) {
				out[k] = Redacted
				continue
			}
			out[k] = redact(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = redact(e)
		}
		return out
	}
	return v
}
