package digitalocean

import (
	"context"

	"github.com/earlyinit/earlyinit/pkg/datasource"
	"github.com/earlyinit/earlyinit/pkg/dmi"
	"github.com/earlyinit/earlyinit/pkg/instance"
)

// Source is DigitalOcean's droplet metadata service.
var Source = datasource.Source{
	Name:     "digitalocean",
	Class:    "DigitalOcean",
	Platform: Platform,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient()}
		return c.Read(ctx)
	},
}

// Platform recognises a droplet as ds-identify does: sys_vendor is
// "DigitalOcean".
func Platform(i dmi.Info) bool { return i.SysVendor == "DigitalOcean" }
