package vultr

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is Vultr's metadata service.
var Source = datasource.Source{
	Name:     "vultr",
	Class:    "Vultr",
	Platform: Platform,
	Cmdline:  cmdline,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient()}
		return c.Read(ctx)
	},
}

// Platform recognises a Vultr VM as ds-identify does: sys_vendor is
// "Vultr". (Bare metal has no such DMI; it says "vultr" on the kernel
// command line, which cmdline reads.)
func Platform(i dmi.Info) bool { return i.SysVendor == "Vultr" }

// cmdline: the word "vultr" on the kernel command line asks for Vultr, as
// ds-identify and cloud-init's is_vultr read it.
func cmdline(params map[string]string) (datasource.Hint, bool, error) {
	_, ok := params["vultr"]
	return datasource.Hint{}, ok, nil
}
