// Package nic renames network interfaces by MAC address through netlink,
// without the ip binary, and writes the files that make those names stick in
// the real root (systemd .link files or a classic udev rule).
//
// Planning is pure: Plan takes the live links and the wanted names and
// returns an ordered list of renames that never makes two links share a name,
// going through temporary names ("eirtmp0", ...) only to break cycles such as
// a swap of eth0 and eth1, which cloud-init cannot do. Apply carries out a
// plan over a small Netlinker interface, undoing what it did on error.
//
// Up applies a temporary DHCPv4 lease (see package nic/dhcp) so that the
// initramfs can reach the metadata service, and its Ephemeral's Down takes
// exactly that away again before switch_root; LinkLocal is the IPv6 path.
package nic

import (
	"fmt"
	"net"
	"strings"
)

// Link is a live NIC as the rename planner sees it.
type Link struct {
	Index int
	Name  string
	// MAC is lower-case and colon separated, "" when the link has none.
	MAC     string
	Driver  string
	Carrier bool
	Up      bool
	// Kind is netlink's link type: "device", "veth", "bridge", "bond",
	// "vlan", ..., and "loopback" for lo.
	Kind string
}

// Step is one rename: the link named From gets the name To.
type Step struct{ From, To string }

func (s Step) String() string { return s.From + " -> " + s.To }

// Problem is a wanted rename that Plan skipped, and why. MAC is normalised
// when it parses; Name is the wanted name.
type Problem struct{ MAC, Name, Reason string }

func (p Problem) String() string {
	return fmt.Sprintf("rename %s to %q: %s", p.MAC, p.Name, p.Reason)
}

// IFNAMSIZ is the kernel's buffer size for an interface name, NUL included.
const IFNAMSIZ = 16

// tmpPrefix names the temporary names used to break rename cycles. With
// IFNAMSIZ in mind it is short: "eirtmp" plus a few digits.
const tmpPrefix = "eirtmp"

// ValidName tells whether name can be given to a NIC and written to udev and
// systemd files: 1 to 15 bytes, not "." or "..", printable ASCII without
// '/', ':' and whitespace (the kernel's dev_valid_name), '%' (the kernel
// would treat it as a template like "eth%d") or quotes and backslashes
// (which a udev rule cannot carry).
func ValidName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty name")
	case len(name) >= IFNAMSIZ:
		return fmt.Errorf("name %q is %d bytes, longer than %d", name, len(name), IFNAMSIZ-1)
	case name == "." || name == "..":
		return fmt.Errorf("name %q is reserved", name)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c <= ' ' || c >= 0x7f:
			return fmt.Errorf("name %q has a space, control or non-ASCII byte at %d", name, i)
		case strings.IndexByte(`/:%"'\`, c) >= 0:
			return fmt.Errorf("name %q contains %q", name, c)
		}
	}
	return nil
}

// normalizeMAC returns mac in the lower-case colon-separated form the kernel
// prints ("52:54:00:12:34:56"), accepting what net.ParseMAC accepts.
func normalizeMAC(mac string) (string, error) {
	hw, err := net.ParseMAC(strings.TrimSpace(mac))
	if err != nil {
		return "", fmt.Errorf("invalid MAC address %q", mac)
	}
	return hw.String(), nil
}

// linkMAC is a live link's MAC in normal form; links come from the kernel,
// so a MAC that does not parse is only lower-cased.
func linkMAC(mac string) string {
	if m, err := normalizeMAC(mac); err == nil {
		return m
	}
	return strings.ToLower(mac)
}
