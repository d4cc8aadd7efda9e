package network

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// TestWakeOnLANLink: with networkd, wakeonlan reaches the renamed NIC's
// .link file (WakeOnLan=magic) when the root has systemd-udevd, and is
// warned about otherwise; other renderers write it themselves and leave
// the .link alone.
func TestWakeOnLANLink(t *testing.T) {
	const (
		renamed = "network:\n  version: 2\n  ethernets:\n" +
			"    a: {match: {macaddress: \"52:54:00:00:00:01\"}, set-name: lan0, wakeonlan: true, dhcp4: true}\n" +
			"    b: {match: {macaddress: \"52:54:00:00:00:02\"}, set-name: lan1, dhcp4: true}\n"
		notRenamed = "network:\n  version: 2\n  ethernets:\n" +
			"    a: {match: {macaddress: \"52:54:00:00:00:01\"}, wakeonlan: true, dhcp4: true}\n"
	)
	for _, tt := range []struct {
		name, in, renderer string
		udevd              bool
		wol                []string // the .link files that must say WakeOnLan=magic
		noWol              []string // the .link files that must not
		warn               string   // in the warnings; "" for no wakeonlan warning
	}{
		{name: "networkd", in: renamed, renderer: "networkd", udevd: true,
			wol: []string{"10-earlyinit-lan0.link"}, noWol: []string{"10-earlyinit-lan1.link"}},
		{name: "networkd, no systemd-udevd", in: renamed, renderer: "networkd",
			warn: "wakeonlan (lan0: only a .link file carries it, and none is written without a root with systemd-udevd)"},
		{name: "networkd, not renamed", in: notRenamed, renderer: "networkd", udevd: true,
			warn: "wakeonlan (eth0: not renamed, so no .link file carries it)"},
		{name: "netplan writes its own", in: renamed, renderer: "netplan", udevd: true,
			noWol: []string{"10-earlyinit-lan0.link", "10-earlyinit-lan1.link"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := [][]string{networkdBins, {"/usr/sbin/netplan"}}
			if tt.udevd {
				files = append(files, udevd)
			}
			res, err := Build(Input{Format: "yaml", Data: []byte(tt.in), NICs: LiveNICs(testLinks()), Renderer: tt.renderer, Root: newRoot(t, files...)})
			if err != nil {
				t.Fatal(err)
			}
			link := func(name string) (netcfg.File, bool) {
				for _, f := range res.Files {
					if strings.HasSuffix(f.Path, "/"+name) {
						return f, true
					}
				}
				return netcfg.File{}, false
			}
			for _, n := range tt.wol {
				if f, ok := link(n); !ok || !strings.Contains(string(f.Data), "\nWakeOnLan=magic\n") {
					t.Errorf("%s: want WakeOnLan=magic, got %q (present: %v)", n, f.Data, ok)
				}
			}
			for _, n := range tt.noWol {
				if f, ok := link(n); !ok || strings.Contains(string(f.Data), "WakeOnLan") {
					t.Errorf("%s: want the file without WakeOnLan, got %q (present: %v)", n, f.Data, ok)
				}
			}
			var warns []string
			for _, n := range res.Notes {
				if n.Warning {
					warns = append(warns, n.Text)
				}
			}
			all := strings.Join(warns, "\n")
			switch {
			case tt.warn == "" && strings.Contains(all, "wakeonlan"):
				t.Errorf("warnings name wakeonlan: %s", all)
			case tt.warn != "" && !strings.Contains(all, tt.warn):
				t.Errorf("warnings %q, want %q", all, tt.warn)
			}
		})
	}
}
