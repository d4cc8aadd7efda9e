package linode

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is the Akamai (Linode) metadata service.
var Source = datasource.Source{
	Name:     "akamai",
	Class:    "Akamai",
	Platform: Platform,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient()}
		return c.Read(ctx)
	},
}

// Platform recognises a Linode as ds-identify does: sys_vendor is "Linode"
// or "Akamai".
func Platform(i dmi.Info) bool { return i.SysVendor == "Linode" || i.SysVendor == "Akamai" }
