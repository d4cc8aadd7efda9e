// Package dhcp gets the temporary DHCPv4 lease the initramfs needs to reach
// the metadata service: RequestLease runs Discover-Offer-Request-Ack with
// insomniacslk/dhcp's nclient4 and LeaseFromACK turns the server's ACK into a
// nic.Lease, which nic.Up applies and nic.Ephemeral.Down removes.
//
// It lives apart from package nic so that renaming NICs does not pull in a
// DHCP client.
package dhcp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"time"

	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/insomniacslk/dhcp/dhcpv4"
)

// Option codes LeaseFromACK reads.
const (
	optSubnetMask       = 1
	optRouter           = 3
	optDNS              = 6
	optDomainName       = 15
	optNTPServers       = 42
	optMTU              = 26
	optBroadcast        = 28
	optLeaseTime        = 51
	optServerID         = 54
	optClasslessRoutes  = 121
	optMSClasslessRoute = 249
)

// minMTU is the smallest MTU option 26 may carry (RFC 2132 section 5.1).
const minMTU = 68

// LeaseFromACK turns a DHCPv4 ACK received on iface into a nic.Lease. It
// fails, naming the option and the reason, when yiaddr or the subnet mask is
// missing and when an option LeaseFromACK uses is malformed. Option 121 takes
// precedence over option 249 and, as RFC 3442 says, over option 3: with
// classless routes Router is left unset (cloud-init does the same for 249).
func LeaseFromACK(ack *dhcpv4.DHCPv4, iface string) (nic.Lease, error) {
	l, err := leaseFromACK(ack, iface)
	if err != nil {
		return nic.Lease{}, fmt.Errorf("dhcp lease on %s: %w", iface, err)
	}
	return l, nil
}

func leaseFromACK(ack *dhcpv4.DHCPv4, iface string) (nic.Lease, error) {
	if ack == nil {
		return nic.Lease{}, errors.New("no ACK")
	}
	if t := ack.MessageType(); t != dhcpv4.MessageTypeAck {
		return nic.Lease{}, fmt.Errorf("message is a %s, not an ACK", t)
	}
	l := nic.Lease{Iface: iface}
	if err := leaseAddress(ack, &l); err != nil {
		return l, err
	}
	if err := leaseRoutes(ack, &l); err != nil {
		return l, err
	}
	if err := leaseParams(ack, &l); err != nil {
		return l, err
	}
	return l, nil
}

// leaseAddress sets l's address (yiaddr and option 1, both required) and
// broadcast address (option 28, else computed).
func leaseAddress(ack *dhcpv4.DHCPv4, l *nic.Lease) error {
	yiaddr, ok := netip.AddrFromSlice(ack.YourIPAddr)
	if ok {
		yiaddr = yiaddr.Unmap()
	}
	if !ok || !yiaddr.Is4() || yiaddr.IsUnspecified() {
		return fmt.Errorf("no address offered (yiaddr %v)", ack.YourIPAddr)
	}
	mask, ok, err := option(ack, optSubnetMask, "subnet mask", 4, 4)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("option 1 (subnet mask) missing")
	}
	ones, err := maskBits(mask)
	if err != nil {
		return fmt.Errorf("option 1 (subnet mask): %w", err)
	}
	l.Addr = netip.PrefixFrom(yiaddr, ones)

	if b, ok, err := option(ack, optBroadcast, "broadcast address", 4, 4); err != nil {
		return err
	} else if ok {
		l.Broadcast = netip.AddrFrom4([4]byte(b))
	} else {
		l.Broadcast = broadcast(l.Addr)
	}
	return nil
}

// leaseRoutes sets l's routes from option 121, else 249, or else its
// router from option 3.
func leaseRoutes(ack *dhcpv4.DHCPv4, l *nic.Lease) error {
	if b, ok, err := option(ack, optClasslessRoutes, "classless static routes", 0, 0); err != nil {
		return err
	} else if ok {
		if l.Routes, err = ParseClasslessRoutes(b); err != nil {
			return fmt.Errorf("option 121 (classless static routes): %w", err)
		}
	} else if b, ok, err := option(ack, optMSClasslessRoute, "Microsoft classless static routes", 0, 0); err != nil {
		return err
	} else if ok {
		if l.Routes, err = ParseClasslessRoutes(b); err != nil {
			return fmt.Errorf("option 249 (Microsoft classless static routes): %w", err)
		}
	}

	if l.Routes != nil {
		// RFC 3442: with option 121 the client ignores option 3;
		// cloud-init's ephemeral DHCP does the same for option 249.
	} else if b, ok, err := option(ack, optRouter, "router", 4, 0); err != nil {
		return err
	} else if ok {
		if len(b)%4 != 0 {
			return fmt.Errorf("option 3 (router): length %d is not a multiple of 4", len(b))
		}
		l.Router = netip.AddrFrom4([4]byte(b[:4]))
	}
	return nil
}

