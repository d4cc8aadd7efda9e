package aliyun

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is Alibaba Cloud ECS's metadata service, at its own address.
var Source = datasource.Source{
	Name:         "aliyun",
	Class:        "AliYun",
	Platform:     Platform,
	MetadataBase: DefaultBaseURL,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient()}
		return c.Read(ctx)
	},
}
