package vm

// DebianCloudConfigPackages are the extra packages (DebianRootWith's
// extra) of the root issue 16's cloud-config test boots: what ca_certs
// (update-ca-certificates, and the CA bundle apt's https uses), locale
// (locale-gen, update-locale), ntp (systemd-timesyncd) and disk_setup and
// fs_setup (sfdisk, mkfs.ext4) run in the root. e2fsprogs is in minbase
// already; it is named so the list says what the test needs. Recommends
// are not installed. The root is cached under its own name, as every
// package set is (DebianTarballWith).
func DebianCloudConfigPackages() []string {
	return []string{"ca-certificates", "locales", "systemd-timesyncd", "fdisk", "e2fsprogs"}
}
