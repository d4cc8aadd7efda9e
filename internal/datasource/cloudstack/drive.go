package cloudstack

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// CloudStack's config drive (its "ConfigDrive" network service provider,
// for networks without a virtual router's user-data service) is an ISO
// labelled config-2 that CloudStack's ConfigDriveBuilder writes as
//
//	cloudstack/metadata/<name>.txt       one file per meta-data entry:
//	                                     instance-id, vm-id, local-hostname,
//	                                     availability-zone, public-keys,
//	                                     service-offering, local-ipv4, ...
//	cloudstack/userdata/user_data.txt    the user-data, decoded
//	cloudstack/password/vm_password.txt  the VM's password, when reset
//	openstack/latest/meta_data.json      the same for OpenStack readers
//	openstack/latest/network_data.json   the NICs, DNS
//	openstack/latest/vendor_data.json    {}
//	openstack/latest/user_data           the user-data
//
// cloud-init 22.4 has no reader for the cloudstack/ tree: its ConfigDrive
// source reads the openstack/ one, without the password. ReadDrive reads
// the cloudstack/ tree as the metadata service's tree is read (the same
// names, so the same instance id), with openstack/latest/network_data.json
// for the network.
const (
	driveDir      = "cloudstack"
	driveMetadata = driveDir + "/metadata"
	driveUserData = driveDir + "/userdata/user_data.txt"
	drivePassword = driveDir + "/password/vm_password.txt"
	driveNetwork  = "openstack/latest/network_data.json"
)

// errNotCloudStackDrive is returned (wrapped) when a drive has no
// cloudstack/metadata directory.
var errNotCloudStackDrive = errors.New("no cloudstack/metadata directory: not a CloudStack config drive")

// ReadDrive reads a CloudStack config drive whose root is fsys: the
// meta-data files (each value as the metadata service's: one line, or the
// list of its lines), instance-id (else vm-id, which CloudStack sets to the
// same UUID) required, local-hostname, availability-zone and public-keys;
// the user-data; the password (never logged; empty or "saved_password"
// is none); and network_data.json as the network configuration. Files are
// read capped, names are checked, links and special files refused (fsys is
// a DriveFS).
func ReadDrive(fsys fs.FS) (*instance.Data, error) {
	ents, err := fs.ReadDir(fsys, driveMetadata)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errNotCloudStackDrive
	}
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasSuffix(e.Name(), ".txt") {
			continue
		}
		names = append(names, e.Name())
	}
	if len(names) > MaxEntries {
		return nil, fmt.Errorf("%s: %d files, more than the %d allowed", driveMetadata, len(names), MaxEntries)
	}
	sort.Strings(names)
	meta := map[string]any{}
	for _, n := range names {
		b, err := datasource.ReadFile(fsys, path.Join(driveMetadata, n), MaxMetadata)
		if err != nil {
			return nil, err
		}
		meta[strings.TrimSuffix(n, ".txt")] = leaf(string(b))
	}
	if id, ok := meta["instance-id"].(string); !ok || strings.TrimSpace(id) == "" {
		if vm, ok := meta["vm-id"].(string); ok && strings.TrimSpace(vm) != "" {
			meta["instance-id"] = vm
		}
	}
	d, err := fromMetadata(driveMetadata+"/", meta)
	if err != nil {
		return nil, err
	}
	d.Datasource, d.DatasourceClass = "cloudstack", "CloudStack"
	d.CloudName, d.Platform = "cloudstack", "cloudstack"
	if d.UserData, err = datasource.ReadOptional(fsys, driveUserData, MaxUserData); err != nil {
		return nil, err
	}
	pw, err := datasource.ReadOptional(fsys, drivePassword, maxPassword)
	if err != nil {
		return nil, err
	}
	if p := strings.TrimSpace(string(pw)); p != "" && p != SavedPassword {
		d.AdminPass = p
	}
	nd, err := datasource.ReadOptional(fsys, driveNetwork, datasource.MaxFileSize)
	if err != nil {
		return nil, err
	}
	if nd != nil {
		v, err := jsondoc.Decode(driveNetwork, nd)
		if err != nil {
			return nil, err
		}
		if _, ok := v.(map[string]any); !ok {
			return nil, fmt.Errorf("%s: want an object, got %s", driveNetwork, scalar.JSONNoun(v))
		}
		d.Network, d.NetworkFormat = nd, instance.NetworkDataJSON
	}
	return d, nil
}
