// Package ovf is cloud-init 22.4's DataSourceOVF: the OVF environment
// (ovf-env.xml: vApp properties) and VMware's guest customization (IMC),
// read into the instance model.
//
// Where each comes from, in the order discovery asks:
//
//   - the seed directory /var/lib/cloud/seed/ovf and the OVF environment
//     ISO (iso9660 or vfat, labelled as ds-identify knows it: "OVF ENV",
//     OVFENV, OVF-TRANSPORT, in either case): ovf-env.xml (ReadFS);
//   - on a VMware VM (vmware.Platform), without the temporary network:
//     the guest customization package VMware Tools' deployPkg plugin left
//     in the root's /run/vmware-imc (Customization), then the OVF
//     environment vCenter puts in guestinfo.ovfEnv, read with the image's
//     vmware-rpctool run chrooted in the root, as the vmware source reads
//     guestinfo.
//
// The OVF environment gives what read_ovf_environment reads: instance-id
// (default iid-dsovf), hostname or local-hostname, public-keys, user-data
// (base64, or as it is when it does not decode as Python decodes it),
// network-config (base64 YAML, its "network"), password (the default
// user's, given as vendor-data cloud-config `password`, the datasource
// configuration it is in cloud-init). A seedfrom property is an error: its
// seed is not read.
//
// The guest customization is described at Customization: the
// specification's host name, NICs and DNS (cust.cfg, read as Python's
// configparser reads it, converted as cloud-init's NicConfigurator), the
// admin password, the custom script under VMware Tools'
// enable-custom-scripts rule, the reports to vCenter
// (deployPkg.update.state, guestinfo.gc.status); or the cloud-init
// meta-data and user-data a package carries.
//
// On real vSphere the package is delivered by VMware Tools' daemon once the
// installed system runs: in the initramfs it is not there yet, and this
// source finds it only where it was put before the boot (an image or test
// that stages /run/vmware-imc on the root's disk). The OVF environment, in
// guestinfo.ovfEnv or on its ISO, is there from power-on.
//
// In the registry the source comes after vmware: on a VMware VM both are
// asked without the network, and a source that finds nothing is logged as
// rejected, so a VM using guestinfo.metadata (vmware) is not told every
// boot that it has no customization. cloud-init asks OVF first; a VM with
// both a customization and guestinfo.metadata gets the guestinfo one here.
package ovf
