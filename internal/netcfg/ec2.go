package netcfg

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// ParseEC2 parses the EC2 metadata service's network/ directory as JSON
// (instance.NetworkEC2Metadata, the "ec2" format: {"interfaces": {"macs":
// {"<mac>": {...}}}}) into the network model, as cloud-init's
// convert_ec2_metadata_network_config does with its default
// apply_full_imds_network_config: every NIC gets DHCPv4, DHCPv6 too when it
// has ipv6s, and a static address for each secondary IPv4 and IPv6 address
// (local-ipv4s and ipv6s past the first), with the prefix of
// subnet-ipv4-cidr-block (else /24) and of subnet-ipv6-cidr-block (else
// /128; AWS names it subnet-ipv6-cidr-blocks, so in practice /128, as in
// cloud-init).
//
// macToName maps lower-case MACs to the NICs' current names, as Parse takes
// it. When it is given, as cloud-init does from the live system, only NICs
// in it are configured, each under its current name (cloud-init's
// set-name). When nil, every NIC in the metadata is, each matched by MAC
// under an id that is not a name: "nic<device-number>" (NoRename).
//
// NICs come sorted by MAC, as cloud-init orders them. When there are several,
// each NIC's DHCP subnets get cloud-init's route metric, 100 × (device-number
// + 1), so the primary NIC's default route wins.
func ParseEC2(data []byte, macToName map[string]string) (*Config, error) {
	v, err := jsondoc.Decode("ec2 network metadata", data)
	if err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("ec2 network metadata: want an object, got %s", scalar.JSONNoun(v))
	}
	return convertEC2(m, macToName)
}

// convertEC2 is ParseEC2 on the decoded directory.
func convertEC2(network map[string]any, macToName map[string]string) (*Config, error) {
	ifs, ok := network["interfaces"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("ec2 network metadata: \"interfaces\": want a directory, got %s", scalar.JSONNoun(network["interfaces"]))
	}
	macs, ok := ifs["macs"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("ec2 network metadata: \"interfaces/macs\": want a directory, got %s", scalar.JSONNoun(ifs["macs"]))
	}
	type nic struct {
		mac string
		md  map[string]any
	}
	var nics []nic
	seen := map[string]string{}
	for key, v := range macs {
		where := "interfaces/macs/" + key
		hw, err := net.ParseMAC(key)
		if err != nil || len(hw) != 6 {
			return nil, fmt.Errorf("ec2 network metadata: %q: not a MAC address", where)
		}
		mac := hw.String()
		if prev, ok := seen[mac]; ok {
			return nil, fmt.Errorf("ec2 network metadata: %q: the same MAC as %q", where, prev)
		}
		seen[mac] = where
		md, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("ec2 network metadata: %q: want a directory, got %s", where, scalar.JSONNoun(v))
		}
		if macToName != nil && macToName[mac] == "" {
			continue // not a NIC of this system
		}
		nics = append(nics, nic{mac, md})
	}
	sort.Slice(nics, func(i, j int) bool { return nics[i].mac < nics[j].mac })

	c := &Config{Version: 2}
	names := map[string]bool{}
	idx := 0 // cloud-init's nic_idx: device-number + 1
	for _, n := range nics {
		where := "ec2 network metadata: \"interfaces/macs/" + n.mac
		if dn, ok := n.md["device-number"]; ok {
			i, err := ec2Atoi(dn)
			if err != nil || i < 0 {
				return nil, fmt.Errorf("%s/device-number\": want a non-negative integer, got %v", where, dn)
			}
			idx = i + 1
		} else {
			idx++
		}
		iface := Interface{Kind: Physical, MAC: n.mac}
		if name := macToName[n.mac]; name != "" {
			iface.Name = name
		} else {
			iface.Name, iface.NoRename = fmt.Sprintf("nic%d", idx-1), true
			if names[iface.Name] {
				iface.Name = "nic-" + strings.ReplaceAll(n.mac, ":", "")
			}
		}
		names[iface.Name] = true
		metric := 0
		if len(nics) > 1 {
			metric = idx * 100
		}
		iface.Subnets = []Subnet{{Type: DHCP4, Metric: metric}}
		if ec2Truthy(n.md["ipv6s"]) {
			iface.Subnets = append(iface.Subnets, Subnet{Type: DHCP6, Metric: metric})
		}
		addrs, err := ec2SecondaryAddresses(n.md)
		if err != nil {
			return nil, fmt.Errorf("%s/%v", where, err)
		}
		for _, a := range addrs {
			iface.Subnets = append(iface.Subnets, Subnet{Type: Static, Address: a})
		}
		c.Interfaces = append(c.Interfaces, iface)
	}
	return c, nil
}

func ec2Atoi(v any) (int, error) {
	switch v := v.(type) {
	case string:
		return strconv.Atoi(strings.TrimSpace(v))
	case json.Number:
		return strconv.Atoi(v.String())
	case float64:
		if v == float64(int(v)) {
			return int(v), nil
		}
	}
	return 0, fmt.Errorf("not an integer")
}

// ec2Truthy is Python's truth for a meta-data value.
func ec2Truthy(v any) bool {
	switch v := v.(type) {
	case nil:
		return false
	case string:
		return v != ""
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

// ec2SecondaryAddresses is cloud-init's get_secondary_addresses: sorted as
// strings ("ip/prefix"), as cloud-init sorts them. Errors start with the key.
func ec2SecondaryAddresses(md map[string]any) ([]netip.Prefix, error) {
	type addr struct{ s, key string }
	var addrs []addr
	for _, f := range []struct{ ips, cidr, def string }{
		{"local-ipv4s", "subnet-ipv4-cidr-block", "24"},
		{"ipv6s", "subnet-ipv6-cidr-block", "128"},
	} {
		ips, ok := md[f.ips].([]any)
		if !ok || len(ips) < 2 {
			continue
		}
		prefix := f.def
		if s, ok := md[f.cidr].(string); ok {
			if parts := strings.Split(s, "/"); len(parts) == 2 {
				prefix = parts[1]
			}
		}
		for i, ip := range ips[1:] {
			s, ok := ip.(string)
			if !ok {
				return nil, fmt.Errorf("%s\" element %d: want a string, got %s", f.ips, i+1, scalar.JSONNoun(ip))
			}
			addrs = append(addrs, addr{s + "/" + prefix, f.ips})
		}
	}
	sort.SliceStable(addrs, func(i, j int) bool { return addrs[i].s < addrs[j].s })
	out := make([]netip.Prefix, 0, len(addrs))
	for _, a := range addrs {
		p, err := netip.ParsePrefix(a.s)
		if err != nil {
			return nil, fmt.Errorf("%s\": secondary address %q: %v", a.key, a.s, err)
		}
		out = append(out, p)
	}
	return out, nil
}
