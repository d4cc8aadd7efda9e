package render

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// sourceSh writes data to dir/name and sources it with /bin/sh as
// initscripts' ifup does, printing the named variables, one per line, in a
// directory where a command that ran would leave a file.
func sourceSh(t *testing.T, dir, name string, data []byte, vars ...string) []string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("no sh to source the file with: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	script := "set -e; . ./" + name
	for i := range vars {
		script += `; printf '%s\0' "$` + vars[i] + `"`
	}
	cmd := exec.Command(sh, "-c", script)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("sh . %s: %v\n%s", name, err, data)
	}
	got := strings.Split(string(out), "\x00")
	return got[:len(got)-1]
}

// TestSysconfigQuoteSourced proves that every value quoteValue writes comes
// back from sh byte for byte and runs nothing: $(...), backticks, quotes,
// ; and globs are inert when ifup sources an ifcfg file (issue 11 item 6;
// before, "e$(touch pwned)" was written bare and ran).
func TestSysconfigQuoteSourced(t *testing.T) {
	for _, v := range []string{
		"eth0", "", "mode=802.3ad miimon=100", "e$(touch pwned)", "e`touch pwned`",
		`a"b`, `a'b`, `"$(touch pwned)"`, `x"; touch pwned; "`, "a;touch pwned", "a\\", `\"`,
		"a && touch pwned", "a|touch pwned", "*", "~root", "$HOME", "${PATH}", "a b\tc", "x=y", "-S",
		"$(", "'", `"`, "#c", "a#b", "!x", "{a,b}",
	} {
		t.Run(v, func(t *testing.T) {
			dir := t.TempDir()
			data := []byte("X=" + quoteValue(v) + "\n")
			got := sourceSh(t, dir, "ifcfg-x", data, "X")
			if len(got) != 1 || got[0] != v {
				t.Errorf("X=%s sourced as %q, want %q", quoteValue(v), got, v)
			}
			if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
				t.Errorf("sourcing X=%s ran a command", quoteValue(v))
			}
		})
	}
}

