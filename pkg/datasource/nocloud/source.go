package nocloud

import (
	"fmt"

	"github.com/earlyinit/earlyinit/pkg/datasource"
)

// Source is NoCloud: a "cidata" ISO9660 or vfat filesystem, cloud-init's
// seed directories in the real root, or ds=nocloud;s=DIR on the kernel
// command line, whose i= and h= override whatever NoCloud seed is read.
var Source = datasource.Source{
	Name:     "nocloud",
	Class:    "NoCloud",
	Labels:   []string{"cidata", "CIDATA"},
	SeedDirs: []string{"/var/lib/cloud/seed/nocloud", "/var/lib/cloud/seed/nocloud-net"},
	ReadFS:   Read,
	Cmdline:  cmdlineHint,
}

// cmdlineHint reads ds=nocloud[;s=...;i=...;h=...].
func cmdlineHint(params map[string]string) (datasource.Hint, bool, error) {
	v, ok := params["ds"]
	if !ok {
		return datasource.Hint{}, false, nil
	}
	c, isNoCloud, err := ParseCmdline(v)
	if err != nil {
		return datasource.Hint{}, false, fmt.Errorf("cmdline ds=%s: %w", v, err)
	}
	if !isNoCloud {
		return datasource.Hint{}, false, nil
	}
	h := datasource.Hint{Apply: c.Apply}
	if c.Seed != "" {
		p, err := c.SeedPath()
		if err != nil {
			return h, true, fmt.Errorf("datasource nocloud (ds=nocloud;s=%s) rejected: %w", c.Seed, err)
		}
		h.Seed, h.Origin = p, "ds=nocloud;s="+c.Seed
	}
	return h, true, nil
}
