package digitalocean

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is DigitalOcean's droplet metadata service.
var Source = datasource.Source{
	Name:     "digitalocean",
	Class:    "DigitalOcean",
	Platform: Platform,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		base := svc.Base
		if svc.Base4 != "" {
			// No lease: the droplet's metadata is at 169.254.169.254
			// over the IPv4 link-local address, as cloud-init reads it.
			base = svc.Base4
		}
		c := &Client{BaseURL: base, HTTPClient: svc.HTTPClient()}
		return c.Read(ctx)
	},
}

// Platform recognises a droplet as ds-identify does: sys_vendor is
// "DigitalOcean".
func Platform(i dmi.Info) bool { return i.SysVendor == "DigitalOcean" }
