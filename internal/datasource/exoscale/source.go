package exoscale

import (
	"context"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is Exoscale's metadata and password servers.
var Source = datasource.Source{
	Name:     "exoscale",
	Class:    "Exoscale",
	Platform: Platform,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient()}
		return c.Read(ctx)
	},
}

// Platform recognises an Exoscale instance as ds-identify and cloud-init
// do: product_name begins with "Exoscale" ("Exoscale Compute Platform").
func Platform(i dmi.Info) bool { return strings.HasPrefix(i.ProductName, "Exoscale") }
