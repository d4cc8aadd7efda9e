// Package oracle reads Oracle Cloud Infrastructure's instance metadata
// service (IMDS) into the instance model, as cloud-init's DataSourceOracle
// does: /opc/v2/instance/ with "Authorization: Bearer Oracle" (IMDSv2),
// /opc/v1/instance/ without it when v2 is refused, and the VNICs
// (/opc/vN/vnics/) for the network configuration.
//
// The network configuration is the primary VNIC by DHCP (DHCPv6 when it
// has only IPv6) with OCI's MTU of 9000, and, when asked
// (Client.SecondaryNICs, cloud-init's configure_secondary_nics), each
// secondary VNIC's addresses as static ones; never the secondary VNICs of
// a bare metal machine. It is network config v2, each VNIC matched by MAC
// (the live NIC keeps its name). Without VNIC data (an error fetching or
// reading it is logged, not fatal, as in cloud-init) the fallback applies.
//
// Differences from cloud-init: the service is reached at Service.Base (the
// link-local IPv4 address unless earlyinit.metadata_url says otherwise),
// not also at fd00:c1::a9fe:a9fe; a secondary VNIC's IPv6 address is
// always a /128, as cloud-init makes it on an IPv6-only VNIC (on a
// dual-stack one cloud-init gives it the IPv4 subnet's prefix); the region is filled from canonicalRegionName; the network
// configuration read from the initramfs's iSCSI files on bare metal is not
// (earlyinit is the initramfs).
package oracle

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// DefaultBaseURL is the IMDS address.
const DefaultBaseURL = "http://169.254.169.254"

// AssetTag is the chassis asset tag of every OCI machine, virtual or bare
// metal.
const AssetTag = "OracleCloud.com"

// V2Header is IMDSv2's header; v1 is asked without it.
const (
	V2Header = "Authorization"
	v2Value  = "Bearer Oracle"
)

// MTU is OCI's (its network uses 9000 throughout).
const MTU = 9000

// MaxBody bounds each document (the instance document holds user-data,
// which OCI caps at 32 KB).
const MaxBody = datasource.MaxFileSize

// Platform recognises OCI as ds-identify and cloud-init's
// _is_platform_viable do: chassis_asset_tag "OracleCloud.com", exactly.
func Platform(i dmi.Info) bool { return i.ChassisAssetTag == AssetTag }

// Client reads OCI's IMDS. The zero value reads http://169.254.169.254
// with the defaults below.
type Client struct {
	// BaseURL is the service's root; "" means DefaultBaseURL.
	BaseURL string
	// HTTPClient makes the requests.
	datasource.HTTPClient
	// MaxBody bounds each document; 0 means MaxBody.
	MaxBody int64
	// SecondaryNICs configures the secondary VNICs too (cloud-init's
	// datasource.Oracle.configure_secondary_nics, off by default).
	SecondaryNICs bool
}

// Read fetches the instance document and the VNICs. A failure to read the
// instance document rejects the source with an error naming the URL.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base := datasource.BaseURL(c.BaseURL, DefaultBaseURL)
	g := c.Fetcher()
	limit := datasource.Limit(c.MaxBody, MaxBody)

	root := base + "/opc/v2/"
	header := map[string]string{V2Header: v2Value}
	b, err := g.Get(ctx, httpget.Request{URL: root + "instance/", Header: header, Limit: limit})
	if s := httpget.Status(err); s >= 400 && s < 500 {
		c.Log("oracle: %v: trying IMDSv1", err)
		root, header = base+"/opc/v1/", nil
		b, err = g.Get(ctx, httpget.Request{URL: root + "instance/", Limit: limit})
	}
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	d, err := fromInstance(root+"instance/", b)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	d.Subplatform = fmt.Sprintf("metadata (%s)", root)

	vu := root + "vnics/"
	vb, err := g.Get(ctx, httpget.Request{URL: vu, Header: header, Limit: limit})
	if err != nil {
		c.Log("oracle: no VNIC data, the fallback network configuration applies: %v", err)
		return d, nil
	}
	nw, err := Network(vu, vb, c.SecondaryNICs, c.Logf)
	if err != nil {
		c.Log("oracle: the fallback network configuration applies: %v", err)
		return d, nil
	}
	d.Network, d.NetworkFormat = nw, instance.NetworkYAML
	return d, nil
}

