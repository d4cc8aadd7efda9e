package azure

import (
	"context"
	"fmt"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is Azure's IMDS. The provisioning media (ovf-env.xml on a udf or
// iso9660 drive) is read when discovery hands it over in Service.Drive
// and merged in (see Read), and the ready report is Ready, for discovery
// to call once the instance is chosen.
var Source = datasource.Source{
	Name:     "azure",
	Class:    "Azure",
	Platform: Platform,
	// cloud-init looks for ovf-env.xml on every udf and iso9660 device.
	ProvisioningDrive: func(fstype, _ string) bool { return fstype == "udf" || fstype == "iso9660" },
	ProvisioningFile:  OVFFile,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		var ovf *OVF
		if svc.Drive != nil {
			var err error
			if ovf, err = ReadOVF(svc.Drive); err != nil {
				return nil, fmt.Errorf("provisioning media: %w", err)
			}
		}
		return Read(ctx, svc, ovf)
	},
	Ready: Ready,
}

// Read reads IMDS through svc, with ovf (nil for none) merged in.
func Read(ctx context.Context, svc datasource.Service, ovf *OVF) (*instance.Data, error) {
	c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient(), OVF: ovf}
	return c.Read(ctx)
}
