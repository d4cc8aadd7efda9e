//go:build qemu

package qemutests

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/vm"
)

const (
	macA = "52:54:00:aa:00:01" // first PCI NIC: the kernel calls it eth0
	macB = "52:54:00:bb:00:02" // second: eth1
)

// rootWith makes a busybox root disk with extra files, e.g. the markers
// renderer detection looks for.
func rootWith(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.BusyboxRoot(dir); err != nil {
		t.Fatal(err)
	}
	if err := vm.WriteTree(dir, files); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(img, dir, "root", "", 32); err != nil {
		t.Fatal(err)
	}
	return img
}

func seedISO(t *testing.T, label string, files map[string]string) string {
	t.Helper()
	iso := filepath.Join(t.TempDir(), "seed.iso")
	if err := vm.ISO(iso, tree(t, files), label); err != nil {
		t.Fatal(err)
	}
	return iso
}

// systemd-style root: networkd and udevd present, as renderer detection
// and name persistence see them.
var systemdMarkers = map[string]string{
	"usr/sbin/ip":                   "",
	"bin/systemctl":                 "",
	"usr/lib/systemd/systemd-udevd": "",
	"usr/bin/cloud-init":            "",
}

func TestNICSwapByMAC(t *testing.T) {
	parallel(t)
	root := rootWith(t, systemdMarkers)
	seed := nocloudSeed("iid-swap", "swapper")
	seed["network-config"] = `version: 2
ethernets:
  first:
    match: {macaddress: "` + macA + `"}
    set-name: eth1
    addresses: [192.0.2.10/24]
  second:
    match: {macaddress: "` + strings.ToUpper(macB) + `"}
    set-name: eth0
    dhcp4: true
`
	res := boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: seedISO(t, "cidata", seed), If: "ide-cd"}},
		NICs: []vm.NIC{{MAC: macA}, {MAC: macB}}, RNG: true})
	mustContain(t, "console", res.Console, "network: yaml config with 2 interfaces", "network: renderer networkd")
	s := seen(t, root)
	mustContain(t, "the real init's NICs", s, "nic eth1 "+macA+"\n", "nic eth0 "+macB+"\n")
	if strings.Contains(s, "eirtmp") {
		t.Errorf("a temporary name was left:\n%s", s)
	}
	for _, f := range []struct{ path, want string }{
		{"/etc/systemd/network/10-earlyinit-eth0.link", "MACAddress=" + macB},
		{"/etc/systemd/network/10-earlyinit-eth1.link", "MACAddress=" + macA},
		{"/etc/systemd/network/10-cloud-init-eth1.network", "Address=192.0.2.10/24"},
		{"/etc/systemd/network/10-cloud-init-eth0.network", "DHCP=ipv4"},
		{"/etc/cloud/cloud.cfg.d/99-earlyinit-disable-network-config.cfg", "config: disabled"},
	} {
		mustContain(t, f.path, catRoot(t, root, f.path), f.want)
	}
}

func TestStaticIPForIfupdown(t *testing.T) {
	parallel(t)
	root := rootWith(t, map[string]string{
		"sbin/ifquery":                   "#!/bin/sh\n",
		"sbin/ifup":                      "#!/bin/sh\n",
		"sbin/ifdown":                    "#!/bin/sh\n",
		"etc/network/interfaces":         "source /etc/network/interfaces.d/*\nauto lo\niface lo inet loopback\n",
		"etc/network/interfaces.d/.keep": "",
	})
	drive := openstackDrive(osUUID, "static-vm")
	drive["openstack/2018-08-27/network_data.json"] = `{
 "links": [{"id": "tap1", "type": "ovs", "ethernet_mac_address": "` + strings.ToUpper(macA) + `", "mtu": 1450}],
 "networks": [{"id": "net1", "link": "tap1", "type": "ipv4", "ip_address": "10.20.30.40", "netmask": "255.255.255.0",
   "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "10.20.30.1"}]}],
 "services": [{"type": "dns", "address": "10.20.30.2"}]}`
	res := boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: seedISO(t, "config-2", drive), If: "ide-cd"}},
		NICs: []vm.NIC{{MAC: macA}}, RNG: true})
	mustContain(t, "console", res.Console, "network: network_data.json config with 1 interfaces", "network: renderer eni")
	eni := catRoot(t, root, "/etc/network/interfaces.d/50-earlyinit.cfg")
	mustContain(t, "ENI", eni, "iface eth0 inet static", "address 10.20.30.40/24", "mtu 1450", "10.20.30.1", "dns-nameservers 10.20.30.2")
	// No systemd-udevd in this root: the classic udev rule persists names.
	mustContain(t, "udev rule", catRoot(t, root, "/etc/udev/rules.d/70-persistent-net.rules"), `ATTR{address}=="`+macA+`", NAME="eth0"`)
	if _, err := vm.Stat(root, "/etc/cloud/cloud.cfg.d/99-earlyinit-disable-network-config.cfg"); err == nil {
		t.Errorf("cloud-init drop-in written to a root without cloud-init")
	}
}

func TestFallbackDHCP(t *testing.T) {
	parallel(t)
	root := rootWith(t, systemdMarkers)
	res := boot(t, vm.Config{Append: "root=LABEL=root rw", Disks: []vm.Disk{{Path: root}, {Path: seedISO(t, "cidata", nocloudSeed("iid-fallback", "fb")), If: "ide-cd"}},
		NICs: []vm.NIC{{MAC: macA}, {MAC: macB}}, RNG: true})
	mustContain(t, "console", res.Console, "network: fallback config, DHCP on eth0")
	n := catRoot(t, root, "/etc/systemd/network/10-cloud-init-eth0.network")
	mustContain(t, "fallback .network", n, "DHCP=ipv4", macA)
	if _, err := vm.Stat(root, "/etc/systemd/network/10-cloud-init-eth1.network"); err == nil {
		t.Errorf("fallback configured a second NIC")
	}
	mustContain(t, "the real init's NICs", seen(t, root), "nic eth0 "+macA+"\n", "nic eth1 "+macB+"\n")
}
