// Package paths names the files and directories earlyinit owns, each once,
// with who writes it and who reads it. Paths are absolute in the tree they
// live in: the real root, or the initramfs for what is under /run before
// switch_root (/run moves into the real root). The files that belong to a
// single package stay there (late.StatusFile, late.LogFile, ...); the ones
// here cross packages.
package paths

const (
	// RunDir is earlyinit's run directory, cloud-init's /run/cloud-init.
	// The boot step creates it in the initramfs's /run (the boot record,
	// the late-stage binary, instance-data.json through the instance
	// cache), and /run moves into the real root at switch_root; the late
	// stage writes its status and result there. The late stage and the
	// CLI (status, analyze, query) read it.
	RunDir = "/run/earlyinit"

	// LateBinary is the copy of earlyinit the late stage runs from. The
	// boot step's runner copies the running binary there (0755); the
	// systemd units (late.Units) and the no-systemd handoff (late --exec)
	// run it, and the CLI's late --exec falls back to it when it cannot
	// name its own executable.
	LateBinary = RunDir + "/earlyinit"

	// InstalledBinary is the package's earlyinit in the real root, with
	// TLS. The late stages run it when it is there (provision.InstallRunner),
	// in mode own and mode distro; the package's kernel hooks and
	// `earlyinit setup` are it.
	InstalledBinary = "/usr/bin/earlyinit"

	// InitrdBinary is the package's initramfs build of earlyinit (build tag
	// initrd: no TLS, no image-building verbs), which `earlyinit
	// initramfs` packs as the initramfs's /init when it is there.
	InitrdBinary = "/usr/lib/earlyinit/earlyinit-initrd"

	// RunDisabledFile is written (empty) by the boot step when the kernel
	// command line says earlyinit=disabled; late.Status reads it to
	// report "disabled" after switch_root.
	RunDisabledFile = RunDir + "/disabled"

	// InitramfsLogFile is the initramfs's log (0600), written by the boot
	// step before the handoff; the late boot stage appends it to its own
	// log (late.LogFile).
	InitramfsLogFile = RunDir + "/initramfs.log"

	// BootRecordFile is the boot record (boot.Record as JSON), written by
	// the boot step at the handoff and read by `earlyinit analyze`.
	BootRecordFile = RunDir + "/boot.json"

	// DHCPNTPFile holds the NTP servers (DHCP option 42) of the
	// initramfs's temporary DHCP lease, one address a line (0644). The
	// boot step writes it when the lease offered any (a lease is taken
	// only to reach a metadata service); the ntp module reads it for
	// ntp_use_dhcp_config. Missing: no lease, or no servers offered.
	DHCPNTPFile = RunDir + "/dhcp-ntp-servers"

	// DisabledFile in the real root turns earlyinit off for that image
	// (cloud-init's /etc/cloud/cloud-init.disabled). earlyinit never
	// writes it: the image's builder or its admin does. The boot step
	// reads it (only switch_root), the late stage too (nothing runs; the
	// units have ConditionPathExists=!DisabledFile), and late.Status
	// reports it.
	DisabledFile = "/etc/earlyinit/disabled"

	// CacheDir is the instance cache in the real root, cloud-init's
	// /var/lib/cloud (layout in pkg/instance/cache). The boot step writes
	// it through the instance cache; the late stage and its modules add
	// semaphores and scripts, read the cached instance, and remove it on
	// `earlyinit clean`; the units require it mounted.
	CacheDir = "/var/lib/earlyinit"

	// InstancesDir holds one directory per instance ever seen
	// (instance.InstanceDirName names it). The instance cache writes the
	// payloads there at boot; the late stage reads them and keeps the
	// instance's semaphores and scripts there.
	InstancesDir = CacheDir + "/instances"

	// InstanceLink is the relative symlink to this boot's directory
	// under InstancesDir, made by the instance cache at boot and read
	// through by `earlyinit query`.
	InstanceLink = CacheDir + "/instance"

	// DataDir holds this boot's instance-id, datasource and their
	// previous values, written by the instance cache at boot; the boot
	// step's network digest and the hostname module's previous-hostname
	// live there too. The late stage reads the instance-id from it.
	DataDir = CacheDir + "/data"
)
