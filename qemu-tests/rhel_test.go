//go:build qemu

package qemutests

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/vm"
)

// The RHEL-shaped image (vm.RHELShapedRoot says which part stands for
// what): an XFS root on a GPT partition grown at first boot, dracut with
// earlyinit's package (mode distro), NetworkManager alone, chrony, sudo
// through wheel, cloud-user as the default user from cloud.cfg.d, SELinux
// with the root labelled by its own policy, sshd_config without Include.
// It is reached only as its user would reach it: QEMU's user network
// (restrict=on), ssh on a port of 127.0.0.1.

const (
	elMAC      = "52:54:00:e1:00:01"
	elPassword = "el-Passw0rd"
	elHost     = "el-guest"
	// The image's partition and the volume it lands on, in MiB.
	elPartMB, elDiskMB = 1600, 3072
)

// elNetwork is a static address on QEMU's user network (its router
// 10.0.2.2, its DNS 10.0.2.3), the NIC renamed lan0 by its MAC.
const elNetwork = `version: 2
ethernets:
  nic0:
    match: {macaddress: "` + elMAC + `"}
    set-name: lan0
    addresses: [10.0.2.15/24]
    routes: [{to: 0.0.0.0/0, via: 10.0.2.2}]
    nameservers: {addresses: [10.0.2.3], search: [example.internal]}
`

// elUserData asks for what a RHEL user would: the default user's key and
// password, password logins, an NTP server, the host name, a swap file.
func elUserData(key string) string {
	return `#cloud-config
hostname: ` + elHost + `
fqdn: ` + elHost + `.example.internal
users: [default]
ssh_authorized_keys:
  - ` + key + `
password: ` + elPassword + `
chpasswd: {expire: false}
ssh_pwauth: true
ntp:
  enabled: true
  servers: [10.0.2.2]
swap:
  filename: /swapfile
  size: 64M
`
}

