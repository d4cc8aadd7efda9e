package opennebula

import (
	"encoding/json"
	"fmt"
	"math/bits"
	"net"
	"net/netip"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// netConfig is network config version 2, as cloud-init's OpenNebulaNetwork
// generates it.
type netConfig struct {
	Version   int                 `json:"version"`
	Ethernets map[string]Ethernet `json:"ethernets"`
}

// Ethernet is one NIC of a v2 config.
type Ethernet struct {
	Match       *Match       `json:"match,omitempty"`
	Addresses   []string     `json:"addresses"`
	Gateway4    string       `json:"gateway4,omitempty"`
	Gateway6    string       `json:"gateway6,omitempty"`
	Nameservers *Nameservers `json:"nameservers,omitempty"`
	MTU         int          `json:"mtu,omitempty"`
	Routes      []Route      `json:"routes,omitempty"`
}

// Match selects the NIC by MAC.
type Match struct {
	MACAddress string `json:"macaddress"`
}

// Nameservers are a NIC's resolvers and search domains.
type Nameservers struct {
	Addresses []string `json:"addresses,omitempty"`
	Search    []string `json:"search,omitempty"`
}

// Route is a static route.
type Route struct {
	To  string `json:"to"`
	Via string `json:"via"`
}

// JSON is the configuration as a document internal/netcfg reads (JSON is
// YAML).
func (c *netConfig) JSON() ([]byte, error) { return json.Marshal(c) }

// The context variables' patterns, compiled on first use.
var (
	ipKey    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ETH[0-9]+_IP`) })
	ethKey   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(ETH[0-9]+)_`) })
	routeRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(\S+)\s+via\s+(\S+)\s*$`) })
	digitsRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9]+$`) })
)

// Network builds the network configuration from the ETHx_* variables, as
// cloud-init's OpenNebulaNetwork.gen_conf does, for each NIC the context
// describes: one with an ETHx_MAC is matched by that MAC (named, as
// cloud-init names it, after the live NIC), one with ETHx_IP* and no MAC
// is the NIC named ethx. It is nil when no ETHx_IP* variable is set, as in
// cloud-init.
//
// For each NIC: ETHx_IP (default: the address cloud-init makes of the
// MAC's last four bytes) with the prefix of ETHx_MASK (default
// 255.255.255.0); ETHx_IP6 and ETHx_IP6_ULA with ETHx_IP6_PREFIX_LENGTH
// (default 64); ETHx_GATEWAY, ETHx_IP6_GATEWAY (or ETHx_GATEWAY6);
// ETHx_DNS then DNS, ETHx_SEARCH_DOMAIN then SEARCH_DOMAIN, each without
// repeats; ETHx_MTU; ETHx_ROUTES ("NET via GW, ..."). An empty variable
// counts as unset.
func Network(ctx map[string]string) (*netConfig, error) {
	hasIP := false
	devs := map[string]bool{}
	for k := range ctx {
		if ipKey().MatchString(k) {
			hasIP = true
			devs[ethKey().FindStringSubmatch(k)[1]] = true
		}
		if m := ethKey().FindStringSubmatch(k); m != nil && k == m[1]+"_MAC" && ctx[k] != "" {
			devs[m[1]] = true
		}
	}
	if !hasIP {
		return nil, nil
	}
	names := make([]string, 0, len(devs))
	for d := range devs {
		names = append(names, d)
	}
	sort.Slice(names, func(i, j int) bool {
		a, _ := strconv.Atoi(strings.TrimPrefix(names[i], "ETH"))
		b, _ := strconv.Atoi(strings.TrimPrefix(names[j], "ETH"))
		return a < b
	})
	nc := &netConfig{Version: 2, Ethernets: map[string]Ethernet{}}
	for _, dev := range names {
		e, err := ethernet(ctx, dev)
		if err != nil {
			return nil, err
		}
		nc.Ethernets[strings.ToLower(dev)] = e
	}
	return nc, nil
}