// TestSysconfigSourcedFiles renders the golden models with sysconfig and
// sources every ifcfg file with sh: each parses as shell assignments and
// DEVICE comes back as the interface name.
func TestSysconfigSourcedFiles(t *testing.T) {
	for name, c := range models() {
		files, err := Sysconfig().Render(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range files {
			base := filepath.Base(f.Path)
			if !strings.HasPrefix(base, "ifcfg-") {
				continue
			}
			got := sourceSh(t, t.TempDir(), base, f.Data, "DEVICE", "BONDING_OPTS")
			if got[0] != strings.TrimPrefix(base, "ifcfg-") {
				t.Errorf("%s %s: DEVICE=%q", name, base, got[0])
			}
		}
	}
}

// TestRenderRejectsInjection feeds every renderer a configuration with one
// hostile value each, bypassing the parsers and Validate: a newline that
// would add a line (a second [Network] key, a resolv.conf line, an ENI
// post-up), or shell syntax that would run when ifup sources the file. Each
// renderer must refuse it with an error naming the key, and write nothing.
func TestRenderRejectsInjection(t *testing.T) {
	base := func(mut func(*netcfg.Config)) *netcfg.Config {
		c := &netcfg.Config{Interfaces: []netcfg.Interface{
			{Name: "eth0", Kind: netcfg.Physical, MAC: "52:54:00:00:00:01", Subnets: []netcfg.Subnet{{Type: netcfg.DHCP4}}},
			{Name: "eth1", Kind: netcfg.Physical, MAC: "52:54:00:00:00:02"},
			{Name: "bond0", Kind: netcfg.Bond, Bond: &netcfg.BondConfig{Members: []string{"eth1"}, Params: map[string]string{"mode": "active-backup"}},
				Subnets: []netcfg.Subnet{{Type: netcfg.Static, Address: pfx("10.0.0.2/24")}}},
			{Name: "br0", Kind: netcfg.Bridge, Bridge: &netcfg.BridgeConfig{Params: map[string]string{"stp": "on"}}},
		}}
		mut(c)
		return c
	}
	for _, tt := range []struct {
		name string
		c    *netcfg.Config
		want string
	}{
		{"name $()", base(func(c *netcfg.Config) { c.Interfaces[0].Name = "e$(reboot)" }), `interface name "e$(reboot)": character '$'`},
		{"name newline", base(func(c *netcfg.Config) { c.Interfaces[0].Name = "e\n[Network]" }), `interface name "e\n[Network]"`},
		{"name backtick", base(func(c *netcfg.Config) { c.Interfaces[0].Name = "e`id`" }), "character '`'"},
		{"name ;", base(func(c *netcfg.Config) { c.Interfaces[0].Name = "e;reboot" }), `character ';'`},
		{"bond param newline", base(func(c *netcfg.Config) { c.Interfaces[2].Bond.Params["mode"] = "active-backup\nPostUp=reboot" }), `bond.params.mode: value`},
		{"bond param $()", base(func(c *netcfg.Config) { c.Interfaces[2].Bond.Params["miimon"] = "1$(reboot)" }), `bond.params.miimon: value "1$(reboot)"`},
		{"bridge param key", base(func(c *netcfg.Config) { c.Interfaces[3].Bridge.Params["x\npost-up reboot"] = "1" }), `bridge.params: key "x\npost-up reboot"`},
		{"bridge param quote", base(func(c *netcfg.Config) { c.Interfaces[3].Bridge.Params["fd"] = `1"; reboot; "` }), `bridge.params.fd: value`},
		{"search newline", base(func(c *netcfg.Config) { c.DNS.Search = []string{"a.org\nnameserver 6.6.6.6"} }), `dns.search[0]: "a.org\nnameserver 6.6.6.6"`},
		{"subnet search", base(func(c *netcfg.Config) {
			c.Interfaces[2].Subnets[0].DNS.Search = []string{"x.org\"; reboot"}
		}), `subnets[0].dns.search[0]`},
		{"dhcp hostname", base(func(c *netcfg.Config) {
			c.Interfaces[0].DHCP4Overrides = &netcfg.DHCPOverrides{Hostname: "h\nDNS=6.6.6.6"}
		}), `dhcp4-overrides.hostname`},
		{"driver", base(func(c *netcfg.Config) { c.Interfaces[0].Driver = "virtio\n[Match]" }), `driver: "virtio\n[Match]"`},
		{"mac", base(func(c *netcfg.Config) { c.Interfaces[0].MAC = "52:54:00:00:00:01\nx" }), `mac: "52:54:00:00:00:01\nx"`},
		{"vlan link", base(func(c *netcfg.Config) {
			c.Interfaces = append(c.Interfaces, netcfg.Interface{Name: "v", Kind: netcfg.VLAN, VLAN: &netcfg.VLANConfig{ID: 3, Link: "eth0\n"}})
		}), `vlan.link: interface name "eth0\n"`},
	} {
		for _, rn := range Names() {
			r, _ := ByName(rn)
			files, err := r.Render(tt.c)
			if err == nil || !strings.HasPrefix(err.Error(), rn+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s/%s: err %v, want %q prefixed by the renderer", tt.name, rn, err, tt.want)
			}
			if files != nil {
				t.Errorf("%s/%s: %d files along with the error", tt.name, rn, len(files))
			}
		}
	}
	// The base configuration itself renders: the errors above are the
	// hostile values', not the fixture's.
	for _, rn := range Names() {
		r, _ := ByName(rn)
		if _, err := r.Render(base(func(*netcfg.Config) {})); err != nil {
			t.Errorf("%s: base config: %v", rn, err)
		}
	}
}

// TestSysconfigRenderControl checks the last line of defence in the
// sysconfig writer itself: a control character in a value, however it got
// there, is an error naming the key, never a second line.
func TestSysconfigRenderControl(t *testing.T) {
	for _, v := range []string{"a\nb", "a\rb", "a\x00b", "a\x1bb", "a\x7fb"} {
		if s, err := (kv{"DEVICE": "eth0", "DOMAIN": v}).render(); err == nil || !strings.Contains(err.Error(), "DOMAIN: value") {
			t.Errorf("render DOMAIN=%q: err %v, file %q", v, err, s)
		}
	}
}

// TestWritersRejectControl checks the last line of defence in the INI and
// ENI writers themselves, below check(): a key or value with a control
// character is refused with an error naming it, never written as a second
// line.
func TestWritersRejectControl(t *testing.T) {
	for _, v := range []string{"a\nDNS=6.6.6.6", "a\rb", "a\x00b", "a\x7f"} {
		var u unit
		u.section("Network", "DHCP", "yes", "Domains", v)
		if s, err := u.text(); err == nil || !strings.Contains(err.Error(), `[Network] "Domains": value`) || strings.Contains(s, "Domains") {
			t.Errorf("networkd Domains=%q: err %v, file %q", v, err, s)
		}
		var k keyfile
		k.set("ipv4", "method", "auto")
		k.set("ipv4", "dns-search", v)
		if s, err := k.text(); err == nil || !strings.Contains(err.Error(), `[ipv4] "dns-search": value`) || strings.Contains(s, "dns-search") {
			t.Errorf("keyfile dns-search=%q: err %v, file %q", v, err, s)
		}
		if s, err := eniText([][]string{{"auto eth0", "iface eth0 inet dhcp", "    hostname " + v}}); err == nil || !strings.Contains(err.Error(), "has a control character") {
			t.Errorf("eni hostname %q: err %v, file %q", v, err, s)
		}
	}
	var u unit
	u.section("Match", "Name", "eth0")
	if s, err := u.text(); err != nil || s != "[Match]\nName=eth0\n" {
		t.Errorf("plain unit: %q, %v", s, err)
	}
}

// TestKeyfileManyRoutes: numbering thousands of routes in one keyfile was
// cubic (a linear get for every candidate number of every route: minutes
// for a few thousand, in PID 1); it must number them route1..routeN in
// order, fast.
func TestKeyfileManyRoutes(t *testing.T) {
	const n = 8192
	start := time.Now()
	var k keyfile
	k.set("ipv4", "method", "manual")
	for i := 0; i < n; i++ {
		k.addNumbered("ipv4", "route", fmt.Sprintf("10.%d.%d.0/24", i>>8, i&255))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("%d routes took %v", n, d)
	}
	for _, i := range []int{0, 1, n / 2, n - 1} {
		if got, want := k.get("ipv4", fmt.Sprint("route", i+1)), fmt.Sprintf("10.%d.%d.0/24", i>>8, i&255); got != want {
			t.Errorf("route%d = %q, want %q", i+1, got, want)
		}
	}
	if k.get("ipv4", fmt.Sprint("route", n+1)) != "" || len(k.sec["ipv4"]) != n+1 {
		t.Errorf("%d entries, want %d", len(k.sec["ipv4"]), n+1)
	}
	// Set keeps replacing in place.
	k.set("ipv4", "method", "auto")
	if k.get("ipv4", "method") != "auto" || k.sec["ipv4"][0] != [2]string{"method", "auto"} {
		t.Errorf("method not replaced in place: %v", k.sec["ipv4"][0])
	}
}
