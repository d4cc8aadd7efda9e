package zstack

import "github.com/earlyinit/earlyinit/internal/datasource"

// Source is ZStack's EC2-style metadata service. Its class is cloud-init's
// (ZStack is DataSourceEc2 there), so datasource.Ec2 settings apply to it.
var Source = datasource.Source{
	Name:     "zstack",
	Class:    "Ec2",
	Platform: Platform,
	Metadata: Read,
}