// ethernet is the v2 entry of the context's NIC dev ("ETH0").
func ethernet(ctx map[string]string, dev string) (Ethernet, error) {
	field := func(name, def string) string {
		if v := ctx[dev+"_"+name]; v != "" {
			return v
		}
		return def
	}
	e := Ethernet{Addresses: []string{}}
	mac := strings.ToLower(field("MAC", ""))
	if mac != "" {
		hw, err := net.ParseMAC(mac)
		if err != nil || len(hw) != 6 {
			return e, fmt.Errorf("%s_MAC: %q is not a MAC address", dev, mac)
		}
		e.Match = &Match{MACAddress: hw.String()}
	}
	ip := field("IP", "")
	if ip == "" && e.Match != nil {
		ip = macToIP(e.Match.MACAddress)
	}
	if ip != "" {
		prefix, err := maskPrefix(field("MASK", "255.255.255.0"))
		if err != nil {
			return e, fmt.Errorf("%s_MASK: %v", dev, err)
		}
		e.Addresses = append(e.Addresses, ip+"/"+strconv.Itoa(prefix))
	}
	prefix6 := field("IP6_PREFIX_LENGTH", "64")
	for _, k := range []string{"IP6", "IP6_ULA"} {
		if v := field(k, ""); v != "" {
			e.Addresses = append(e.Addresses, v+"/"+prefix6)
		}
	}
	e.Gateway4 = field("GATEWAY", "")
	e.Gateway6 = field("IP6_GATEWAY", field("GATEWAY6", ""))

	ns := &Nameservers{
		Addresses: unique(strings.Fields(field("DNS", "")), strings.Fields(ctx["DNS"])),
		Search:    unique(strings.Fields(field("SEARCH_DOMAIN", "")), strings.Fields(ctx["SEARCH_DOMAIN"])),
	}
	if len(ns.Addresses) > 0 || len(ns.Search) > 0 {
		e.Nameservers = ns
	}
	if v := field("MTU", ""); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n <= 0 {
			return e, fmt.Errorf("%s_MTU: %q is not a positive integer", dev, v)
		}
		e.MTU = n
	}
	for _, entry := range strings.Split(field("ROUTES", ""), ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		m := routeRE().FindStringSubmatch(entry)
		if m == nil {
			return e, fmt.Errorf("%s_ROUTES: %q is not \"NETWORK via GATEWAY\"", dev, strings.TrimSpace(entry))
		}
		e.Routes = append(e.Routes, Route{To: m[1], Via: m[2]})
	}
	return e, nil
}

// macToIP is cloud-init's mac2ip: the IPv4 address of a MAC's last four
// bytes (OpenNebula's 02:00:0a:12:01:01 is 10.18.1.1).
func macToIP(mac string) string {
	p := strings.Split(mac, ":")
	out := make([]string, 0, 4)
	for _, h := range p[2:] {
		n, _ := strconv.ParseUint(h, 16, 8)
		out = append(out, strconv.FormatUint(n, 10))
	}
	return strings.Join(out, ".")
}

// maskPrefix is cloud-init's ipv4_mask_to_net_prefix: a prefix length
// ("24") or a contiguous netmask ("255.255.255.0").
func maskPrefix(mask string) (int, error) {
	mask = strings.TrimSpace(mask)
	if digitsRE().MatchString(mask) {
		n, err := strconv.Atoi(mask)
		if err != nil || n > 32 {
			return 0, fmt.Errorf("%q is not a prefix length", mask)
		}
		return n, nil
	}
	a, err := netip.ParseAddr(mask)
	if err != nil || !a.Is4() {
		return 0, fmt.Errorf("%q is not an IPv4 netmask", mask)
	}
	b := a.As4()
	v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	ones := bits.LeadingZeros32(^v)
	if v<<ones != 0 {
		return 0, fmt.Errorf("%q is not a contiguous netmask", mask)
	}
	return ones, nil
}

// unique is the lists' elements in order, each once.
func unique(lists ...[]string) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range lists {
		for _, s := range l {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}
