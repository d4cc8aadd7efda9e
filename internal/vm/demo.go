package vm

// DemoDrive is the demo's config drive (`make demo` and `make bench`'s
// boots): a static address on one NIC and DHCP on the other, named
// (network_data.json has no names) after the NICs the kernel found, as
// cloud-init does.
func DemoDrive() map[string]string {
	return map[string]string{
		"openstack/latest/meta_data.json": `{"uuid": "d3m0d3m0-0000-4000-8000-000000000001", "hostname": "demo-vm.example.org",
 "name": "demo-vm", "availability_zone": "nova", "public_keys": {"demo": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIDemoKeyOnly demo@earlyinit"}}`,
		"openstack/latest/user_data": "#cloud-config\nruncmd: [echo hello]\n",
		"openstack/latest/network_data.json": `{
 "links": [{"id": "tap0", "type": "ovs", "ethernet_mac_address": "fa:16:3e:00:00:0a", "mtu": 1450},
           {"id": "tap1", "type": "ovs", "ethernet_mac_address": "fa:16:3e:00:00:0b"}],
 "networks": [{"id": "n0", "link": "tap0", "type": "ipv4", "ip_address": "10.0.0.5", "netmask": "255.255.255.0",
               "routes": [{"network": "0.0.0.0", "netmask": "0.0.0.0", "gateway": "10.0.0.1"}]},
              {"id": "n1", "link": "tap1", "type": "ipv4_dhcp"}],
 "services": [{"type": "dns", "address": "10.0.0.2"}]}`,
	}
}
