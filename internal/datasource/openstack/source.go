package openstack

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is nova's metadata service (and the Neutron and ZStack proxies
// that answer for it).
var Source = datasource.Source{
	Name:     "openstack",
	Class:    "OpenStack",
	Platform: Platform,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient()}
		return c.Read(ctx)
	},
}

// novaNames are the product names nova gives its instances: its own, and
// the one RDO's packages give it (LP: #1675349).
var novaNames = []string{"OpenStack Nova", "OpenStack Compute"}

// assetTags are the chassis asset tags of clouds that run nova but set
// other DMI strings: Open Telekom Cloud (LP: #1756471), SAP Converged Cloud
// (on VMware), Huawei Cloud and Samsung Cloud Platform; and nova's own
// names, which a hypervisor that cannot set the product name (VMware
// vSphere, LP: #1669875) puts there.
var assetTags = []string{"OpenTelekomCloud", "SAP CCloud VM", "HUAWEICLOUD", "Samsung Cloud Platform", "OpenStack Nova", "OpenStack Compute"}

// Platform is ds-identify's dscheck_OpenStack, compared exactly as it
// does: the product name is nova's, or the chassis asset tag one of
// assetTags. (ds-identify also answers "maybe" on machines that are not
// x86; earlyinit runs on x86, and a machine without DMI strings at all is
// discovery's case, not a rule's.)
func Platform(i dmi.Info) bool {
	for _, n := range novaNames {
		if i.ProductName == n {
			return true
		}
	}
	for _, t := range assetTags {
		if i.ChassisAssetTag == t {
			return true
		}
	}
	return false
}
