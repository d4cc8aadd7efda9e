package cloudstack

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/nocloud"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is CloudStack's virtual router (metadata and password server at
// the DHCP server), its config drive (config-2, with a cloudstack/ tree:
// see ReadDrive), or cloud-init's seed directory for it.
//
// The config drive's label is the OpenStack config drive's, and configdrive
// comes first in the registry: a CloudStack drive that also carries
// openstack/latest/meta_data.json (CloudStack writes it when the network
// offers user-data) is read by configdrive, as cloud-init 22.4's
// ConfigDrive reads it, without the password; earlyinit.ds=cloudstack (or
// datasource_list: [CloudStack]) reads it here. A drive with the
// cloudstack/ tree alone is read here either way.
var Source = datasource.Source{
	Name:     "cloudstack",
	Class:    "CloudStack",
	Platform: Platform,
	Labels:   []string{"config-2", "CONFIG-2"},
	SeedDirs: []string{"/var/lib/cloud/seed/cs"},
	ReadFS:   readFS,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{Server: svc.DHCPServer, HTTPClient: svc.HTTPClient()}
		return c.Read(ctx)
	},
}

// Platform recognises a CloudStack instance as ds-identify does:
// product_name begins with "CloudStack" ("CloudStack KVM Hypervisor").
// Instances on XenServer or VMware hosts do not say so in their DMI; they
// need earlyinit.ds=cloudstack or datasource_list.
func Platform(i dmi.Info) bool { return strings.HasPrefix(i.ProductName, "CloudStack") }

// readFS reads a config drive (a cloudstack/ directory) with ReadDrive,
// one with NoCloud's meta-data as the seed directory; anything else (an
// OpenStack config drive configdrive refused) is an error.
func readFS(fsys fs.FS) (*instance.Data, error) {
	if fi, err := fs.Stat(fsys, driveDir); err == nil && fi.IsDir() {
		return ReadDrive(fsys)
	}
	if _, err := fs.Stat(fsys, "meta-data"); err != nil {
		return nil, fmt.Errorf("no %s/ directory (a CloudStack config drive) and no meta-data (a seed directory)", driveDir)
	}
	return readSeed(fsys)
}

// readSeed reads cloud-init's CloudStack seed directory: meta-data and
// user-data, as a NoCloud seed is laid out.
func readSeed(fsys fs.FS) (*instance.Data, error) {
	d, err := nocloud.Read(fsys)
	if err != nil {
		return nil, err
	}
	d.Datasource, d.DatasourceClass = "cloudstack", "CloudStack"
	d.CloudName, d.Platform = "cloudstack", "cloudstack"
	return d, nil
}
