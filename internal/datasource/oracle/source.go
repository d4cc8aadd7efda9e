package oracle

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is OCI's instance metadata service.
var Source = datasource.Source{
	Name:     "oracle",
	Class:    "Oracle",
	Platform: Platform,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient(), SecondaryNICs: svc.SecondaryNICs}
		return c.Read(ctx)
	},
}
