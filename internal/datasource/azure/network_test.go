package azure

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return v
}

// TestNetwork: cloud-init's TestGenerateNetworkConfig (the defaults:
// secondary IPs and set-name on), with the match on hv_netvsc that
// cloud-init makes on Azure's synthetic NICs.
func TestNetwork(t *testing.T) {
	nic := func(mac, v4, v6 string) string {
		return `{"macAddress": "` + mac + `", "ipv4": ` + v4 + `, "ipv6": ` + v6 + `}`
	}
	const (
		one4  = `{"subnet": [{"prefix": "24", "address": "10.0.0.0"}], "ipAddress": [{"privateIpAddress": "10.0.0.4", "publicIpAddress": "104.46.124.81"}]}`
		none6 = `{"ipAddress": []}`
	)
	for _, tt := range []struct {
		name, in, want string
	}{
		{"simple interface", `{"interface": [` + nic("000D3A047598", one4, none6) + `]}`,
			`{"version": 2, "ethernets": {"eth0": {"dhcp4": true, "dhcp4-overrides": {"route-metric": 100}, "dhcp6": false,
			  "match": {"macaddress": "00:0d:3a:04:75:98", "driver": "hv_netvsc"}, "set-name": "eth0"}}}`},
		{"multiple interfaces with increasing route metric", `{"interface": [` + nic("000D3A047598", one4, none6) + "," + nic("000D3A047599", one4, none6) + "," + nic("000D3A04759A", one4, none6) + `]}`,
			`{"version": 2, "ethernets": {
			  "eth0": {"dhcp4": true, "dhcp4-overrides": {"route-metric": 100}, "dhcp6": false, "match": {"macaddress": "00:0d:3a:04:75:98", "driver": "hv_netvsc"}, "set-name": "eth0"},
			  "eth1": {"dhcp4": true, "dhcp4-overrides": {"route-metric": 200, "use-dns": false}, "dhcp6": false, "match": {"macaddress": "00:0d:3a:04:75:99", "driver": "hv_netvsc"}, "set-name": "eth1"},
			  "eth2": {"dhcp4": true, "dhcp4-overrides": {"route-metric": 300, "use-dns": false}, "dhcp6": false, "match": {"macaddress": "00:0d:3a:04:75:9a", "driver": "hv_netvsc"}, "set-name": "eth2"}}}`},
		{"secondary IPv4s are static", `{"interface": [` + nic("000D3A047598",
			`{"subnet": [{"prefix": "24", "address": "10.0.0.0"}], "ipAddress": [{"privateIpAddress": "10.0.0.4", "publicIpAddress": "104.46.124.81"}, {"privateIpAddress": "11.0.0.5", "publicIpAddress": "104.46.124.82"}, {"privateIpAddress": "12.0.0.6", "publicIpAddress": "104.46.124.83"}]}`,
			`{"subnet": [{"prefix": "10", "address": "2001:dead:beef::16"}], "ipAddress": [{"privateIpAddress": "2001:dead:beef::1"}]}`) + `]}`,
			`{"version": 2, "ethernets": {"eth0": {"addresses": ["11.0.0.5/24", "12.0.0.6/24"], "dhcp4": true, "dhcp4-overrides": {"route-metric": 100},
			  "dhcp6": true, "dhcp6-overrides": {"route-metric": 100}, "match": {"macaddress": "00:0d:3a:04:75:98", "driver": "hv_netvsc"}, "set-name": "eth0"}}}`},
		{"secondary IPv6 with the default prefix", `{"interface": [` + nic("000D3A047598", one4,
			`{"subnet": [], "ipAddress": [{"privateIpAddress": "fd00::4"}, {"privateIpAddress": "fd00::5"}]}`) + `]}`,
			`{"version": 2, "ethernets": {"eth0": {"addresses": ["fd00::5/128"], "dhcp4": true, "dhcp4-overrides": {"route-metric": 100},
			  "dhcp6": true, "dhcp6-overrides": {"route-metric": 100}, "match": {"macaddress": "00:0d:3a:04:75:98", "driver": "hv_netvsc"}, "set-name": "eth0"}}}`},
		// SECONDARY_INTERFACE_NO_IP: a NIC without addresses is left out.
		{"secondary NIC without IP", `{"interface": [` + nic("000D3A047598", one4, none6) + "," + nic("220D3A047598", `{"subnet": [{"prefix": "24", "address": "10.0.1.0"}], "ipAddress": []}`, none6) + `]}`,
			`{"version": 2, "ethernets": {"eth0": {"dhcp4": true, "dhcp4-overrides": {"route-metric": 100}, "dhcp6": false,
			  "match": {"macaddress": "00:0d:3a:04:75:98", "driver": "hv_netvsc"}, "set-name": "eth0"}}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b, err := Network("network", decodeJSON(t, tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := decodeJSON(t, string(b)), decodeJSON(t, tt.want); !reflect.DeepEqual(got, want) {
				t.Errorf("Network:\n got %s\nwant %s", b, tt.want)
			}
			// earlyinit's network parser takes it.
			cfg, err := netcfg.Parse("yaml", b, nil)
			if err != nil {
				t.Fatalf("netcfg: %v", err)
			}
			if cfg.Interfaces[0].Name != "eth0" || cfg.Interfaces[0].Driver != "hv_netvsc" || cfg.Interfaces[0].MAC != "00:0d:3a:04:75:98" {
				t.Errorf("netcfg: %+v", cfg.Interfaces[0])
			}
		})
	}
}

func TestNetworkNone(t *testing.T) {
	b, err := Network("network", decodeJSON(t, `{"interface": [{"macAddress": "000D3A047598", "ipv4": {"ipAddress": []}, "ipv6": {"ipAddress": []}}]}`))
	if err != nil || b != nil {
		t.Errorf("Network = %s, %v; want nothing (the fallback)", b, err)
	}
}

func TestNetworkErrors(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{`[]`, "network: want an object, got a list"},
		{`{}`, "network.interface: want a list, got null"},
		{`{"interface": [5]}`, "network.interface[0]: want an object"},
		{`{"interface": [{"macAddress": "000D3A0475"}]}`, `network.interface[0].macAddress: "000D3A0475": not a MAC address`},
		{`{"interface": [{"macAddress": "000D3A047598", "ipv4": {"ipAddress": [{"privateIpAddress": "10.0.0.4"}, {"privateIpAddress": "fd00::1"}]}}]}`,
			`network.interface[0].ipv4.ipAddress[1]: "fd00::1" with prefix "24": not an ipv4 address`},
		{`{"interface": [{"macAddress": "000D3A047598", "ipv4": {"subnet": [{"prefix": "x"}], "ipAddress": [{"privateIpAddress": "10.0.0.4"}, {"privateIpAddress": "10.0.0.5"}]}}]}`,
			`ipv4.ipAddress[1]: "10.0.0.5" with prefix "x"`},
	} {
		b, err := Network("network", decodeJSON(t, tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Network(%s) = %s, %v; want error %q", tt.in, b, err, tt.want)
		}
	}
}

func TestNormalizeMAC(t *testing.T) {
	for in, want := range map[string]string{
		"000D3A047598":      "00:0d:3a:04:75:98",
		"00:0D:3A:04:75:98": "00:0d:3a:04:75:98",
		"00-0d-3a-04-75-98": "00:0d:3a:04:75:98",
	} {
		if got, err := normalizeMAC(in); err != nil || got != want {
			t.Errorf("normalizeMAC(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "000D3A04759", "000D3A04759800", "zz0D3A047598"} {
		if got, err := normalizeMAC(in); err == nil {
			t.Errorf("normalizeMAC(%q) = %q, want an error", in, got)
		}
	}
}
