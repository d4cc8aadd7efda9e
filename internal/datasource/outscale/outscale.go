// Package outscale reads Outscale's metadata service, an EC2-style service
// at 169.254.169.254, as cloud-init's DataSourceEc2 does when it identifies
// the platform as Outscale: the EC2 reader (internal/datasource/ec2) without the
// IMDSv2 token, tags listed but missing skipped (LP: #1988157, which the
// EC2 reader does everywhere), the instance's cloud named "outscale".
package outscale

import (
	"context"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/ec2"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Outscale's DMI strings.
const (
	SysVendor   = "3DS Outscale"
	ProductName = "3DS Outscale VM"
)

// Platform recognises Outscale: sys_vendor "3DS Outscale" and
// product_name "3DS Outscale VM", both, compared without case as
// cloud-init's identify_outscale does (ds-identify compares them exactly).
func Platform(i dmi.Info) bool {
	return strings.EqualFold(i.SysVendor, SysVendor) && strings.EqualFold(i.ProductName, ProductName)
}

// Read reads the service at svc.Base.
func Read(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
	c := &ec2.Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient(), NoToken: true}
	d, err := c.Read(ctx)
	if err != nil {
		return nil, fmt.Errorf("outscale: %w", err)
	}
	d.CloudName = "outscale"
	return d, nil
}
