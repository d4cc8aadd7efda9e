package discover

import (
	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/aliyun"
	"github.com/earlyinit/earlyinit/internal/datasource/azure"
	"github.com/earlyinit/earlyinit/internal/datasource/cloudstack"
	"github.com/earlyinit/earlyinit/internal/datasource/configdrive"
	"github.com/earlyinit/earlyinit/internal/datasource/digitalocean"
	"github.com/earlyinit/earlyinit/internal/datasource/ec2"
	"github.com/earlyinit/earlyinit/internal/datasource/exoscale"
	"github.com/earlyinit/earlyinit/internal/datasource/gce"
	"github.com/earlyinit/earlyinit/internal/datasource/hetzner"
	"github.com/earlyinit/earlyinit/internal/datasource/linode"
	"github.com/earlyinit/earlyinit/internal/datasource/nocloud"
	"github.com/earlyinit/earlyinit/internal/datasource/opennebula"
	"github.com/earlyinit/earlyinit/internal/datasource/openstack"
	"github.com/earlyinit/earlyinit/internal/datasource/oracle"
	"github.com/earlyinit/earlyinit/internal/datasource/outscale"
	"github.com/earlyinit/earlyinit/internal/datasource/ovf"
	"github.com/earlyinit/earlyinit/internal/datasource/scaleway"
	"github.com/earlyinit/earlyinit/internal/datasource/upcloud"
	"github.com/earlyinit/earlyinit/internal/datasource/vmware"
	"github.com/earlyinit/earlyinit/internal/datasource/vultr"
	"github.com/earlyinit/earlyinit/internal/datasource/zstack"
)

// Sources is every datasource earlyinit knows, in the order tried when
// earlyinit.ds= names none. A new platform is its package under
// internal/datasource, declaring a datasource.Source, and one line here.
var Sources = []datasource.Source{
	configdrive.Source,
	nocloud.Source,
	opennebula.Source,
	openstack.Source,
	ec2.Source,
	// After ec2: zstack and outscale share its class (Ec2), which
	// datasource_list names, and on a machine without DMI, where every
	// source is tried, ec2 must read an EC2 service first; none of
	// these is recognised where ec2 is.
	azure.Source,
	gce.Source,
	oracle.Source,
	aliyun.Source,
	zstack.Source,
	outscale.Source,
	digitalocean.Source,
	hetzner.Source,
	vultr.Source,
	upcloud.Source,
	scaleway.Source,
	linode.Source,
	cloudstack.Source,
	exoscale.Source,
	vmware.Source,
	ovf.Source, // after vmware: see ovf's package comment
}
