package ec2

import (
	"context"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is an EC2-style instance metadata service (AWS, nova's EC2 API,
// ZStack, ...).
var Source = datasource.Source{
	Name:     "ec2",
	Class:    "Ec2",
	Platform: Platform,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient()}
		return c.Read(ctx)
	},
}

// Platform is ds-identify's dscheck_Ec2 with its default strict_id=true:
// only a platform that says it is an EC2 one is recognised.
//
//   - AWS: the system UUID starts with "ec2", in either byte order (its
//     first group read little-endian, "AB232AEC" as "EC2A23AB", as
//     cloud-init's identify_aws does); or the system serial starts with
//     "ec2" (it is the UUID on AWS); or the vendor is "Amazon EC2" (Nitro).
//   - Brightbox: the serial ends in ".brightbox.com".
//   - e24cloud and Tilaa: the vendor is exactly that.
//
// (ds-identify also reads /sys/hypervisor/uuid, for Xen PV guests, which
// have no DMI strings: discovery tries every source on those.) ZStack, 3DS
// Outscale and Alibaba Cloud, which ds-identify names as EC2 platforms too,
// are their own sources, recognised by their own rules.
func Platform(i dmi.Info) bool {
	uuid := strings.ToLower(i.ProductUUID)
	serial := strings.ToLower(i.ProductSerial)
	switch {
	case strings.HasPrefix(uuid, "ec2"), swappedEC2(uuid):
		return true
	case strings.HasPrefix(serial, "ec2"), i.SysVendor == "Amazon EC2":
		return true
	case strings.HasSuffix(serial, ".brightbox.com"):
		return true
	case i.SysVendor == "e24cloud", i.SysVendor == "Tilaa":
		return true
	}
	return false
}

// swappedEC2 tells whether uuid's first group, read as little-endian bytes,
// starts with "ec2": it ends in "2?ec" (ds-identify's *2[0-9a-f][Ee][Cc]).
func swappedEC2(uuid string) bool {
	g, _, _ := strings.Cut(uuid, "-")
	if len(g) < 4 {
		return false
	}
	t := g[len(g)-4:]
	return t[0] == '2' && strings.ContainsRune("0123456789abcdef", rune(t[1])) && t[2:] == "ec"
}
