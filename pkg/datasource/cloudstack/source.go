package cloudstack

import (
	"context"
	"io/fs"
	"strings"

	"github.com/earlyinit/earlyinit/pkg/datasource"
	"github.com/earlyinit/earlyinit/pkg/datasource/nocloud"
	"github.com/earlyinit/earlyinit/pkg/dmi"
	"github.com/earlyinit/earlyinit/pkg/instance"
)

// Source is CloudStack's virtual router (metadata and password server at
// the DHCP server), or cloud-init's seed directory for it.
var Source = datasource.Source{
	Name:     "cloudstack",
	Class:    "CloudStack",
	Platform: Platform,
	SeedDirs: []string{"/var/lib/cloud/seed/cs"},
	ReadFS:   readSeed,
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
