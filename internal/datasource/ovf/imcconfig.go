package ovf

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// The keys of cust.cfg that cloud-init 22.4 reads
// (cloudinit/sources/helpers/vmware/imc/config.py).
const (
	keyCustomScript  = "CUSTOM-SCRIPT|SCRIPT-NAME"
	keyDNS           = "DNS|NAMESERVER|"
	keyDomain        = "NETWORK|DOMAINNAME"
	keyHostname      = "NETWORK|HOSTNAME"
	keyMarker        = "MISC|MARKER-ID"
	keyPassword      = "PASSWORD|-PASS"
	keyResetPassword = "PASSWORD|RESET"
	keySuffix        = "DNS|SUFFIX|"
	keyTimezone      = "DATETIME|TIMEZONE"
	keyPostGCStatus  = "MISC|POST-GC-STATUS"
	keyDefaultScript = "MISC|DEFAULT-RUN-POST-CUST-SCRIPT"
	keyMetadata      = "CLOUDINIT|METADATA"
	keyUserdata      = "CLOUDINIT|USERDATA"
	keyNICs          = "NIC-CONFIG|NICS"
)

// imcInstanceID is the instance id of a customization without cloud-init
// data, cloud-init's.
const imcInstanceID = "iid-vmware-imc"

// HostName is NETWORK HOSTNAME, "" when unset.
func (c custConfig) HostName() string { return c[keyHostname] }

// DomainName is NETWORK DOMAINNAME.
func (c custConfig) DomainName() string { return c[keyDomain] }

// Timezone is DATETIME TIMEZONE.
func (c custConfig) Timezone() string { return c[keyTimezone] }

// AdminPassword is PASSWORD -PASS as written (base64), "" when unset.
func (c custConfig) AdminPassword() string { return c[keyPassword] }

// MarkerID is MISC MARKER-ID.
func (c custConfig) MarkerID() string { return c[keyMarker] }

// CustomScript is CUSTOM-SCRIPT SCRIPT-NAME, the pre- and
// post-customization script's name in the package.
func (c custConfig) CustomScript() string { return c[keyCustomScript] }

// MetadataName and UserdataName are CLOUDINIT METADATA and USERDATA:
// files of cloud-init's own format in the package ("raw data").
func (c custConfig) MetadataName() string { return c[keyMetadata] }
func (c custConfig) UserdataName() string { return c[keyUserdata] }

// numbered is Config.name_servers and dns_suffixes: prefix1 ... prefixN,
// N the number of keys with the prefix; a gap is an error (a KeyError in
// cloud-init).
func (c custConfig) numbered(prefix string) ([]string, error) {
	n := c.countPrefix(prefix)
	out := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		v, ok := c[prefix+strconv.Itoa(i)]
		if !ok {
			return nil, fmt.Errorf("%s%d: missing (%d keys start with %s)", prefix, i, n, prefix)
		}
		out = append(out, v)
	}
	return out, nil
}

// NameServers is DNS NAMESERVER|1, |2, ...
func (c custConfig) NameServers() ([]string, error) { return c.numbered(keyDNS) }

// DNSSuffixes is DNS SUFFIX|1, |2, ...
func (c custConfig) DNSSuffixes() ([]string, error) { return c.numbered(keySuffix) }

// yesNo reads a yes/no key (any case), def when unset; anything else is an
// error, as in cloud-init.
func (c custConfig) yesNo(key string, def bool) (bool, error) {
	v, ok := c[key]
	if !ok {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "yes":
		return true, nil
	case "no":
		return false, nil
	}
	return false, fmt.Errorf("%s: want yes or no", key)
}

// ResetPassword is PASSWORD RESET: expire the password of every user of
// uid 0.
func (c custConfig) ResetPassword() (bool, error) { return c.yesNo(keyResetPassword, false) }

// PostGCStatus is MISC POST-GC-STATUS: report progress in
// guestinfo.gc.status too.
func (c custConfig) PostGCStatus() (bool, error) { return c.yesNo(keyPostGCStatus, false) }

// DefaultRunPostScript is MISC DEFAULT-RUN-POST-CUST-SCRIPT: the default of
// VMware Tools' enable-custom-scripts when the tools' configuration does
// not set it.
func (c custConfig) DefaultRunPostScript() (bool, error) { return c.yesNo(keyDefaultScript, false) }

