package netcfg

import (
	"fmt"
	"math/bits"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// parseMAC normalises a MAC address to lower-case, colon-separated form.
func parseMAC(s string) (string, error) {
	hw, err := net.ParseMAC(strings.TrimSpace(s))
	if err != nil {
		return "", fmt.Errorf("%q: invalid MAC address", s)
	}
	return hw.String(), nil
}

// parseIP parses a bare IP address (no zone).
func parseIP(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(strings.TrimSpace(s))
	if err != nil || a.Zone() != "" {
		return netip.Addr{}, fmt.Errorf("%q: invalid IP", s)
	}
	return a, nil
}

// maskBits turns a netmask into a prefix length for the family of a (v4 when
// is4). The mask is either a length ("24") or an address form
// ("255.255.255.0", "ffff:ffff::"), as cloud-init's ipv4_mask_to_net_prefix
// and ipv6_mask_to_net_prefix accept. Non-contiguous masks are refused.
func maskBits(mask string, is4 bool) (int, error) {
	mask = strings.TrimSpace(mask)
	max := 128
	if is4 {
		max = 32
	}
	if n, err := strconv.Atoi(mask); err == nil {
		if n < 0 || n > max {
			return 0, fmt.Errorf("%q: invalid prefix length", mask)
		}
		return n, nil
	}
	m, err := netip.ParseAddr(mask)
	if err != nil || m.Zone() != "" || m.Is4() != is4 {
		return 0, fmt.Errorf("%q: invalid netmask", mask)
	}
	ones := 0
	zero := false
	for _, b := range m.AsSlice() {
		if zero && b != 0 {
			return 0, fmt.Errorf("%q: invalid netmask", mask)
		}
		l := bits.LeadingZeros8(^b)
		if l < 8 {
			zero = true
			if b<<l != 0 { // a one after the first zero
				return 0, fmt.Errorf("%q: invalid netmask", mask)
			}
		}
		ones += l
	}
	return ones, nil
}

// parseIPNet mirrors network_state's _normalize_net_keys: addr may carry its
// prefix after a slash (a length or a netmask); otherwise prefix (if non-nil)
// or netmask gives it; otherwise it defaults to 24 for IPv4 and 64 for IPv6,
// as cloud-init does. The address is kept as given (host bits and all).
func parseIPNet(addr, netmask string, prefix *int) (netip.Prefix, error) {
	a, after, slash := strings.Cut(strings.TrimSpace(addr), "/")
	ip, err := parseIP(a)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q: invalid IP", addr)
	}
	is4 := ip.Is4()
	var n int
	switch {
	case slash:
		if n, err = maskBits(after, is4); err != nil {
			return netip.Prefix{}, fmt.Errorf("%q: invalid prefix", addr)
		}
	case prefix != nil:
		n = *prefix
		if n < 0 || n > ip.BitLen() {
			return netip.Prefix{}, fmt.Errorf("%q: invalid prefix %d", addr, n)
		}
	case strings.TrimSpace(netmask) != "":
		if n, err = maskBits(netmask, is4); err != nil {
			return netip.Prefix{}, err
		}
	case is4:
		n = 24
	default:
		n = 64
	}
	return netip.PrefixFrom(ip, n), nil
}

// naturalLess orders names as cloud-init's natural_sort_key does: runs of
// digits compare as numbers, the rest case-insensitively ("eth2" < "eth10").
func naturalLess(a, b string) bool {
	ka, kb := natKey(a), natKey(b)
	for i := 0; i < len(ka) && i < len(kb); i++ {
		x, y := ka[i], kb[i]
		if x.isNum != y.isNum {
			// Python would refuse to compare int and str; keys from names
			// both start with text (possibly ""), so this only happens at
			// mismatched positions: order numbers first, deterministically.
			return x.isNum
		}
		if x.isNum {
			if x.num != y.num {
				return x.num < y.num
			}
			continue
		}
		if x.text != y.text {
			return x.text < y.text
		}
	}
	if len(ka) != len(kb) {
		return len(ka) < len(kb)
	}
	return a < b
}

type natPart struct {
	isNum bool
	num   uint64
	text  string
}

func natKey(s string) []natPart {
	var parts []natPart
	for s != "" {
		i := 0
		digit := s[0] >= '0' && s[0] <= '9'
		for i < len(s) && (s[i] >= '0' && s[i] <= '9') == digit {
			i++
		}
		if digit {
			n, err := strconv.ParseUint(s[:i], 10, 64)
			if err != nil {
				n = ^uint64(0)
			}
			parts = append(parts, natPart{isNum: true, num: n})
		} else {
			parts = append(parts, natPart{text: strings.ToLower(s[:i])})
		}
		s = s[i:]
	}
	return parts
}
