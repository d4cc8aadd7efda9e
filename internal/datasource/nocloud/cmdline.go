package nocloud

import (
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/earlyinit/earlyinit/internal/instance"
)

// Cmdline is the kernel command line's ds=nocloud;s=...;i=...;h=... (or
// ds=nocloud-net, or ds=nocloud alone).
type Cmdline struct {
	Seed       string // s= (or seedfrom=), "" if none
	InstanceID string // i= (or instance-id=)
	Hostname   string // h= (or local-hostname=)
	Net        bool   // ds=nocloud-net (dsmode net)
}

// ParseCmdline parses the value after "ds=" (e.g.
// "nocloud;s=file:///seed/;h=myhost"). ok is false when the value is not a
// nocloud one. Keys other than s, i and h (and their long names) are
// ignored: cloud-init copies them into meta-data, which has no use for them
// here. A known key without a value is an error.
func ParseCmdline(v string) (c Cmdline, ok bool, err error) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	name, rest, _ := strings.Cut(v, ";")
	if name != "nocloud" && name != "nocloud-net" {
		return Cmdline{}, false, nil
	}
	c.Net = name == "nocloud-net"
	for _, kv := range strings.Split(rest, ";") {
		if kv == "" {
			continue
		}
		k, val, _ := strings.Cut(kv, "=")
		var dst *string
		switch k {
		case "s", "seedfrom":
			dst = &c.Seed
		case "i", "instance-id":
			dst = &c.InstanceID
		case "h", "local-hostname":
			dst = &c.Hostname
		default:
			continue
		}
		if val == "" {
			return Cmdline{}, true, fmt.Errorf("ds=%s: %s= has no value", v, k)
		}
		*dst = val
	}
	return c, true, nil
}

// SeedPath turns s= into a local directory path: "file:///x/" or "/x" is
// "/x". Network seeds (http, https) are an error: they are fetched by the
// metadata code, not read here.
func (c Cmdline) SeedPath() (string, error) {
	s := c.Seed
	if s == "" {
		return "", fmt.Errorf("ds=nocloud: no s= seed")
	}
	if strings.HasPrefix(s, "/") {
		return path.Clean(s), nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("ds=nocloud: s=%s: %w", s, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return "", fmt.Errorf("ds=nocloud: s=%s: file URL names host %q, want file:///path", s, u.Host)
		}
		if !strings.HasPrefix(u.Path, "/") {
			return "", fmt.Errorf("ds=nocloud: s=%s: want an absolute path, as in file:///path/", s)
		}
		return path.Clean(u.Path), nil
	case "http", "https":
		return "", fmt.Errorf("ds=nocloud: s=%s: network seeds are fetched by the metadata code, not supported here", s)
	default:
		return "", fmt.Errorf("ds=nocloud: s=%s: unsupported seed, want file:///path/ or /path", s)
	}
}

// SeedLocation is SeedPath that also takes network seeds: an http:// or
// https:// s= is returned as url (read by ReadURL), a local one as dir;
// exactly one is set when err is nil.
func (c Cmdline) SeedLocation() (dir, seedURL string, err error) {
	u, perr := url.Parse(c.Seed)
	if perr == nil && u.Host != "" && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https")) {
		return "", c.Seed, nil
	}
	dir, err = c.SeedPath()
	return dir, "", err
}

// Apply overrides d's instance id and host name with i= and h=: as in
// cloud-init, the command line wins over meta-data. Meta follows.
func (c Cmdline) Apply(d *instance.Data) {
	if d == nil {
		return
	}
	set := func(dst *string, key, val string) {
		if val == "" {
			return
		}
		*dst = val
		if d.Meta == nil {
			d.Meta = map[string]any{}
		}
		d.Meta[key] = val
	}
	set(&d.InstanceID, "instance-id", c.InstanceID)
	set(&d.LocalHostname, "local-hostname", c.Hostname)
}
