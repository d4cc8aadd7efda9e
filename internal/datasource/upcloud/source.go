package upcloud

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is UpCloud's metadata service.
var Source = datasource.Source{
	Name:     "upcloud",
	Class:    "UpCloud",
	Platform: Platform,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient()}
		return c.Read(ctx)
	},
}

// Platform recognises an UpCloud server as ds-identify does: sys_vendor is
// "UpCloud".
func Platform(i dmi.Info) bool { return i.SysVendor == "UpCloud" }
