package netcfg

import (
	"strings"
	"testing"
)

// TestV2BareRouteIsHostRoute: a v2 route to a bare address is a host route,
// as netplan passes it to networkd and networkd reads it (/32, /128), not
// v1's default /24 or /64.
func TestV2BareRouteIsHostRoute(t *testing.T) {
	c, err := Parse("yaml", []byte(`version: 2
ethernets:
  eth0:
    addresses: [10.0.0.2/24, "2001:db8::2/64"]
    routes:
      - {to: "2001:db8:1::5", via: "2001:db8::1"}
      - {to: 10.5.0.5, via: 10.0.0.1}
      - {to: 10.6.0.0/16, via: 10.0.0.1}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range c.Interfaces[0].Subnets {
		for _, r := range s.Routes {
			got = append(got, r.To.String())
		}
	}
	if want := "2001:db8:1::5/128 10.5.0.5/32 10.6.0.0/16"; strings.Join(got, " ") != want {
		t.Errorf("routes to %q, want %q", got, want)
	}
	// v1 keeps cloud-init's default prefix for a bare network.
	c, err = Parse("yaml", []byte(`version: 1
config:
  - type: physical
    name: eth0
    subnets:
      - {type: static, address: 10.0.0.2/24, routes: [{network: 10.5.0.0, gateway: 10.0.0.1}]}
`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Interfaces[0].Subnets[0].Routes[0].To.String(); got != "10.5.0.0/24" {
		t.Errorf("v1 route to %s, want 10.5.0.0/24", got)
	}
}