// rhelDir unpacks the cached RHEL-shaped root, earlyinit's .deb installed
// into it (its postinst regenerates the dracut initramfs: mode distro).
func rhelDir(t *testing.T) string {
	t.Helper()
	t0 := time.Now()
	tarball, err := vm.RHELShapedRoot(debianCache())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.Untar(tarball, dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("RHEL-shaped root %s in %s", filepath.Base(tarball), time.Since(t0).Round(time.Millisecond))
	installDeb(t, dir)
	return dir
}

// rhelDisk labels dir with its own policy and makes it the XFS root of a
// GPT disk, the volume bigger than the image.
func rhelDisk(t *testing.T, dir string) string {
	t.Helper()
	if err := vm.LabelRoot(dir); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(t.TempDir(), "disk.img")
	if err := vm.PartitionedDisk(img, vm.GPT, elPartMB, elDiskMB, "xfs", "root", dir, ""); err != nil {
		t.Fatal(err)
	}
	return img
}

// elBootFiles copies the root's kernel and initramfs out of the disk
// image (as the bootloader would read them from the root).
func elBootFiles(t *testing.T, img string) (kernel, initrd string) {
	t.Helper()
	tmp := t.TempDir()
	kernel, initrd = filepath.Join(tmp, "vmlinuz"), filepath.Join(tmp, "initrd.img")
	err := vm.MountPart(img, vm.GPT, "xfs", "", func(root, _ string) error {
		ks, _ := filepath.Glob(filepath.Join(root, "boot", "vmlinuz-*"))
		if len(ks) != 1 {
			t.Fatalf("kernels in the image: %q", ks)
		}
		kver := strings.TrimPrefix(filepath.Base(ks[0]), "vmlinuz-")
		if err := copyFile(ks[0], kernel); err != nil {
			return err
		}
		return copyFile(filepath.Join(root, "boot", "initrd.img-"+kver), initrd)
	})
	if err != nil {
		t.Fatal(err)
	}
	return kernel, initrd
}

// startEL boots the image with its own kernel and initramfs, SELinux on
// (enforcing or permissive), one NIC on QEMU's user network with sshd
// forwarded.
func startEL(t *testing.T, img, seed string, enforcing bool) *guest {
	t.Helper()
	k, i := elBootFiles(t, img)
	mode := "enforcing=0"
	if enforcing {
		mode = "enforcing=1"
	}
	return startGuest(t, vm.Config{Kernel: k, Initrd: i,
		Append: "root=LABEL=root ro security=selinux selinux=1 " + mode + " earlyinit.timeout=30",
		Disks:  []vm.Disk{{Path: img}, {Path: seed, If: "ide-cd"}}, RNG: true, MemoryMB: 1536, Timeout: 15 * time.Minute}, elMAC)
}

// checkEL checks, logged in as cloud-user with its key and its password,
// what the user-data and the network config asked for, as a user sees
// it: sudo through wheel, the host name, NetworkManager's device
// connected with the static address, route and DNS, chrony's source, the
// root grown, the swap file on, sshd taking passwords, SELinux in the mode
// asked. The commands go in few logins (each costs seconds under TCG),
// their outputs in sections.
func checkEL(t *testing.T, g *guest, key, enforce string) vm.SSH {
	t.Helper()
	byKey := g.login(vm.RHELDefaultUser, key, "")
	g.waitSSH(byKey, 12*time.Minute)
	byPassword := g.login(vm.RHELDefaultUser, "", elPassword)
	if got := strings.TrimSpace(g.run(byPassword, "id -un")); got != vm.RHELDefaultUser {
		t.Errorf("password login: id -un = %q", got)
	}
	out := sections(g.run(byKey, `for c in "id -nG" "hostname" "nmcli -t -f DEVICE,STATE device" "nmcli -t -g IP4.ADDRESS,IP4.GATEWAY,IP4.DNS device show lan0" "chronyc -n sources" "df -B1 --output=size,fstype /" "/usr/sbin/swapon --show=NAME --noheadings" "/usr/sbin/getenforce" "sudo -n /usr/sbin/sshd -T"; do echo "=== $c"; $c 2>&1; done`))
	if !strings.Contains(" "+out["id -nG"]+" ", " wheel ") {
		t.Errorf("%s is not in wheel: %s", vm.RHELDefaultUser, out["id -nG"])
	}
	if got := strings.TrimSpace(out["hostname"]); got != elHost {
		t.Errorf("hostname = %q, want %s", got, elHost)
	}
	if dev := out["nmcli -t -f DEVICE,STATE device"]; !strings.Contains(dev, "lan0:connected\n") {
		t.Errorf("nmcli device: lan0 not connected:\n%s", dev)
	}
	show := out["nmcli -t -g IP4.ADDRESS,IP4.GATEWAY,IP4.DNS device show lan0"]
	for _, want := range []string{"10.0.2.15/24", "10.0.2.2", "10.0.2.3"} {
		if !strings.Contains(show, want) {
			t.Errorf("nmcli device show lan0 lacks %s:\n%s", want, show)
		}
	}
	if src := out["chronyc -n sources"]; !strings.Contains(src, "10.0.2.2") {
		t.Errorf("chronyc sources lacks 10.0.2.2:\n%s", src)
	}
	lines := strings.Split(strings.TrimSpace(out["df -B1 --output=size,fstype /"]), "\n")
	df := strings.Fields(lines[len(lines)-1])
	if size, _ := strconv.ParseInt(df[0], 10, 64); len(df) != 2 || df[1] != "xfs" || size < (elDiskMB-200)<<20 {
		t.Errorf("df /: %q, want xfs grown to about %d MiB", df, elDiskMB)
	}
	if sw := strings.TrimSpace(out["/usr/sbin/swapon --show=NAME --noheadings"]); sw != "/swapfile" {
		t.Errorf("swapon --show: %q, want /swapfile", sw)
	}
	if !strings.Contains(out["sudo -n /usr/sbin/sshd -T"], "\npasswordauthentication yes\n") {
		t.Errorf("sshd -T does not say passwordauthentication yes:\n%s", out["sudo -n /usr/sbin/sshd -T"])
	}
	if got := strings.TrimSpace(out["/usr/sbin/getenforce"]); got != enforce {
		t.Errorf("getenforce = %q, want %s", got, enforce)
	}
	// The host keys a client gets are the guest's: RSA too, since this
	// sshd_config names it in a HostKey line.
	served := hostKeysServed(t, g.port)
	for _, typ := range []string{"rsa", "ecdsa", "ed25519"} {
		file := strings.Fields(g.run(byKey, "cat /etc/ssh/ssh_host_"+typ+"_key.pub"))
		if len(file) < 2 || served[file[0]] != file[1] {
			t.Errorf("%s: sshd serves %q, the guest's file has %q", typ, served, file)
		}
	}
	return byKey
}

// sections splits the output of commands run after "=== CMD" lines into
// CMD -> output.
func sections(s string) map[string]string {
	m := map[string]string{}
	for _, part := range strings.Split("\n"+s, "\n=== ")[1:] {
		cmd, out, _ := strings.Cut(part, "\n")
		m[cmd] = out + "\n"
	}
	return m
}

// earlyinitPaths are the paths earlyinit writes in this image (the
// initramfs and the late stages), and earlyinitNames their last parts (an
// AVC record names a file by its last part when it has no path).
var (
	earlyinitPaths = []string{"/etc/hostname", "/etc/hosts", "/etc/NetworkManager/system-connections/", "/var/lib/earlyinit", "/run/earlyinit",
		"/var/lib/cloud", "/run/cloud-init", "/etc/ssh/sshd_config", "/etc/sudoers.d/", "/etc/chrony/chrony.conf", "/etc/cloud/cloud.cfg.d/",
		"/etc/systemd/network/", "/etc/systemd/system/earlyinit", "/run/systemd/system/", "/swapfile", "/etc/fstab", "/home/", "/etc/shadow", "/etc/passwd", "/etc/group"}
	earlyinitNames = []string{"hostname", "hosts", "cloud-init-lan0.nmconnection", "instance-id", "sshd_config", "00-earlyinit.conf", "90-earlyinit-users",
		"chrony.conf", "authorized_keys", "swapfile", "fstab", "shadow", "passwd", "group", "earlyinit", "earlyinit.log", "earlyinit-output.log"}
	avcField = regexp.MustCompile(`\b(name|path|comm)="([^"]*)"`)
)

// avcDenials returns the kernel log's AVC denials of this boot, and those
// that involve a file earlyinit writes (or earlyinit itself).
func avcDenials(t *testing.T, g *guest, s vm.SSH) (all, ours []string) {
	t.Helper()
	for _, l := range strings.Split(g.run(s, "sudo -n journalctl -k -b -o cat --no-pager | grep 'avc:  denied' || true"), "\n") {
		if l = strings.TrimSpace(l); l == "" {
			continue
		}
		all = append(all, l)
		if deniedOurs(l) {
			ours = append(ours, l)
		}
	}
	return all, ours
}

// deniedOurs tells whether an AVC denial names a file earlyinit writes,
// or was earlyinit's own.
func deniedOurs(l string) bool {
	for _, m := range avcField.FindAllStringSubmatch(l, -1) {
		switch m[1] {
		case "comm":
			if m[2] == "earlyinit" {
				return true
			}
		case "path":
			for _, p := range earlyinitPaths {
				if m[2] == p || strings.HasPrefix(m[2], p) {
					return true
				}
			}
		case "name":
			if slices.Contains(earlyinitNames, m[2]) {
				return true
			}
		}
	}
	return false
}

// TestRHELShaped boots the RHEL-shaped image (EL8: sshd_config without
// Include, PasswordAuthentication no) three ways:
//   - mode distro (dracut runs earlyinit), SELinux permissive: everything
//     the user-data asked, seen over SSH, and no AVC denial involves a
//     file earlyinit wrote; then `earlyinit setup own` over SSH;
//   - mode own (earlyinit's initramfs), SELinux enforcing: the same again,
//     on the same instance;
//
// and a copy in EL9's shape (Include, and an earlier cloud-init's
// 50-cloud-init.conf saying PasswordAuthentication no), enforcing, mode
// distro: ssh_pwauth: true still wins.
func TestRHELShaped(t *testing.T) {
	parallel(t, 11*time.Minute) // el8 (two boots) then el9
	dir := rhelDir(t)
	key, pub, err := vm.KeyPair(t.TempDir(), "el@test")
	if err != nil {
		t.Fatal(err)
	}
	seed := seedISO(t, "cidata", map[string]string{
		"meta-data":      "instance-id: iid-el-1\n",
		"user-data":      elUserData(pub),
		"network-config": elNetwork,
	})
	el8 := rhelDisk(t, dir)
	// EL9: sshd_config includes sshd_config.d first, where an earlier
	// cloud-init left 50-cloud-init.conf saying no.
	sshd, err := os.ReadFile(filepath.Join(dir, "etc/ssh/sshd_config"))
	if err != nil {
		t.Fatal(err)
	}
	if err := vm.WriteTree(dir, map[string]string{
		"etc/ssh/sshd_config":                      "Include /etc/ssh/sshd_config.d/*.conf\n" + strings.Replace(string(sshd), "PasswordAuthentication no\n", "", 1),
		"etc/ssh/sshd_config.d/50-cloud-init.conf": "PasswordAuthentication no\n",
	}); err != nil {
		t.Fatal(err)
	}
	el9 := rhelDisk(t, dir)

	t.Run("el8", func(t *testing.T) {
		g := startEL(t, el8, seed, false)
		s := checkEL(t, g, key, "Permissive")
		all, ours := avcDenials(t, g, s)
		t.Logf("%d AVC denials in the permissive boot", len(all))
		for _, l := range ours {
			t.Errorf("AVC denial on a file earlyinit writes: %s", l)
		}
		// As a user would, over SSH; gzip (in Go: the image has no lz4)
		// in the image's initramfs.conf keeps the build short under TCG
		// (zstd -19 takes minutes there).
		ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
		out, err := s.Run(ctx, "sudo -n sh -c \"sed -i 's/^COMPRESS=.*/COMPRESS=gzip/' /etc/earlyinit/initramfs.conf && earlyinit setup own\" 2>&1 && earlyinit setup")
		cancel()
		if err != nil || !strings.Contains(out, "own") {
			t.Fatalf("earlyinit setup own: %v\n%s", err, out)
		}
		g.powerOff(s)

		g = startEL(t, el8, seed, true)
		s = checkEL(t, g, key, "Enforcing")
		if con := g.m.Console(); !strings.Contains(con, "earlyinit") || !strings.Contains(con, "starting as PID 1") {
			t.Errorf("the second boot did not run earlyinit's own initramfs")
		}
		g.powerOff(s)
	})
	t.Run("el9", func(t *testing.T) {
		g := startEL(t, el9, seed, true)
		s := checkEL(t, g, key, "Enforcing")
		if got := g.run(s, "cat /etc/ssh/sshd_config.d/50-cloud-init.conf"); got != "PasswordAuthentication no\n" {
			t.Errorf("50-cloud-init.conf was changed: %q", got)
		}
		g.powerOff(s)
	})
}
