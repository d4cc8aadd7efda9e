package nic

import (
	"reflect"
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

func TestPersistLinks(t *testing.T) {
	want := map[string]string{
		"52:54:00:00:00:02":  "lan1",
		"52:54:00:AB:CD:EF":  "lan0",
		"zz":                 "bad0",     // invalid MAC: left out
		"52:54:00:00:00:03":  "bad/name", // invalid name: left out
		"52-54-00-ab-cd-ef":  "lan0",     // same entry spelt again: one file
		"52:54:00:00:00:04":  "dup0",     // a name for two MACs: left out
		"52:54:00:00:00:05":  "dup0",
		"52:54:00:00:00:06":  "one", // a MAC with two names: left out
		"52:54:00:00:00:06 ": "other",
	}
	for _, tt := range []struct {
		name    string
		want    map[string]string
		wol     []string
		systemd bool
		files   []netcfg.File
	}{
		{
			name:    "systemd link files",
			want:    want,
			systemd: true,
			files: []netcfg.File{
				{
					Path: "/etc/systemd/network/10-earlyinit-lan0.link",
					Data: []byte("# Written by earlyinit.\n[Match]\nMACAddress=52:54:00:ab:cd:ef\n\n[Link]\nName=lan0\n"),
					Mode: 0o644,
				},
				{
					Path: "/etc/systemd/network/10-earlyinit-lan1.link",
					Data: []byte("# Written by earlyinit.\n[Match]\nMACAddress=52:54:00:00:00:02\n\n[Link]\nName=lan1\n"),
					Mode: 0o644,
				},
			},
		},
		{
			name:    "systemd link files, wake-on-LAN",
			want:    want,
			wol:     []string{"52-54-00-AB-CD-EF", "52:54:00:00:00:09", "zz", "52:54:00:00:00:04"}, // lan0 in another spelling; a NIC not renamed; not a MAC; a rename left out
			systemd: true,
			files: []netcfg.File{
				{
					Path: "/etc/systemd/network/10-earlyinit-lan0.link",
					Data: []byte("# Written by earlyinit.\n[Match]\nMACAddress=52:54:00:ab:cd:ef\n\n[Link]\nName=lan0\nWakeOnLan=magic\n"),
					Mode: 0o644,
				},
				{
					Path: "/etc/systemd/network/10-earlyinit-lan1.link",
					Data: []byte("# Written by earlyinit.\n[Match]\nMACAddress=52:54:00:00:00:02\n\n[Link]\nName=lan1\n"),
					Mode: 0o644,
				},
			},
		},
		{
			name: "udev rule",
			want: want,
			wol:  []string{"52:54:00:ab:cd:ef"}, // no place for it
			files: []netcfg.File{{
				Path: "/etc/udev/rules.d/70-persistent-net.rules",
				Data: []byte("# Written by earlyinit.\n" +
					`SUBSYSTEM=="net", ACTION=="add", DRIVERS=="?*", ATTR{address}=="52:54:00:ab:cd:ef", NAME="lan0"` + "\n" +
					`SUBSYSTEM=="net", ACTION=="add", DRIVERS=="?*", ATTR{address}=="52:54:00:00:00:02", NAME="lan1"` + "\n"),
				Mode: 0o644,
			}},
		},
		{name: "nothing wanted, systemd", systemd: true},
		{name: "wake-on-LAN, nothing renamed", wol: []string{"52:54:00:ab:cd:ef"}, systemd: true},
		{name: "nothing wanted, udev"},
		{name: "only invalid entries", want: map[string]string{"zz": "eth0"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := PersistLinks(tt.want, tt.wol, tt.systemd)
			if len(files) != len(tt.files) {
				t.Fatalf("got %d files, want %d: %+v", len(files), len(tt.files), files)
			}
			for i, f := range files {
				w := tt.files[i]
				if f.Path != w.Path || f.Mode != w.Mode || string(f.Data) != string(w.Data) {
					t.Errorf("file %d:\n got %s %v\n%s\nwant %s %v\n%s", i, f.Path, f.Mode, f.Data, w.Path, w.Mode, w.Data)
				}
			}
		})
	}
}

// TestWakeOnLAN: the MACs whose rename .link carries wakeonlan, from
// parsed configurations.
func TestWakeOnLAN(t *testing.T) {
	for _, tt := range []struct {
		name, format, in string
		want             []string
	}{
		{"v2 renamed", "yaml", `version: 2
ethernets:
  lan0: {match: {macaddress: "52:54:00:AB:CD:EF"}, set-name: lan0, wakeonlan: true, dhcp4: true}
  lan1: {match: {macaddress: "52:54:00:00:00:02"}, set-name: lan1, dhcp4: true}
  lan2: {match: {macaddress: "52:54:00:00:00:03"}, set-name: lan2, wakeonlan: true}
`, []string{"52:54:00:00:00:03", "52:54:00:ab:cd:ef"}},
		{"v2 not renamed (no set-name)", "yaml", `version: 2
ethernets:
  id0: {match: {macaddress: "52:54:00:ab:cd:ef"}, wakeonlan: true, dhcp4: true}
`, nil},
		{"v2 matched by name", "yaml", `version: 2
ethernets:
  eth0: {wakeonlan: true, dhcp4: true}
`, nil},
		{"v1 physical", "yaml", `version: 1
config:
  - {type: physical, name: eth0, mac_address: "52:54:00:ab:cd:ef", wakeonlan: true}
  - {type: physical, name: eth1, mac_address: "52:54:00:00:00:02", wakeonlan: false}
`, []string{"52:54:00:ab:cd:ef"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := netcfg.Parse(tt.format, []byte(tt.in), map[string]string{"52:54:00:ab:cd:ef": "eth0"})
			if err != nil {
				t.Fatal(err)
			}
			if got := WakeOnLAN(c); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("WakeOnLAN = %q, want %q", got, tt.want)
			}
		})
	}
	if got := WakeOnLAN(nil); got != nil {
		t.Errorf("WakeOnLAN(nil) = %q", got)
	}
}

func TestHasSystemdUdevd(t *testing.T) {
	for _, tt := range []struct {
		files []string
		want  bool
	}{
		{[]string{"/lib/systemd/systemd-udevd"}, true},
		{[]string{"/usr/lib/systemd/systemd-udevd"}, true},
		{[]string{"/sbin/udevd", "/lib/systemd/systemd"}, false},
		{nil, false},
	} {
		set := map[string]bool{}
		for _, f := range tt.files {
			set[f] = true
		}
		if got := HasSystemdUdevd(func(p string) bool { return set[p] }); got != tt.want {
			t.Errorf("HasSystemdUdevd(%v) = %v, want %v", tt.files, got, tt.want)
		}
	}
}
