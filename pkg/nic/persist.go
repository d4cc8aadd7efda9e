package nic

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/pkg/netcfg"
)

// Where the persistence files go in the real root.
const (
	LinkDir   = "/etc/systemd/network"
	UdevRules = "/etc/udev/rules.d/70-persistent-net.rules"
)

// PersistFiles returns the files that make the names in want (MAC -> name)
// stick in the real OS, as netcfg.File like the renderers' output. With
// systemd it is one systemd .link file per entry,
// LinkDir/10-earlyinit-<name>.link, matching the MAC; without, one classic
// udev rules file, UdevRules, with a line per entry as cloud-init writes it.
// Files and lines are sorted by name. Entries Plan rejects whatever the live
// links (invalid MAC or name, a MAC given two names, a name given to two
// MACs) are left out; MACs are written in normal form, and a MAC spelt twice
// with the same name gives one entry.
func PersistFiles(want map[string]string, systemd bool) []netcfg.File {
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
		files := make([]netcfg.File, 0, len(entries))
		for _, e := range entries {
			files = append(files, netcfg.File{
				Path: path.Join(LinkDir, "10-earlyinit-"+e.name+".link"),
				Data: fmt.Appendf(nil, "# Written by earlyinit.\n[Match]\nMACAddress=%s\n\n[Link]\nName=%s\n", e.mac, e.name),
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

// HasSystemdUdevd tells from a root's exists() whether systemd-udevd is
// present, so .link files are honoured. exists gets absolute paths within
// the root.
func HasSystemdUdevd(exists func(string) bool) bool {
	return exists("/lib/systemd/systemd-udevd") || exists("/usr/lib/systemd/systemd-udevd")
}
