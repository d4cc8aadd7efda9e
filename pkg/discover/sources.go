package discover

import (
	"github.com/earlyinit/earlyinit/pkg/datasource"
	"github.com/earlyinit/earlyinit/pkg/datasource/configdrive"
	"github.com/earlyinit/earlyinit/pkg/datasource/ec2"
	"github.com/earlyinit/earlyinit/pkg/datasource/nocloud"
	"github.com/earlyinit/earlyinit/pkg/datasource/openstack"
)

// Sources is every datasource earlyinit knows, in the order tried when
// earlyinit.ds= names none. A new platform is its package under
// pkg/datasource, declaring a datasource.Source, and one line here.
var Sources = []datasource.Source{
	configdrive.Source,
	nocloud.Source,
	openstack.Source,
	ec2.Source,
}
