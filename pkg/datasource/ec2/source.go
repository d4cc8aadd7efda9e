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
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTP: svc.HTTP, Logf: svc.Logf, RequestTimeout: svc.Timeout}
		return c.Read(ctx)
	},
}
