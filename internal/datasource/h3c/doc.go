// Package h3c documents how earlyinit reads H3C CAS's initialisation, and
// tests it. It declares no Source of its own.
//
// CAS has two initialisation modes (the reference notes this project was
// built from, ../shared/seeds/003, quoted in h3c_test.go):
//
//   - standard mode: the VM is initialised through the virtualisation
//     platform's own interface (host name, administrator password,
//     network address), with CAS's tools in the guest. earlyinit does not
//     read that interface: a standard-mode VM is not provisioned by
//     earlyinit.
//   - professional mode: the VM is initialised by cloud-init, which CAS
//     feeds from a disk it attaches, vfat (a 64 MB disk) or ISO (a CD
//     drive); only this mode has that setting. earlyinit reads that disk
//     in cloud-init's place.
//
// Nothing public gives the professional-mode disk's files. earlyinit
// reads it as the cloud-init datasource drive it is: an OpenStack config
// drive labelled config-2 (CONFIG-2 on vfat), laid out as Nova lays it out,
// is the configdrive source's, which reads it whole (every drive is read
// through datasource.DriveFS, whose 64 MiB budget is sized for it):
//
//	openstack/latest/meta_data.json    uuid (the instance id), hostname,
//	                                   admin_pass, public_keys
//	openstack/latest/network_data.json the NICs by MAC, static or DHCP
//	openstack/latest/user_data         optional
//
// and a NoCloud drive labelled cidata is the nocloud source's. No DMI rule
// is needed, as drives are always tried. If CAS's disk turns out to differ
// (another label, other file names), the reader belongs here, as a Source
// with its Labels and ReadFS, listed in internal/discover before configdrive.
package h3c