// NIC is one [NICn] section.
type NIC struct {
	// Name is the section's name ("NIC1").
	Name    string
	MAC     string // lower case
	Primary bool
	OnBoot  bool
	// BootProto and IPv4Mode are lower case.
	BootProto, IPv4Mode string
	// IP, Netmask and Gateways are the static IPv4 settings (BOOTPROTO
	// static only); IP and Netmask "" when unset.
	IP, Netmask string
	Gateways    []string
	// IPv6 are IPv6ADDR|n with IPv6NETMASK|n.
	IPv6 []ipv6Addr
}

// ipv6Addr is one static IPv6 address; a part not set is "" and has set
// false.
type ipv6Addr struct {
	IP, Netmask       string
	HasIP, HasNetmask bool
}

// truthy is Nic.primary and Nic.onboot: "yes" or "true", any case.
func truthy(v string) bool {
	v = strings.ToLower(v)
	return v == "yes" || v == "true"
}

// NICs are the NICs NIC-CONFIG NICS lists (comma separated, names as
// written), each section read as cloud-init's Nic reads it. NICS missing,
// or a NIC without MACADDR, is an error.
func (c custConfig) NICs() ([]NIC, error) {
	list, ok := c[keyNICs]
	if !ok {
		return nil, fmt.Errorf("%s: missing", keyNICs)
	}
	var nics []NIC
	for _, name := range strings.Split(list, ",") {
		get := func(what string) string { return c[name+"|"+what] }
		mac, ok := c[name+"|MACADDR"]
		if !ok {
			return nil, fmt.Errorf("%s: NIC %q has no MACADDR", keyNICs, name)
		}
		n := NIC{
			Name:      name,
			MAC:       strings.ToLower(mac),
			Primary:   truthy(get("PRIMARY")),
			OnBoot:    truthy(get("ONBOOT")),
			BootProto: strings.ToLower(get("BOOTPROTO")),
			IPv4Mode:  strings.ToLower(get("IPv4_MODE")),
		}
		if n.BootProto == "static" {
			n.IP, n.Netmask = get("IPADDR"), get("NETMASK")
			if g := get("GATEWAY"); g != "" {
				for _, gw := range strings.Split(g, ",") {
					n.Gateways = append(n.Gateways, strings.TrimSpace(gw))
				}
			}
		}
		cnt := c.countPrefix(name + "|IPv6ADDR|")
		for i := 1; i <= cnt; i++ {
			var a ipv6Addr
			a.IP, a.HasIP = c.get(name + "|IPv6ADDR|" + strconv.Itoa(i))
			a.Netmask, a.HasNetmask = c.get(name + "|IPv6NETMASK|" + strconv.Itoa(i))
			n.IPv6 = append(n.IPv6, a)
		}
		nics = append(nics, n)
	}
	return nics, nil
}

// NetworkConfig is the network configuration (version 1) the NICs and DNS
// settings give, as cloud-init's get_network_config_from_conf makes it
// (NicConfigurator.generate, then a nameserver entry with the DNS servers
// and suffixes). names maps a lower-case MAC to the interface's name;
// with names nil, a NIC is given by its MAC alone (mac_address and no
// name: the live NIC with that MAC, under its own name, as cloud-init
// names it from `ip addr show`). With names set, a MAC it lacks is an
// error, as in cloud-init ("No known device has MACADDR").
//
// As in 22.4: BOOTPROTO other than static (and IPv4_MODE DISABLED) is
// DHCP; ONBOOT gives control auto; a static NIC's first gateway is the
// subnet's gateway when the NIC is PRIMARY, else, only when no NIC is
// primary, every gateway is a route to its network (metric 10000); IPv6
// addresses are static6 subnets without gateway.
func (c custConfig) NetworkConfig(names map[string]string) (map[string]any, error) {
	nics, err := c.NICs()
	if err != nil {
		return nil, err
	}
	var primary *NIC
	for i := range nics {
		if nics[i].Primary {
			if primary != nil {
				return nil, fmt.Errorf("%s and %s are both PRIMARY: there can only be one primary NIC", primary.Name, nics[i].Name)
			}
			primary = &nics[i]
		}
	}
	config := []any{}
	for _, n := range nics {
		iface := map[string]any{"type": "physical", "mac_address": n.MAC}
		if names != nil {
			name, ok := names[n.MAC]
			if !ok {
				return nil, fmt.Errorf("%s: no known device has MACADDR %s", n.Name, n.MAC)
			}
			iface["name"] = name
		}
		sub, err := ipv4Subnet(n, primary != nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", n.Name, err)
		}
		subnets := []any{sub}
		for _, a := range n.IPv6 {
			s := map[string]any{"type": "static6", "address": nil, "netmask": nil}
			if a.HasIP {
				s["address"] = a.IP
			}
			if a.HasNetmask {
				s["netmask"] = a.Netmask
			}
			subnets = append(subnets, s)
		}
		iface["subnets"] = subnets
		config = append(config, iface)
	}
	ns, err := c.NameServers()
	if err != nil {
		return nil, err
	}
	search, err := c.DNSSuffixes()
	if err != nil {
		return nil, err
	}
	if len(ns) > 0 || len(search) > 0 {
		config = append(config, map[string]any{"type": "nameserver", "address": strAny(ns), "search": strAny(search)})
	}
	return map[string]any{"version": 1, "config": config}, nil
}

