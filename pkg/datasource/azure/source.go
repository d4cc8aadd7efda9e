package azure

import (
	"context"

	"github.com/earlyinit/earlyinit/pkg/datasource"
	"github.com/earlyinit/earlyinit/pkg/instance"
)

// Source is Azure's IMDS. The provisioning ISO (ovf-env.xml) is read when
// discovery hands it over (Client.OVF; see Read), and the ready report is
// Ready, for discovery to call once the instance is chosen.
var Source = datasource.Source{
	Name:     "azure",
	Class:    "Azure",
	Platform: Platform,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		return Read(ctx, svc, nil)
	},
	Ready: Ready,
}

// Read reads IMDS through svc, with ovf (nil for none) merged in.
func Read(ctx context.Context, svc datasource.Service, ovf *OVF) (*instance.Data, error) {
	c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient(), OVF: ovf}
	return c.Read(ctx)
}
