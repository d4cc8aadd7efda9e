package nocloud

import (
	"fmt"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is NoCloud: a "cidata" ISO9660 or vfat filesystem, cloud-init's
// seed directories in the real root, ds=nocloud;s=DIR-or-URL on the kernel
// command line, whose i= and h= override whatever NoCloud seed is read, or
// the image's datasource.NoCloud.seedfrom.
var Source = datasource.Source{
	Name:     "nocloud",
	Class:    "NoCloud",
	Labels:   []string{"cidata", "CIDATA"},
	SeedDirs: []string{"/var/lib/cloud/seed/nocloud", "/var/lib/cloud/seed/nocloud-net"},
	ReadFS:   Read,
	Cmdline:  cmdlineHint,
	SeedFrom: seedFromHint,
	SeedURL:  ReadURL,
}

// seedFromHint reads the image's seedfrom setting: a directory in the real
// root (/path or file:///path) or an http:// or https:// URL.
func seedFromHint(v, origin string) (datasource.Hint, error) {
	dir, u, err := Cmdline{Seed: v}.SeedLocation()
	if err != nil {
		// SeedPath's errors speak of ds=nocloud;s=; this is the image's.
		return datasource.Hint{}, fmt.Errorf("%s: want a directory (/path or file:///path/) or an http:// URL", origin)
	}
	return datasource.Hint{Seed: dir, SeedURL: u, Origin: origin}, nil
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
	h := datasource.Hint{Apply: c.Apply, Alone: c.alone}
	if c.Seed != "" {
		p, u, err := c.SeedLocation()
		if err != nil {
			return h, true, fmt.Errorf("datasource nocloud (ds=nocloud;s=%s) rejected: %w", c.Seed, err)
		}
		h.Seed, h.SeedURL, h.Origin = p, u, "ds=nocloud;s="+c.Seed
		if u != "" {
			h.Origin = "ds=nocloud;s=" + redact(u)
		}
	}
	return h, true, nil
}

// alone is the instance ds=nocloud describes with no seed, as cloud-init's
// NoCloud builds it from the command line alone: its meta-data is the
// words (i= and h= are applied afterwards, by Apply) over the defaults
// instance-id "nocloud" and the dsmode of the words (local for ds=nocloud,
// net for ds=nocloud-net); no user-data.
func (c Cmdline) alone() *instance.Data {
	mode := "local"
	if c.Net {
		mode = "net"
	}
	return &instance.Data{InstanceID: "nocloud", Meta: map[string]any{"instance-id": "nocloud", "dsmode": mode}}
}
