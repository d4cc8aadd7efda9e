package discover

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource"
)

// Which sources to try, in which order: earlyinit.ds= and the image's
// datasource_list.

// Order returns the sources earlyinit.ds= (comma separated, any case)
// names, or Sources when it names none. Unknown names are reported and
// skipped.
func Order(ds string) (order []datasource.Source, explicit bool, errs []error) {
	var names []string
	for _, s := range Sources {
		names = append(names, s.Name)
	}
	for _, n := range strings.Split(ds, ",") {
		n = strings.ToLower(strings.TrimSpace(n))
		if n == "" {
			continue
		}
		s, ok := byName(Sources, n)
		if !ok {
			errs = append(errs, fmt.Errorf("earlyinit.ds=%s: unknown datasource %q (known: %s)", ds, n, strings.Join(names, ", ")))
			continue
		}
		order = append(order, s)
	}
	if len(order) == 0 && len(errs) == 0 {
		return Sources, false, nil
	}
	return order, true, errs
}

func byName(list []datasource.Source, name string) (datasource.Source, bool) {
	for _, s := range list {
		if s.Name == name {
			return s, true
		}
	}
	return datasource.Source{}, false
}

// Image is what the image's own configuration (/etc/cloud/cloud.cfg and
// cloud.cfg.d, earlyinit.cfg) says about discovery, its values already
// type-checked (internal/provision reads them from internal/imagecfg). The zero value
// changes nothing.
type Image struct {
	// List is datasource_list: cloud-init's names of the sources to try,
	// in order ("NoCloud", "ConfigDrive", "OpenStack", "Ec2", "None");
	// nil means Sources. earlyinit.ds= wins over it. See ImageOrder.
	List []string
	// Settings are the datasource: settings, by cloud-init class name
	// (the key under datasource:, Source.Class).
	Settings map[string]SourceSettings
	// DefaultUser is the name of the default user the image creates, ""
	// for none: metadata sources are told it (Service.DefaultUser).
	DefaultUser string
}

// SourceSettings is one source's datasource.<Class> settings.
type SourceSettings struct {
	// MetadataURLs are the metadata service's base URLs (metadata_urls),
	// asked in order until one answers; nil means the one the System
	// found. earlyinit.metadata_url wins over them.
	MetadataURLs []string
	// MaxWait bounds the time spent on the source's metadata service
	// (max_wait), within earlyinit.timeout: the smaller wins. 0 means
	// earlyinit.timeout alone.
	MaxWait time.Duration
	// Timeout bounds each try of each request (timeout); 0 means the
	// source's default.
	Timeout time.Duration
	// SeedFrom is where the source's files are (NoCloud's seedfrom): a
	// directory in the real root or an http:// URL, read in the source's
	// place in the order, before its seed directories and drives; "" for
	// none. A seed on the kernel command line (ds=nocloud;s=) wins.
	SeedFrom string
	// SecondaryNICs is Oracle's configure_secondary_nics
	// (Service.SecondaryNICs).
	SecondaryNICs bool
}

// ImageOrder returns the sources a datasource_list names, in its order,
// matched by cloud-init's class name (Source.Class, in any case, with or
// without cloud-init's "DataSource" prefix). "None", cloud-init's fallback
// source, names no source of earlyinit's: it sets noneOK, meaning that
// finding no datasource is fine. A name earlyinit has no source for is one
// warning. A list whose only source earlyinit has is None ([None]) gives
// no source: cloud-init then uses None without searching. A list that
// names none of earlyinit's sources, nor None, gives Sources, with a
// warning.
func ImageOrder(list []string) (order []datasource.Source, noneOK bool, warns []string) {
	var classes []string
	for _, s := range Sources {
		if !slices.Contains(classes, s.Class) {
			classes = append(classes, s.Class)
		}
	}
	classes = append(classes, "None")
	for _, name := range list {
		n := strings.TrimPrefix(strings.TrimSpace(name), "DataSource")
		if strings.EqualFold(n, "None") {
			noneOK = true
			continue
		}
		// Every source of the class: cloud-init's Ec2 is AWS, ZStack
		// and Outscale alike; their Platform rules tell them apart.
		found := false
		for _, s := range Sources {
			if strings.EqualFold(n, s.Class) {
				found = true
				if _, dup := byName(order, s.Name); !dup {
					order = append(order, s)
				}
			}
		}
		if !found {
			warns = append(warns, fmt.Sprintf("datasource_list: %q: earlyinit has no such datasource (it has %s): skipped", name, strings.Join(classes, ", ")))
		}
	}
	if len(order) == 0 && noneOK {
		return nil, true, warns
	}
	if len(order) == 0 {
		warns = append(warns, fmt.Sprintf("datasource_list names none of earlyinit's datasources: trying them all (%s)", strings.Join(names(Sources), ", ")))
		return Sources, noneOK, warns
	}
	return order, noneOK, warns
}

func names(list []datasource.Source) []string {
	var n []string
	for _, s := range list {
		n = append(n, s.Name)
	}
	return n
}