// leaseParams sets l's MTU, DNS servers, NTP servers, domain, server and
// lease time from options 26, 6, 42, 15, 54 and 51.
func leaseParams(ack *dhcpv4.DHCPv4, l *nic.Lease) (err error) {
	if b, ok, err := option(ack, optMTU, "interface MTU", 2, 2); err != nil {
		return err
	} else if ok {
		l.MTU = int(binary.BigEndian.Uint16(b))
		if l.MTU < minMTU {
			return fmt.Errorf("option 26 (interface MTU): %d is below the minimum %d", l.MTU, minMTU)
		}
	}

	if l.DNS, err = addrList(ack, optDNS, "DNS servers"); err != nil {
		return err
	}
	if l.NTP, err = addrList(ack, optNTPServers, "NTP servers"); err != nil {
		return err
	}
	if b, ok, _ := option(ack, optDomainName, "domain name", 1, 0); ok {
		l.Domain = trimNUL(string(b))
	}
	if b, ok, err := option(ack, optServerID, "server identifier", 4, 4); err != nil {
		return err
	} else if ok {
		l.Server = netip.AddrFrom4([4]byte(b))
	}
	if b, ok, err := option(ack, optLeaseTime, "lease time", 4, 4); err != nil {
		return err
	} else if ok {
		l.LeaseTime = time.Duration(binary.BigEndian.Uint32(b)) * time.Second
	}
	return nil
}

// addrList reads an option holding a list of IPv4 addresses (6, 42): at
// least one, the length a multiple of 4. Absent is nil, no error.
func addrList(ack *dhcpv4.DHCPv4, code uint8, name string) ([]netip.Addr, error) {
	b, ok, err := option(ack, code, name, 4, 0)
	if err != nil || !ok {
		return nil, err
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("option %d (%s): length %d is not a multiple of 4", code, name, len(b))
	}
	var out []netip.Addr
	for i := 0; i < len(b); i += 4 {
		out = append(out, netip.AddrFrom4([4]byte(b[i:i+4])))
	}
	return out, nil
}

// option returns the raw value of option code, whether it is present, and
// an error when its length is below minLen or above maxLen (0: no bound;
// RFC 3396 lets a long option be split, and dhcpv4 joins the parts).
func option(m *dhcpv4.DHCPv4, code uint8, name string, minLen, maxLen int) ([]byte, bool, error) {
	b, ok := m.Options[code]
	if !ok {
		return nil, false, nil
	}
	if len(b) < minLen || maxLen > 0 && len(b) > maxLen {
		switch {
		case minLen == maxLen:
			return nil, true, fmt.Errorf("option %d (%s): length %d, want %d", code, name, len(b), minLen)
		case maxLen == 0:
			return nil, true, fmt.Errorf("option %d (%s): length %d, want at least %d", code, name, len(b), minLen)
		}
		return nil, true, fmt.Errorf("option %d (%s): length %d, want %d to %d", code, name, len(b), minLen, maxLen)
	}
	return b, true, nil
}

// maskBits is the prefix length of a contiguous IPv4 netmask.
func maskBits(m []byte) (int, error) {
	v := binary.BigEndian.Uint32(m)
	ones := bits.LeadingZeros32(^v)
	if v<<ones != 0 {
		return 0, fmt.Errorf("%d.%d.%d.%d is not a contiguous netmask", m[0], m[1], m[2], m[3])
	}
	return ones, nil
}

// broadcast is the directed broadcast address of p, invalid for /31 and /32,
// which have none (RFC 3021).
func broadcast(p netip.Prefix) netip.Addr {
	if p.Bits() >= 31 {
		return netip.Addr{}
	}
	a := p.Addr().As4()
	v := binary.BigEndian.Uint32(a[:]) | (1<<(32-p.Bits()) - 1)
	binary.BigEndian.PutUint32(a[:], v)
	return netip.AddrFrom4(a)
}

func trimNUL(s string) string {
	for len(s) > 0 && s[len(s)-1] == 0 {
		s = s[:len(s)-1]
	}
	return s
}

// ParseClasslessRoutes decodes the value of option 121 or 249 (RFC 3442):
// a sequence of a prefix length (0 to 32), the significant octets of the
// destination (prefix length / 8, rounded up) and a 4-byte router, where
// router 0.0.0.0 means on-link. Destination bits beyond the prefix length
// are cleared, as the RFC asks. An empty value is an error: the option's
// minimum length is 5.
func ParseClasslessRoutes(b []byte) ([]nic.Route, error) {
	if len(b) == 0 {
		return nil, errors.New("empty")
	}
	var routes []nic.Route
	for i := 0; i < len(b); {
		n := len(routes) + 1
		width := int(b[i])
		if width > 32 {
			return nil, fmt.Errorf("route %d at byte %d: prefix length %d is more than 32", n, i, width)
		}
		sig := (width + 7) / 8
		if need := 1 + sig + 4; len(b)-i < need {
			return nil, fmt.Errorf("route %d at byte %d: truncated, a /%d route needs %d bytes, %d left", n, i, width, need, len(b)-i)
		}
		var dst, gw [4]byte
		copy(dst[:], b[i+1:i+1+sig])
		copy(gw[:], b[i+1+sig:i+1+sig+4])
		routes = append(routes, nic.Route{
			Dst: netip.PrefixFrom(netip.AddrFrom4(dst), width).Masked(),
			Gw:  netip.AddrFrom4(gw),
		})
		i += 1 + sig + 4
	}
	return routes, nil
}
