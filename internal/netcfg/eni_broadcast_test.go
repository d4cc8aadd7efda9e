package netcfg

import (
	"strings"
	"testing"
)

// TestENIBroadcast: an ENI stanza's broadcast is kept, as cloud-init's
// convert_eni_data keeps it: an address, or "-" (host bits cleared); "+"
// is the default and inet6 has none.
func TestENIBroadcast(t *testing.T) {
	c, err := ParseENI([]byte(`iface eth0 inet static
    address 10.0.0.2/24
    broadcast 10.0.0.127
iface eth1 inet static
    address 10.1.0.2/24
    broadcast -
iface eth2 inet static
    address 10.2.0.2/24
    broadcast +
iface eth3 inet6 static
    address 2001:db8::2/64
    broadcast 10.3.0.255
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, i := range c.Interfaces {
		got = append(got, i.Name+"="+i.Subnets[0].Broadcast.String())
	}
	if want := "eth0=10.0.0.127 eth1=10.1.0.0 eth2=invalid IP eth3=invalid IP"; strings.Join(got, " ") != want {
		t.Errorf("broadcasts %q, want %q", got, want)
	}
	_, err = ParseENI([]byte("iface eth0 inet static\n    address 10.0.0.2/24\n    broadcast nowhere\n"))
	checkErr(t, err, "line 1: iface eth0: broadcast:")
}
