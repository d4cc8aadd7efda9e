// Package h3c documents how earlyinit reads H3C CAS's "standard mode"
// initialisation, and tests it. It declares no Source of its own.
//
// In standard mode CAS injects the VM's host name, administrator password
// and network through a disk it attaches: a vfat filesystem of 64 MB, or an
// ISO. Nothing public describes that disk's files. earlyinit assumes what
// the references behind this project say of such private clouds ("some
// private clouds want a 64 MB vfat config-2 disk"): it is an OpenStack
// config drive, labelled config-2 (CONFIG-2 on vfat), laid out as Nova lays
// it out:
//
//	openstack/latest/meta_data.json    uuid (the instance id), hostname,
//	                                   admin_pass, public_keys
//	openstack/latest/network_data.json the NICs by MAC, static or DHCP
//	openstack/latest/user_data         optional
//
// Such a disk is the configdrive source's, which reads it whole (every
// drive is read through datasource.DriveFS, whose 64 MiB budget is sized
// for it): the host name, the password into instance.Data.AdminPass (the
// sensitive instance data only; applying it is the set_passwords path's)
// and network_data.json. No DMI rule is needed, as drives are always
// tried.
//
// If CAS's disk turns out to differ (another label, other file names), the
// reader belongs here, as a Source with its Labels and ReadFS, listed in
// pkg/discover before configdrive.
package h3c