// fromInstance fills the instance model from the instance document read
// at u (for errors).
func fromInstance(u string, b []byte) (*instance.Data, error) {
	v, err := jsondoc.Decode(u, b)
	if err != nil {
		return nil, err
	}
	doc, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want a JSON object, got %s", u, scalar.JSONNoun(v))
	}
	str := func(m map[string]any, key string) (string, error) {
		switch v := m[key].(type) {
		case nil:
			return "", nil
		case string:
			return v, nil
		default:
			return "", fmt.Errorf("%s: %q: want a string, got %s", u, key, scalar.JSONNoun(v))
		}
	}
	zero := 0
	d := &instance.Data{Datasource: "oracle", CloudName: "oracle", Platform: "oracle", Meta: doc, LaunchIndex: &zero}
	if d.InstanceID, err = str(doc, "id"); err != nil {
		return nil, err
	}
	if strings.TrimSpace(d.InstanceID) == "" {
		return nil, fmt.Errorf("%s: \"id\": missing or empty (it is required)", u)
	}
	if d.LocalHostname, err = str(doc, "hostname"); err != nil {
		return nil, err
	}
	if d.AvailabilityZone, err = str(doc, "ociAdName"); err != nil {
		return nil, err
	}
	if d.Region, err = str(doc, "canonicalRegionName"); err != nil {
		return nil, err
	}
	switch md := doc["metadata"].(type) {
	case nil:
	case map[string]any:
		ud, err := str(md, "user_data")
		if err != nil {
			return nil, err
		}
		if ud != "" {
			if d.UserData, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(ud), "")); err != nil {
				// The error would quote user-data: say only where.
				return nil, fmt.Errorf("%s: \"metadata.user_data\": not base64", u)
			}
		}
		if d.PublicKeys, err = datasource.PublicKeys(md["ssh_authorized_keys"]); err != nil {
			return nil, fmt.Errorf("%s: \"metadata.ssh_authorized_keys\": %v", u, err)
		}
	default:
		return nil, fmt.Errorf("%s: \"metadata\": want an object, got %s", u, scalar.JSONNoun(md))
	}
	return d, nil
}

// vnic is one element of the vnics document.
type vnic struct {
	MACAddr             string   `json:"macAddr"`
	PrivateIP           string   `json:"privateIp"`
	SubnetCIDRBlock     string   `json:"subnetCidrBlock"`
	IPv6Addresses       []string `json:"ipv6Addresses"`
	IPv6VirtualRouterIP string   `json:"ipv6VirtualRouterIp"`
	NICIndex            *int     `json:"nicIndex"`
}

// ethernet is a network config v2 ethernets entry.
type ethernet struct {
	Match     map[string]string `json:"match"`
	MTU       int               `json:"mtu"`
	DHCP4     bool              `json:"dhcp4"`
	DHCP6     bool              `json:"dhcp6"`
	Addresses []string          `json:"addresses,omitempty"`
}

// Network turns the vnics document b, read at u (for errors), into
// network config v2 (JSON, which is YAML): the primary VNIC by DHCP, and
// with secondary the others' addresses as static ones, as cloud-init's
// _add_network_config_from_opc_imds does; logf (may be nil) is told of
// what is skipped.
func Network(u string, b []byte, secondary bool, logf func(string, ...any)) ([]byte, error) {
	var vnics []vnic
	if err := json.Unmarshal(b, &vnics); err != nil {
		return nil, fmt.Errorf("%s: %v", u, err)
	}
	if len(vnics) == 0 {
		return nil, fmt.Errorf("%s: no VNICs", u)
	}
	log := func(format string, args ...any) {
		if logf != nil {
			logf(format, args...)
		}
	}
	if secondary && vnics[0].NICIndex != nil {
		log("oracle: %s: a bare metal machine: its secondary VNICs are not configured", u)
		secondary = false
	}
	eths := map[string]ethernet{}
	for i, v := range vnics {
		if i > 0 && !secondary {
			break
		}
		where := fmt.Sprintf("%s: VNIC %d", u, i)
		hw, err := net.ParseMAC(v.MACAddr)
		if err != nil || len(hw) != 6 {
			return nil, fmt.Errorf("%s: macAddr %q: not a MAC address", where, v.MACAddr)
		}
		e := ethernet{Match: map[string]string{"macaddress": hw.String()}, MTU: MTU}
		ipv6Only := v.IPv6VirtualRouterIP != "" && v.PrivateIP == ""
		if i == 0 {
			if ipv6Only {
				e.DHCP6 = true
			} else {
				e.DHCP4 = true
			}
		} else {
			if v.PrivateIP != "" {
				a, err := withPrefix(v.PrivateIP, v.SubnetCIDRBlock, 32)
				if err != nil {
					return nil, fmt.Errorf("%s: privateIp: %v", where, err)
				}
				e.Addresses = append(e.Addresses, a)
			}
			if len(v.IPv6Addresses) > 0 {
				a, err := withPrefix(v.IPv6Addresses[0], "", 128)
				if err != nil {
					return nil, fmt.Errorf("%s: ipv6Addresses: %v", where, err)
				}
				e.Addresses = append(e.Addresses, a)
			}
		}
		eths[fmt.Sprintf("vnic%d", i)] = e
	}
	return json.Marshal(map[string]any{"version": 2, "ethernets": eths})
}

// withPrefix is ip with the prefix length of the CIDR block cidr, or with
// def when cidr is not one (OCI writes "<null>").
func withPrefix(ip, cidr string, def int) (string, error) {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return "", fmt.Errorf("%q: not an IP address", ip)
	}
	bits := def
	if p, err := netip.ParsePrefix(cidr); err == nil && p.Addr().Is4() == a.Is4() {
		bits = p.Bits()
	}
	return netip.PrefixFrom(a, bits).String(), nil
}