func strAny(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// ipv4Subnet is NicConfigurator.gen_ipv4.
func ipv4Subnet(n NIC, havePrimary bool) (map[string]any, error) {
	s := map[string]any{}
	if n.OnBoot {
		s["control"] = "auto"
	}
	proto := n.BootProto
	if n.IPv4Mode == "disabled" {
		proto = "manual"
	}
	if proto != "static" {
		s["type"] = "dhcp"
		return s, nil
	}
	s["type"] = "static"
	if n.IP != "" {
		s["address"] = n.IP
	}
	if n.Netmask != "" {
		s["netmask"] = n.Netmask
	}
	if n.Primary && len(n.Gateways) > 0 {
		s["gateway"] = n.Gateways[0]
		return s, nil
	}
	if !havePrimary && len(n.Gateways) > 0 {
		var routes []any
		prefix, err := maskPrefix(n.Netmask)
		if err != nil {
			return nil, err
		}
		for _, gw := range n.Gateways {
			net, err := subnetOf(gw, n.Netmask)
			if err != nil {
				return nil, err
			}
			routes = append(routes, map[string]any{
				"destination": fmt.Sprintf("%s/%d", net, prefix),
				"type":        "route",
				"gateway":     gw,
				"metric":      10000,
			})
		}
		s["routes"] = routes
	}
	return s, nil
}

// maskPrefix is ipv4_mask_to_net_prefix: the prefix length of a dotted
// netmask or of a prefix given as a number.
func maskPrefix(mask string) (int, error) {
	if mask == "" {
		return 0, fmt.Errorf("NETMASK: missing, and the gateways need it for their routes")
	}
	if n, err := strconv.Atoi(mask); err == nil && n >= 0 && n <= 32 && strconv.Itoa(n) == mask {
		return n, nil
	}
	ip := net.ParseIP(mask).To4()
	if ip == nil || strings.Count(mask, ".") != 3 {
		return 0, fmt.Errorf("NETMASK %q: not an IPv4 netmask", mask)
	}
	ones, bits := net.IPMask(ip).Size()
	if bits == 0 {
		return 0, fmt.Errorf("NETMASK %q: not a contiguous netmask", mask)
	}
	return ones, nil
}

// subnetOf is gen_subnet: the gateway's address masked by the dotted
// netmask, byte by byte.
func subnetOf(ip, mask string) (string, error) {
	a, m := strings.Split(ip, "."), strings.Split(mask, ".")
	if len(a) != 4 || len(m) != 4 {
		return "", fmt.Errorf("GATEWAY %q with NETMASK %q: want dotted IPv4 addresses", ip, mask)
	}
	out := make([]string, 4)
	for i := range out {
		x, err1 := strconv.Atoi(strings.TrimSpace(a[i]))
		y, err2 := strconv.Atoi(strings.TrimSpace(m[i]))
		if err1 != nil || err2 != nil {
			return "", fmt.Errorf("GATEWAY %q with NETMASK %q: want dotted IPv4 addresses", ip, mask)
		}
		out[i] = strconv.Itoa(x & y)
	}
	return strings.Join(out, "."), nil
}
