package outscale

import "github.com/earlyinit/earlyinit/internal/datasource"

// Source is Outscale's EC2-style metadata service. Its class is
// cloud-init's (Outscale is DataSourceEc2 there), so datasource.Ec2
// settings apply to it.
var Source = datasource.Source{
	Name:     "outscale",
	Class:    "Ec2",
	Platform: Platform,
	Metadata: Read,
}
