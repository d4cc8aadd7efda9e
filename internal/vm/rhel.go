package vm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// A root in the shape of the RHEL family, made from Debian's packages (the
// only ones this machine's registry serves), for the tests that boot what
// earlyinit's users run: CentOS 7, Rocky/Alma 8 and 9, openEuler. Each
// part stands for its RHEL counterpart:
//
//   - dracut is the initramfs generator (Debian's dracut, as RHEL's);
//   - NetworkManager is the only network stack, keyfiles in
//     /etc/NetworkManager/system-connections (systemd-networkd disabled);
//   - chrony keeps the time (RHEL's NTP client);
//   - sudo goes through the wheel group (%wheel in /etc/sudoers.d, as
//     RHEL's /etc/sudoers), and cloud.cfg.d names the default user as
//     RHEL's cloud.cfg does: cloud-user, in wheel;
//   - SELinux is Debian's reference policy (selinux-policy-default, type
//     "default"), labelled by the test from its own file_contexts, and
//     /etc/selinux/config as RHEL ships it (the test chooses the mode);
//   - sshd_config has no Include line and says PasswordAuthentication no,
//     as CentOS 7's and EL8 cloud images' do (EL9's Include and drop-ins
//     are added by the test that wants them);
//   - the root filesystem is XFS (fstab says so; the disk is the test's).

// RHELShapedPackages are the packages RHELShapedRoot installs with apt on
// top of DebianDracutRoot's root (Debian's kernel, dracut): the network,
// time and SELinux parts of the shape. dbus and libpam-systemd are the
// system bus and logind NetworkManager and polkitd need; libnss-myhostname
// resolves the machine's own name, as RHEL's nsswitch.conf does.
func RHELShapedPackages() []string {
	return []string{"dbus", "libpam-systemd", "libnss-myhostname", "network-manager", "chrony", "xfsprogs",
		"selinux-policy-default", "policycoreutils", "selinux-utils"}
}

// rhelRecipe names RHELShapedRoot's changes to its base root; change it
// when they change.
const rhelRecipe = "rhel-shaped/3"

// RHELSELinuxType is the policy type RHELShapedRoot's SELinux config
// names (Debian's selinux-policy-default).
const RHELSELinuxType = "default"

// RHELDefaultUser is the default user RHELShapedRoot's cloud.cfg.d names.
const RHELDefaultUser = "cloud-user"

// rhelShapedTarball is RHELShapedRoot's cache file.
func rhelShapedTarball(cacheDir, mirror string) string {
	base := debianDracutTarball(cacheDir, mirror)
	h := sha256.Sum256([]byte(filepath.Base(base) + "\n" + strings.Join(RHELShapedPackages(), ",") + "\n" + rhelRecipe))
	return filepath.Join(cacheDir, "rhel-shaped-"+hex.EncodeToString(h[:])[:16]+".tar")
}

// rhelFiles are the files RHELShapedRoot writes into its root.
var rhelFiles = map[string]string{
	"etc/fstab":           "# <file system> <mount point> <type> <options> <dump> <pass>\nLABEL=root / xfs defaults 0 0\n",
	"etc/sudoers.d/wheel": "# As RHEL's /etc/sudoers: the wheel group's members run anything.\n%wheel ALL=(ALL) NOPASSWD: ALL\n",
	"etc/selinux/config":  "SELINUX=permissive\nSELINUXTYPE=" + RHELSELinuxType + "\n",
	"etc/hostname":        "localhost.localdomain\n",
	// RHEL's hosts line: the machine's own name resolves through
	// myhostname, with no /etc/hosts entry (sudo needs it).
	"etc/nsswitch.conf": "passwd: files systemd\ngroup: files systemd\nshadow: files\nhosts: files dns myhostname\nnetworks: files\nprotocols: db files\nservices: db files\nethers: db files\nrpc: db files\n",
	"etc/cloud/cloud.cfg.d/05-rhel-default-user.cfg": `# The default user of RHEL's cloud.cfg.
system_info:
  default_user:
    name: ` + RHELDefaultUser + `
    lock_passwd: true
    gecos: Cloud User
    groups: [wheel, adm, systemd-journal]
    shell: /bin/bash
`,
	// As the sshd_config of CentOS 7 and EL8 cloud images: no Include,
	// password logins off.
	"etc/ssh/sshd_config": `# The shape of CentOS 7's and EL8's: no Include line.
HostKey /etc/ssh/ssh_host_rsa_key
HostKey /etc/ssh/ssh_host_ecdsa_key
HostKey /etc/ssh/ssh_host_ed25519_key
SyslogFacility AUTHPRIV
PermitRootLogin no
AuthorizedKeysFile	.ssh/authorized_keys
PasswordAuthentication no
ChallengeResponseAuthentication no
KbdInteractiveAuthentication no
UsePAM yes
X11Forwarding yes
PrintMotd no
AcceptEnv LANG LC_*
Subsystem	sftp	/usr/lib/openssh/sftp-server
`,
}

