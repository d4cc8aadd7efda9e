package gce

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is GCE's metadata server.
var Source = datasource.Source{
	Name:     "gce",
	Class:    "GCE",
	Platform: Platform,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient(), DefaultUser: svc.DefaultUser}
		return c.Read(ctx)
	},
}
