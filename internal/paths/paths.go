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
	// /var/lib/cloud (layout in internal/instance/cache). The boot step writes
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

// cloud-init's own files (its 22.4 helpers.Paths defaults: cloud_dir
// /var/lib/cloud, run_dir /run/cloud-init), which earlyinit keeps
// current on the boots it provisions, from the same data and in the same
// step as its own, so that an installed cloud-init's CLI (`cloud-init
// status`, `cloud-init query`) sees earlyinit's boots and a cloud-init
// booted later (earlyinit=disabled, the package removed) finds the
// instance it knows. The instance cache writes the record (CloudInstancesDir,
// CloudInstanceLink, CloudDataDir) and CloudRunDir's instance-data at boot;
// the late stage writes the status, result, semaphores and boot-finished,
// and reads cloud-init's semaphores as its own. earlyinit reads
// CloudDataDir's instance-id as its own record when it has none (an
// instance cloud-init provisioned), and `earlyinit clean` empties
// CloudDir as `cloud-init clean` does.
const (
	// CloudRunDir is cloud-init's run directory (tmpfs): the status and
	// result links, instance-data.json and -sensitive.json, .instance-id,
	// and the cached answer of ds-identify (cloud.cfg, .ds-identify.result)
	// that its systemd generator reads.
	CloudRunDir = "/run/cloud-init"

	// CloudDir is cloud-init's /var/lib/cloud.
	CloudDir = "/var/lib/cloud"

	// CloudInstancesDir holds one directory per instance, named as
	// instance.InstanceDirName names earlyinit's: datasource, user-data
	// and vendor-data copies, sem/ (config_<module> semaphores),
	// boot-finished.
	CloudInstancesDir = CloudDir + "/instances"

	// CloudInstanceLink is the absolute symlink to this boot's instance
	// directory, as cloud-init makes it.
	CloudInstanceLink = CloudDir + "/instance"

	// CloudDataDir holds instance-id, previous-instance-id,
	// previous-datasource, status.json and result.json.
	CloudDataDir = CloudDir + "/data"

	// CloudSemDir holds cloud-init's "once" semaphores
	// (config_<module>.once).
	CloudSemDir = CloudDir + "/sem"
)
