package discover

import (
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/settings"
)

// Decision is which sources discovery tries, and why, as ds-identify
// decides it from the DMI strings and what the user asked for.
//
// A source's drives and seeds are always tried: reading them costs no
// network. A source's metadata service is tried only when
//
//   - the user asked for the source: earlyinit.ds= names it, the image's
//     datasource_list names it alone (with or without None after it, as
//     ds-identify reads a one-entry list), or its own words name it (ds=
//     on the kernel command line, or in the DMI system serial);
//   - earlyinit.metadata_url is set: every metadata source is asked there;
//   - its Platform rule recognises the DMI strings; or
//   - the machine has no DMI strings at all (Firecracker, Xen PV, boards
//     without SMBIOS): then the platform cannot be told, and every source
//     is tried, as ds-identify's policy without DMI enables cloud-init.
//
// Otherwise the temporary network is not raised at all. A plain QEMU or
// KVM guest, and so a Proxmox VE one (Proxmox sets only the SMBIOS UUID;
// its vendor, product and version are QEMU's own, "QEMU", "Standard PC
// (...)", "pc-q35-9.2", the same as any QEMU guest's), is recognised by no
// rule: its config drive or NoCloud drive is read, nothing is asked over
// the network.
type Decision struct {
	// Order is the sources to try, in order; a source whose metadata
	// service is not to be tried has its Metadata cleared, and one with
	// nothing else left is not in it.
	Order []datasource.Source
	// Line is the one log line saying what is tried and why, with the
	// DMI strings that made it (dmi.Info.String).
	Line string
}

// Decide makes discovery's Decision. order is the sources earlyinit.ds= or
// the image's datasource_list gave (or Sources), asked the sources the user
// asked for with the reason for each ("earlyinit.ds=ec2"), metadataURL is
// earlyinit.metadata_url, netSeeds the sources whose own words gave a seed
// URL (ds=nocloud;s=http://...), read over the temporary network.
func Decide(info dmi.Info, order []datasource.Source, asked map[string]string, metadataURL string, netSeeds ...string) Decision {
	noDMI := info == dmi.Info{}
	var reasons []string
	add := func(r string) {
		for _, have := range reasons {
			if have == r {
				return
			}
		}
		reasons = append(reasons, r)
	}
	// The reasons come in a fixed order: the sources asked for, by
	// reason, then the platforms, then the catch-alls.
	var platforms, kept []string
	byReason := map[string][]string{}
	var reasonOrder []string
	for _, src := range order {
		if why, ok := asked[src.Name]; ok {
			if _, seen := byReason[why]; !seen {
				reasonOrder = append(reasonOrder, why)
			}
			byReason[why] = append(byReason[why], src.Name)
		}
	}
	for _, why := range reasonOrder {
		add(fmt.Sprintf("%s asked for by %s", strings.Join(byReason[why], ", "), why))
	}

	var out []datasource.Source
	network := false
	for _, src := range order {
		if src.Metadata != nil {
			_, isAsked := asked[src.Name]
			recognised := !noDMI && src.Platform != nil && src.Platform(info)
			switch {
			case isAsked, metadataURL != "", noDMI, recognised:
				network = true
				if recognised {
					platforms = append(platforms, src.Name)
				}
			default:
				src.Metadata = nil
			}
		}
		if src.Metadata == nil && len(src.Labels) == 0 && len(src.SeedDirs) == 0 && src.Cmdline == nil && src.SeedFrom == nil {
			continue
		}
		out = append(out, src)
		kept = append(kept, src.Name)
	}
	if len(platforms) > 0 {
		add("platform " + strings.Join(platforms, ", "))
	}
	if metadataURL != "" {
		add("earlyinit.metadata_url set")
	}
	if noDMI {
		add("platform unknown")
	}
	if len(platforms) == 0 && !noDMI {
		reasons = append([]string{"no platform recognised"}, reasons...)
	}
	line := fmt.Sprintf("datasource: %s (%s): ", strings.Join(reasons, "; "), info)
	switch {
	case !network && len(netSeeds) > 0:
		line += "drives and seeds, " + strings.Join(netSeeds, ", ") + "'s seed over the network: "
	case !network:
		line += "drives and seeds only: "
	}
	if len(kept) == 0 {
		line += "nothing to try"
	} else {
		line += "trying " + strings.Join(kept, ", ")
	}
	return Decision{Order: out, Line: line}
}

// singleEntry tells whether a datasource_list names one source, alone or
// followed by None: ds-identify then uses it without checking the
// platform.
func singleEntry(list []string) bool {
	switch len(list) {
	case 1:
		return !isNone(list[0])
	case 2:
		return !isNone(list[0]) && isNone(list[1])
	}
	return false
}

// isNone tells whether a datasource_list entry is cloud-init's None.
func isNone(name string) bool {
	return strings.EqualFold(strings.TrimPrefix(strings.TrimSpace(name), "DataSource"), "None")
}

// listsNone tells whether a datasource_list names None.
func listsNone(list []string) bool {
	for _, n := range list {
		if isNone(n) {
			return true
		}
	}
	return false
}

// serialWords reads the DMI system serial as cloud-init's NoCloud does: as
// kernel command-line words (ds=nocloud;s=...;i=...;h=..., set with QEMU's
// -smbios type=1,serial=...). earlyinit's own options are not taken from
// it.
func serialWords(serial string) map[string]string {
	params := map[string]string{}
	for _, w := range settings.SplitCmdline(serial) {
		k, v, _ := strings.Cut(w, "=")
		if k == "earlyinit" || strings.HasPrefix(k, "earlyinit.") {
			continue
		}
		params[k] = v
	}
	return params
}
