package nic

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// Where the persistence files go in the real root.
const (
	linkDir   = "/etc/systemd/network"
	UdevRules = "/etc/udev/rules.d/70-persistent-net.rules"
)

// PersistLinks returns the files that make the names in want (MAC -> name)
// stick in the real OS, as netcfg.File like the renderers' output. With
// systemd it is one systemd .link file per entry,
// linkDir/10-earlyinit-<name>.link, matching the MAC; without, one classic
// udev rules file, UdevRules, with a line per entry as cloud-init writes it.
// Files and lines are sorted by name. Entries Plan rejects whatever the live
// links (invalid MAC or name, a MAC given two names, a name given to two
// MACs) are left out; MACs are written in normal form, and a MAC spelt twice
// with the same name gives one entry. The NICs whose MACs (in any
// spelling) are in wakeOnLAN wake on a magic packet: their .link files say
// WakeOnLan=magic, the one place networkd takes it (WakeOnLAN gives the
// MACs from a network configuration). The udev rule has no place for it; a
// MAC of wakeOnLAN that is not renamed in want has no file to carry it.
func PersistLinks(want map[string]string, wakeOnLAN []string, systemd bool) []netcfg.File {
	type entry struct{ mac, name string }
	names, _ := normalize(want)
	entries := make([]entry, 0, len(names))
	for mac, name := range names {
		entries = append(entries, entry{mac, name})
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	if len(entries) == 0 {
		return nil
	}
	if systemd {
		wol := map[string]bool{}
		for _, m := range wakeOnLAN {
			if mac, err := normalizeMAC(m); err == nil {
				wol[mac] = true
			}
		}
		files := make([]netcfg.File, 0, len(entries))
		for _, e := range entries {
			b := fmt.Appendf(nil, "# Written by earlyinit.\n[Match]\nMACAddress=%s\n\n[Link]\nName=%s\n", e.mac, e.name)
			if wol[e.mac] {
				b = append(b, "WakeOnLan=magic\n"...)
			}
			files = append(files, netcfg.File{
				Path: path.Join(linkDir, "10-earlyinit-"+e.name+".link"),
				Data: b,
				Mode: 0o644,
			})
		}
		return files
	}
	var b strings.Builder
	b.WriteString("# Written by earlyinit.\n")
	for _, e := range entries {
		fmt.Fprintf(&b, "SUBSYSTEM==\"net\", ACTION==\"add\", DRIVERS==\"?*\", ATTR{address}==\"%s\", NAME=\"%s\"\n", e.mac, e.name)
	}
	return []netcfg.File{{Path: UdevRules, Data: []byte(b.String()), Mode: 0o644}}
}

// WakeOnLAN returns the MACs of c's NICs that wake on LAN (wakeonlan: true)
// and that c renames (Config.RenameMap), sorted: the NICs whose rename
// .link file can carry it. A NIC c does not rename keeps the distribution's
// naming, which a .link file of earlyinit's would override.
func WakeOnLAN(c *netcfg.Config) []string {
	if c == nil {
		return nil
	}
	renames := c.RenameMap()
	var macs []string
	for _, ifc := range c.Interfaces {
		if name, ok := renames[ifc.MAC]; ok && ifc.WakeOnLAN && name == ifc.Name {
			macs = append(macs, ifc.MAC)
		}
	}
	sort.Strings(macs)
	return slices.Compact(macs)
}

// HasSystemdUdevd tells from a root's exists() whether systemd-udevd is
// present, so .link files are honoured. exists gets absolute paths within
// the root.
func HasSystemdUdevd(exists func(string) bool) bool {
	return exists("/lib/systemd/systemd-udevd") || exists("/usr/lib/systemd/systemd-udevd")
}
