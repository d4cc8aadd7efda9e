// Package instance holds the one instance model every datasource produces,
// and what is derived from it alone: host names and /etc/hosts lines,
// instance-data.json (rendered, redacted, queried) and the names in the
// instance cache. It writes nothing; internal/instance/cache writes the model into
// the real root.
package instance

import "strings"

// Data is what a datasource knows about this instance. Every datasource
// (config drive, NoCloud, OpenStack over HTTP, EC2) fills the same fields; the
// source's own metadata, as it read it, goes in Meta and ends up under "ds" in
// instance-data.json.
type Data struct {
	// Datasource is the short name of the source: "configdrive", "nocloud",
	// "openstack", "ec2".
	Datasource string
	// DatasourceClass is cloud-init's class name for the source without
	// its "DataSource" prefix ("ConfigDrive", "NoCloud"), for the
	// datasource files cloud-init's tools read; "" means Datasource with
	// its first letter upper-cased.
	DatasourceClass string
	// CloudName and Platform are cloud-init's v1 cloud_name and platform.
	CloudName string
	Platform  string
	// Subplatform says where the data came from, as cloud-init does:
	// "config-disk (/dev/sr0)", "seed-dir (/var/lib/cloud/seed/nocloud)",
	// "metadata (http://169.254.169.254)".
	Subplatform string

	InstanceID       string
	LocalHostname    string // short or fully qualified host name as given
	AvailabilityZone string
	Region           string
	PublicKeys       []string // OpenSSH authorized_keys lines, in source order
	LaunchIndex      *int

	// Raw payloads, byte for byte as the source served them.
	UserData    []byte
	VendorData  []byte // vendor_data.json's cloud-init part, or NoCloud vendor-data
	VendorData2 []byte // OpenStack vendor_data2.json's cloud-init part

	// Network is the raw network configuration and its format; internal/netcfg
	// parses it.
	Network       []byte
	NetworkFormat NetworkFormat

	// Files are OpenStack "files" (injected files): absolute path in the real
	// root and content.
	Files []File

	// Secrets: only ever written to the 0600 sensitive file.
	RandomSeed []byte
	AdminPass  string

	// Meta is the datasource's own metadata (meta_data.json, NoCloud
	// meta-data, EC2 meta-data tree) as generic JSON values.
	Meta map[string]any
}

// NetworkFormat names the format of Data.Network.
type NetworkFormat string

const (
	NetworkNone        NetworkFormat = ""
	NetworkDataJSON    NetworkFormat = "network_data.json" // OpenStack
	NetworkYAML        NetworkFormat = "yaml"              // network config v1 or v2
	NetworkENI         NetworkFormat = "eni"               // Debian interfaces(5)
	NetworkEC2Metadata NetworkFormat = "ec2"               // EC2 network/interfaces/macs tree, as JSON
)

// File is a file the datasource asks to place in the real root.
type File struct {
	Path    string
	Content []byte
}

// InstanceDirName is the directory name of instance id under instances/:
// the id with every "/" replaced by "_", as cloud-init does.
func InstanceDirName(id string) string {
	return strings.ReplaceAll(id, "/", "_")
}
