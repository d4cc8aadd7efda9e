package ec2

import (
	"context"

	"github.com/earlyinit/earlyinit/pkg/datasource"
	"github.com/earlyinit/earlyinit/pkg/instance"
)

// Source is an EC2-style instance metadata service (AWS, nova's EC2 API,
// ZStack, ...).
var Source = datasource.Source{
	Name:  "ec2",
	Class: "Ec2",
	Metadata: func(ctx context.Context, base string, logf func(string, ...any)) (*instance.Data, error) {
		c := &Client{BaseURL: base, Logf: logf}
		return c.Read(ctx)
	},
}
