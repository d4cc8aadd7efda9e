package scaleway

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is Scaleway's instance metadata API, at its own address.
var Source = datasource.Source{
	Name:         "scaleway",
	Class:        "Scaleway",
	Platform:     Platform,
	Cmdline:      cmdline,
	MetadataBase: DefaultBaseURL,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		c := &Client{BaseURL: svc.Base, HTTPClient: svc.HTTPClient()}
		if svc.HTTP == nil {
			// The API gives user-data only to a privileged source port.
			c.DataHTTP = &httpget.Getter{PrivilegedPort: true, RequestTimeout: svc.Timeout, Logf: svc.Logf}
		}
		return c.Read(ctx)
	},
}

// Platform recognises a Scaleway instance as ds-identify does: sys_vendor
// is "Scaleway".
func Platform(i dmi.Info) bool { return i.SysVendor == "Scaleway" }

// cmdline: the word "scaleway" on the kernel command line asks for
// Scaleway, as ds-identify reads it (Scaleway's boot passes it).
func cmdline(params map[string]string) (datasource.Hint, bool, error) {
	_, ok := params["scaleway"]
	return datasource.Hint{}, ok, nil
}
