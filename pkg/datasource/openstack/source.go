package openstack

import (
	"context"

	"github.com/earlyinit/earlyinit/pkg/datasource"
	"github.com/earlyinit/earlyinit/pkg/instance"
)

// Source is nova's metadata service (and the Neutron and ZStack proxies
// that answer for it).
var Source = datasource.Source{
	Name:  "openstack",
	Class: "OpenStack",
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTP: svc.HTTP, Logf: svc.Logf, RequestTimeout: svc.Timeout}
		return c.Read(ctx)
	},
}
