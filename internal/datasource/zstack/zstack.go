// Package zstack reads ZStack's metadata service, an EC2-style service at
// 169.254.169.254, as cloud-init's DataSourceEc2 does when it identifies
// the platform as ZStack: the EC2 reader (internal/datasource/ec2) without the
// IMDSv2 token, the instance's cloud named "zstack".
//
// ZStack runs the service for a VM only when the VM has user-data set
// (zstackio/zstack#236): a ZStack VM without user-data has no metadata
// service, and the error says so.
package zstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/ec2"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// assetTagSuffix ends the chassis asset tag of a ZStack VM
// ("123456.zstack.io").
const assetTagSuffix = ".zstack.io"

// Platform recognises ZStack: the chassis asset tag ends in ".zstack.io",
// compared without case as cloud-init's identify_zstack does (ds-identify
// matches "*.zstack.io").
func Platform(i dmi.Info) bool {
	return strings.HasSuffix(strings.ToLower(i.ChassisAssetTag), assetTagSuffix)
}

// Read reads the service at svc.Base.
func Read(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
	c := &ec2.Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient(), NoToken: true}
	d, err := c.Read(ctx)
	if err != nil {
		if unreachable(err) {
			return nil, fmt.Errorf("zstack: %w (ZStack runs the metadata service only for VMs with user-data set)", err)
		}
		return nil, fmt.Errorf("zstack: %w", err)
	}
	d.CloudName = "zstack"
	return d, nil
}

// unreachable tells whether err says the service is not there: no
// connection, no answer, or a 404 where the service's root should be.
func unreachable(err error) bool {
	var te *httpget.TimeoutError
	var oe *net.OpError
	return errors.As(err, &te) || errors.As(err, &oe) || httpget.NotFound(err)
}