// RHELShapedRoot returns a tarball of the RHEL-shaped root (above), built
// from DebianDracutRoot's (Debian's kernel, dracut in place of
// initramfs-tools): RHELShapedPackages installed with the root's own apt
// (its .debs kept in cacheDir/debs, with debootstrap's), networkd
// disabled and NetworkManager and chrony enabled, the wheel group, the
// files of rhelFiles, and the kernel's initramfs made again by dracut.
// Labels are not in the tarball (tar drops xattrs): LabelRoot sets them.
// Cached like DebianRoot.
func RHELShapedRoot(cacheDir string) (string, error) {
	cacheDir, err := filepath.Abs(cacheDir)
	if err != nil {
		return "", err
	}
	base, err := DebianDracutRoot(cacheDir)
	if err != nil {
		return "", err
	}
	out := rhelShapedTarball(cacheDir, DebianMirror())
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	unlock, err := lockFile(filepath.Join(cacheDir, "debian.lock"))
	if err != nil {
		return "", fmt.Errorf("rhel-shaped root: %w", err)
	}
	defer unlock()
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	tmp, err := os.MkdirTemp(cacheDir, "build-")
	if err != nil {
		return "", fmt.Errorf("rhel-shaped root: %w", err)
	}
	defer os.RemoveAll(tmp)
	root := filepath.Join(tmp, "root")
	if err := Untar(base, root); err != nil {
		return "", fmt.Errorf("rhel-shaped root: %w", err)
	}
	if err := aptInstall(root, filepath.Join(cacheDir, "debs"), RHELShapedPackages()); err != nil {
		return "", fmt.Errorf("rhel-shaped root: %w", err)
	}
	if err := WriteTree(root, rhelFiles); err != nil {
		return "", fmt.Errorf("rhel-shaped root: %w", err)
	}
	steps := [][]string{
		{"systemctl", "disable", "systemd-networkd.service", "systemd-networkd.socket", "systemd-networkd-wait-online.service"},
		{"systemctl", "enable", "NetworkManager.service", "NetworkManager-wait-online.service", "chrony.service"},
		{"groupadd", "--system", "wheel"},
		{"chmod", "0440", "/etc/sudoers.d/wheel"},
		{"sh", "-c", "for k in /lib/modules/*; do dracut --force --kver \"${k##*/}\"; done"},
	}
	for _, s := range steps {
		if out, err := Chroot(root, s...); err != nil {
			return "", fmt.Errorf("rhel-shaped root: %w\n%s", err, tail(out, 4000))
		}
	}
	// enableNetworkd's alias link is not systemctl's: take it out by hand.
	os.Remove(filepath.Join(root, "etc/systemd/system/dbus-org.freedesktop.network1.service"))
	part := filepath.Join(tmp, "root.tar")
	if err := run("tar", "--numeric-owner", "--one-file-system", "-C", root, "-cf", part, "."); err != nil {
		return "", fmt.Errorf("rhel-shaped root: %w", err)
	}
	if err := os.Rename(part, out); err != nil {
		return "", fmt.Errorf("rhel-shaped root: %w", err)
	}
	return out, nil
}

// aptInstall installs pkgs (no recommends) into root with the root's own
// apt-get, from its own sources.list (debootstrap's mirror), resolving
// names with this machine's resolv.conf; the .debs land in debs (bind
// mounted on the root's archive cache, so a later build finds them), and
// the package lists are removed afterwards, as from an image.
func aptInstall(root, debs string, pkgs []string) error {
	resolv := filepath.Join(root, "etc/resolv.conf")
	if b, err := os.ReadFile("/etc/resolv.conf"); err == nil {
		os.Remove(resolv)
		if err := os.WriteFile(resolv, b, 0o644); err != nil {
			return err
		}
		defer os.WriteFile(resolv, nil, 0o644)
	}
	archives := filepath.Join(root, "var/cache/apt/archives")
	if err := os.MkdirAll(archives, 0o755); err != nil {
		return err
	}
	if err := run("mount", "--bind", debs, archives); err != nil {
		return err
	}
	defer exec.Command("umount", "-l", archives).Run()
	for _, argv := range [][]string{
		{"apt-get", "update", "-q"},
		append([]string{"apt-get", "install", "-y", "-q", "--no-install-recommends"}, pkgs...),
	} {
		if out, err := Chroot(root, argv...); err != nil {
			return fmt.Errorf("%w\n%s", err, tail(out, 4000))
		}
	}
	lists, _ := filepath.Glob(filepath.Join(root, "var/lib/apt/lists/*_*"))
	for _, l := range lists {
		os.Remove(l)
	}
	return nil
}

// LabelRoot labels every file of the root in dir with its own SELinux
// policy's file_contexts, as RHEL's installer leaves an image (setfiles
// run in the root, so its own policy and tools decide).
func LabelRoot(dir string) error {
	fc := "/etc/selinux/" + RHELSELinuxType + "/contexts/files/file_contexts"
	out, err := Chroot(dir, "setfiles", "-F", "-e", "/proc", "-e", "/sys", "-e", "/dev", fc, "/")
	if err != nil {
		return fmt.Errorf("label the root: %w\n%s", err, tail(out, 2000))
	}
	if strings.Contains(out, "Could not") {
		return fmt.Errorf("label the root: setfiles: %s", tail(out, 2000))
	}
	return nil
}
