package hetzner

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is Hetzner Cloud's metadata service.
var Source = datasource.Source{
	Name:     "hetzner",
	Class:    "Hetzner",
	Platform: Platform,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient()}
		return c.Read(ctx)
	},
}

// Platform recognises a Hetzner Cloud server as ds-identify does:
// sys_vendor is "Hetzner".
func Platform(i dmi.Info) bool { return i.SysVendor == "Hetzner" }
