//go:build qemu

package qemutests

import (
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
	"github.com/earlyinit/earlyinit/internal/vm"
)

// The package tests install the .deb `make package` builds into Debian
// roots that boot their own kernel with their own initramfs, as images
// users upload do, and boot them: earlyinit inside the distribution's
// initramfs (initramfs-tools, dracut, a root on LVM), earlyinit's own
// initramfs made by the package's kernel hook, and the root after the
// package is removed.

// packageDeb returns the .deb make package left in build/.
func packageDeb(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	m, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Dir(file)), "build", "earlyinit_*_amd64.deb"))
	if len(m) == 0 {
		t.Fatal("no build/earlyinit_*_amd64.deb: run make package (make qemu-test does)")
	}
	sort.Slice(m, func(i, j int) bool { return modTime(m[i]).After(modTime(m[j])) })
	return m[0]
}

func modTime(p string) time.Time {
	fi, err := os.Stat(p)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// kernelRootDir unpacks the cached root with Debian's kernel: with
// initramfs-tools and the extra packages, or with dracut when dracut is
// set.
func kernelRootDir(t *testing.T, dracut bool, extra ...string) string {
	t.Helper()
	t0 := time.Now()
	var tarball string
	var err error
	if dracut {
		tarball, err = vm.DebianDracutRoot(debianCache())
	} else {
		tarball, err = vm.DebianRootOf(debianCache(), append(vm.DebianKernelPackages(), extra...))
	}
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.Untar(tarball, dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("root %s unpacked in %s", filepath.Base(tarball), time.Since(t0).Round(time.Millisecond))
	return dir
}

// chroot runs a command in dir and returns its output; a failure fails
// the test with the output.
func chroot(t *testing.T, dir string, argv ...string) string {
	t.Helper()
	out, err := vm.Chroot(dir, argv...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("chroot %s:\n%s", strings.Join(argv, " "), out)
	return out
}

// installDeb copies the .deb into dir and installs it with dpkg -i, as an
// image builder does: its postinst sets earlyinit up.
func installDeb(t *testing.T, dir string) string {
	t.Helper()
	deb := packageDeb(t)
	if err := copyFile(deb, filepath.Join(dir, "tmp/earlyinit.deb")); err != nil {
		t.Fatal(err)
	}
	out := chroot(t, dir, "dpkg", "-i", "/tmp/earlyinit.deb")
	os.Remove(filepath.Join(dir, "tmp/earlyinit.deb"))
	return out
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// rootKernel returns the root's only kernel release.
func rootKernel(t *testing.T, dir string) string {
	t.Helper()
	k, err := vm.InstalledKernels(dir)
	if err != nil || len(k) != 1 {
		t.Fatalf("kernels in the root: %v, %v; want one", k, err)
	}
	return k[0]
}

// initrdPath is the root's initramfs for kver, where Debian's bootloader
// looks.
func initrdPath(dir, kver string) string {
	return filepath.Join(dir, "boot", "initrd.img-"+kver)
}

// initrdList lists an initramfs's files (lsinitramfs, from this machine's
// initramfs-tools), sorted.
func initrdList(t *testing.T, img string) []string {
	t.Helper()
	out, err := exec.Command("lsinitramfs", img).Output()
	if err != nil {
		t.Fatalf("lsinitramfs %s: %v", img, err)
	}
	l := strings.Split(strings.TrimSpace(string(out)), "\n")
	sort.Strings(l)
	return l
}

func hasEntry(list []string, name string) bool {
	for _, l := range list {
		if l == name {
			return true
		}
	}
	return false
}

// bootOwnKernel boots the root image with the root's own kernel and
// initramfs (copied out of dir) until the guest powers itself off; its NIC
// is on ns's link, or QEMU's user network when ns is nil.
func bootOwnKernel(t *testing.T, ns *vm.NetNS, dir, img, seed, appendLine string) *vm.Result {
	t.Helper()
	kver := rootKernel(t, dir)
	tmp := t.TempDir()
	k, i := filepath.Join(tmp, "vmlinuz"), filepath.Join(tmp, "initrd.img")
	if err := copyFile(filepath.Join(dir, "boot", "vmlinuz-"+kver), k); err != nil {
		t.Fatal(err)
	}
	if err := copyFile(initrdPath(dir, kver), i); err != nil {
		t.Fatal(err)
	}
	disks := []vm.Disk{{Path: img}}
	if seed != "" {
		disks = append(disks, vm.Disk{Path: seed, If: "ide-cd"})
	}
	c := vm.Config{
		Kernel: k, Initrd: i,
		Append:   "console=ttyS0 panic=-1 earlyinit.timeout=30 " + appendLine,
		Disks:    disks,
		NICs:     []vm.NIC{{MAC: e2eMAC}},
		RNG:      true,
		MemoryMB: 1024,
		Timeout:  8 * time.Minute,
	}
	if ns != nil {
		c.NICs[0].Netdev, c.Wrap = "tap:"+ns.Tap, ns.Wrap()
	}
	res := boot(t, c)
	t.Logf("boot took %s", res.Duration.Round(time.Second))
	return res
}

// withRecorder adds the recorder unit (debian_test.go) that powers the
// guest off once multi-user.target is reached, for boots without
// power_state.
func withRecorder(t *testing.T, dir string) {
	t.Helper()
	if err := vm.WriteTree(dir, map[string]string{
		"etc/systemd/system/e2e-record.service": recordUnit,
		"usr/local/sbin/e2e-record":             recordScript,
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../e2e-record.service", filepath.Join(dir, "etc/systemd/system/multi-user.target.wants/e2e-record.service")); err != nil {
		t.Fatal(err)
	}
}

// wantProvisioned checks on the root image what the NoCloud drive of
// e2eSeed asked for: the host name, alice and her SSH key, the NIC
// renamed and addressed (as runcmd saw it), and no error in the runner's
// log.
func wantProvisioned(t *testing.T, img string) {
	t.Helper()
	defer dumpLogs(t, img)
	wantFile(t, img, "/etc/hostname", "e2e-host\n")
	_, uid, gid := passwdEntry(t, img, "alice")
	wantFile(t, img, "/home/alice/.ssh/authorized_keys", aliceKey+"\n")
	wantMode(t, img, "/home/alice/.ssh/authorized_keys", "0600")
	wantOwner(t, img, "/home/alice/.ssh/authorized_keys", uid, gid)
	rc := catRoot(t, img, "/var/log/e2e-runcmd.log")
	if !regexp.MustCompile(`(?m)^\d+: lan0\s+inet 192\.0\.2\.50/24 `).MatchString(rc) {
		t.Errorf("runcmd did not see lan0 with 192.0.2.50/24:\n%s", rc)
	}
	wantFile(t, img, "/var/lib/earlyinit/data/instance-id", "iid-pkg-1\n")
	if log := catRoot(t, img, "/var/log/earlyinit.log"); strings.Contains(log, "ERROR") {
		t.Errorf("earlyinit logged errors:\n%s", log)
	}
}

// TestPackageInitramfsTools: the .deb installed into a Debian root with
// initramfs-tools puts earlyinit into that root's own initramfs (its
// postinst regenerates it); the root's kernel and initramfs boot it, and
// earlyinit, run by the boot script after the root is mounted, provisions
// it from the NoCloud drive. Removing the package gives back the
// distribution's initramfs file for file, and the root boots with it
// without earlyinit.
func TestPackageInitramfsTools(t *testing.T) {
	parallel(t, 5*time.Minute) // two dpkg runs and two boots
	base := kernelRootDir(t, false)
	kver := rootKernel(t, base)
	before := initrdList(t, initrdPath(base, kver))
	if hasEntry(before, "usr/bin/earlyinit") || hasEntry(before, "bin/earlyinit") {
		t.Fatalf("the distribution's initramfs has earlyinit before the package is installed")
	}
	t.Run("provision", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "root")
		if err := os.Rename(base, dir); err != nil {
			t.Fatal(err)
		}
		out := installDeb(t, dir)
		mustContain(t, "dpkg -i", out, "update-initramfs")
		after := initrdList(t, initrdPath(dir, kver))
		// bookworm's initramfs merges /usr: /bin is a link to usr/bin.
		if !hasEntry(after, "usr/bin/earlyinit") && !hasEntry(after, "bin/earlyinit") {
			t.Errorf("the regenerated initramfs lacks bin/earlyinit")
		}
		if !hasEntry(after, "scripts/init-bottom/earlyinit") {
			t.Errorf("the regenerated initramfs lacks scripts/init-bottom/earlyinit")
		}
		if got := strings.TrimSpace(chroot(t, dir, "earlyinit", "setup")); got != "distro" {
			t.Errorf("earlyinit setup = %q after install, want distro", got)
		}
		img := filepath.Join(t.TempDir(), "root.img")
		if err := vm.Ext4(img, dir, "root", "", 2048); err != nil {
			t.Fatal(err)
		}
		seed := e2eSeed(t, "iid-pkg-1", e2eUserData(e2eRuncmd, "power_state:\n  mode: poweroff\n"))
		res := bootOwnKernel(t, nil, dir, img, seed, "root=LABEL=root ro")
		mustContain(t, "console", res.Console, "provisioning /root from the distribution's initramfs", "Run /init as init process")
		poweredOffByPowerState(t, res)
		wantProvisioned(t, img)
	})
	t.Run("remove", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "root")
		if err := vm.Untar(mustTarball(t, false), dir); err != nil {
			t.Fatal(err)
		}
		installDeb(t, dir)
		out := chroot(t, dir, "dpkg", "--purge", "earlyinit")
		mustContain(t, "dpkg --purge", out, "update-initramfs")
		after := initrdList(t, initrdPath(dir, kver))
		if d := listDiff(before, after); d != "" {
			t.Errorf("after removal the initramfs is not the distribution's:\n%s", d)
		}
		for _, p := range []string{"usr/bin/earlyinit", "etc/earlyinit/setup", "etc/kernel/postinst.d/zz-earlyinit", "usr/share/initramfs-tools/hooks/earlyinit"} {
			if _, err := os.Lstat(filepath.Join(dir, p)); err == nil {
				t.Errorf("%s left after dpkg --purge", p)
			}
		}
		withRecorder(t, dir)
		img := filepath.Join(t.TempDir(), "root.img")
		if err := vm.Ext4(img, dir, "root", "", 2048); err != nil {
			t.Fatal(err)
		}
		seed := seedISO(t, "cidata", nocloudSeed("iid-removed", "not-applied"))
		res := bootOwnKernel(t, nil, dir, img, seed, "root=LABEL=root ro")
		if !strings.Contains(res.Console, "E2E-RECORDED") {
			t.Fatalf("the root did not reach multi-user.target with its distribution's initramfs")
		}
		if strings.Contains(res.Console, "from the distribution's initramfs") {
			t.Errorf("earlyinit ran after the package was removed")
		}
		wantFile(t, img, "/etc/hostname", "debian\n")
	})
}

func mustTarball(t *testing.T, dracut bool) string {
	t.Helper()
	var p string
	var err error
	if dracut {
		p, err = vm.DebianDracutRoot(debianCache())
	} else {
		p, err = vm.DebianRootOf(debianCache(), vm.DebianKernelPackages())
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// listDiff says which names are in only one of two sorted lists.
func listDiff(a, b []string) string {
	in := func(l []string) map[string]bool {
		m := map[string]bool{}
		for _, x := range l {
			m[x] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var d []string
	for _, x := range a {
		if !mb[x] {
			d = append(d, "- "+x)
		}
	}
	for _, x := range b {
		if !ma[x] {
			d = append(d, "+ "+x)
		}
	}
	return strings.Join(d, "\n")
}

// TestPackageDracut is TestPackageInitramfsTools's provisioning boot with
// dracut as the root's initramfs generator: the package's dracut module
// runs earlyinit in dracut's pre-pivot hook on /sysroot.
func TestPackageDracut(t *testing.T) {
	parallel(t, 3*time.Minute) // dracut, one boot
	dir := kernelRootDir(t, true)
	kver := rootKernel(t, dir)
	if hasEntry(initrdList(t, initrdPath(dir, kver)), "usr/bin/earlyinit") {
		t.Fatalf("dracut's initramfs has earlyinit before the package is installed")
	}
	out := installDeb(t, dir)
	mustContain(t, "dpkg -i", out, "dracut")
	after := initrdList(t, initrdPath(dir, kver))
	if !hasEntry(after, "usr/bin/earlyinit") {
		t.Errorf("dracut's regenerated initramfs lacks usr/bin/earlyinit")
	}
	img := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(img, dir, "root", "", 2048); err != nil {
		t.Fatal(err)
	}
	seed := e2eSeed(t, "iid-pkg-1", e2eUserData(e2eRuncmd, "power_state:\n  mode: poweroff\n"))
	res := bootOwnKernel(t, nil, dir, img, seed, "root=LABEL=root ro")
	mustContain(t, "console", res.Console, "provisioning /sysroot from the distribution's initramfs")
	poweredOffByPowerState(t, res)
	wantProvisioned(t, img)
}

// TestPackageLVM: a root on an LVM logical volume, which only the
// distribution's initramfs can mount, is provisioned by earlyinit inside
// it; growpart leaves the volume's partition alone with one log line,
// though free space follows it.
func TestPackageLVM(t *testing.T) {
	parallel(t, 4*time.Minute) // an LVM disk, one boot
	dir := kernelRootDir(t, false)
	installDeb(t, dir)
	disk := filepath.Join(t.TempDir(), "lvm.img")
	const vg = "vgtest"
	lv, err := vm.LVMDisk(disk, 2200, 3000, 2048, vg, "root", dir)
	if err != nil {
		t.Fatal(err)
	}
	table, err := vm.TableHash(disk, vm.GPT)
	if err != nil {
		t.Fatal(err)
	}
	seed := e2eSeed(t, "iid-pkg-1", e2eUserData(e2eRuncmd, "power_state:\n  mode: poweroff\n"))
	res := bootOwnKernel(t, nil, dir, disk, seed, "root=/dev/mapper/"+vg+"-root ro")
	mustContain(t, "console", res.Console, "provisioning /root from the distribution's initramfs")
	poweredOffByPowerState(t, res)
	if h, err := vm.TableHash(disk, vm.GPT); err != nil || h != table {
		t.Errorf("the partition table changed (%v): growpart must leave LVM alone", err)
	}
	fs := filepath.Join(t.TempDir(), "lv.img")
	if err := lv.Extract(disk, fs); err != nil {
		t.Fatal(err)
	}
	wantProvisioned(t, fs)
	// One line, in the log the initramfs left (the console has each line
	// twice: earlyinit's and the kernel's echo of /dev/kmsg).
	log := catRoot(t, fs, "/var/log/earlyinit.log")
	if n := len(regexp.MustCompile(`(?m)growpart: .*$`).FindAllString(log, -1)); n != 1 ||
		!regexp.MustCompile(`growpart: skipped: /dev/dm-\d+ is a device-mapper device`).MatchString(log) {
		t.Errorf("growpart's lines about the LVM root, want one saying it skipped dm:\n%s", log)
	}
}

// TestPackageOwnInitramfs: with `earlyinit setup own` the package's
// Debian kernel hook builds earlyinit's own initramfs for the installed
// kernel inside the root, with the package's initramfs build (no TLS) and
// the kernel's modules, no Go toolchain; it boots the root and provisions
// it. The late stages run the package's /usr/bin/earlyinit, which has TLS:
// an #include over https, checked against the root's CA bundle, is
// fetched and run. The root has wireguard-tools and its kernel's modules:
// the wireguard module brings up wg0 with wg-quick. The postrm hook
// removes the initramfs with the kernel.
func TestPackageOwnInitramfs(t *testing.T) {
	parallel(t, 4*time.Minute) // the kernel hook, one boot
	dir := kernelRootDir(t, false, "wireguard-tools")
	kver := rootKernel(t, dir)
	installDeb(t, dir)
	chroot(t, dir, "earlyinit", "setup", "own", "--no-regenerate")
	if err := os.Remove(initrdPath(dir, kver)); err != nil {
		t.Fatal(err)
	}
	out := chroot(t, dir, "/etc/kernel/postinst.d/zz-earlyinit", kver, "/boot/vmlinuz-"+kver)
	// ROOTFS=auto: the root's fstab mounts / as ext4, so xfs and btrfs
	// stay out, and the image boots the ext4 root below.
	mustContain(t, "the kernel hook", out, ", init /usr/lib/earlyinit/earlyinit-initrd, ",
		"initramfs: root filesystem ext4 (/etc/fstab): xfs, btrfs left out")
	list := initrdList(t, initrdPath(dir, kver))
	if !hasEntry(list, "init") || hasEntry(list, "scripts/init-bottom/earlyinit") || !hasEntry(list, fmt.Sprintf("lib/modules/%s/modules.dep", kver)) {
		t.Errorf("the kernel hook's initramfs is not earlyinit's own for %s:\n%s", kver, strings.Join(list, "\n"))
	}
	mods := fmt.Sprintf("lib/modules/%s/kernel/fs/", kver)
	if !hasEntry(list, mods+"ext4/ext4.ko") || hasEntry(list, mods+"xfs/xfs.ko") || hasEntry(list, mods+"btrfs/btrfs.ko") {
		t.Errorf("the initramfs of an ext4 root, want ext4.ko and neither xfs.ko nor btrfs.ko:\n%s", strings.Join(list, "\n"))
	}

	// An https server on the guest's static subnet (e2eNetwork), its
	// CA in the root's bundle, serving the script the user-data includes.
	const server = "192.0.2.1"
	ca := httpgettest.NewCA(t, "earlyinit e2e package CA")
	ns := metadataNS(t, false, nil)
	if err := ns.AddLinkAddr(server + "/24"); err != nil {
		t.Fatal(err)
	}
	var fetched atomic.Int32
	script := "#!/bin/sh\necho included-over-https >> /var/log/e2e-include.log\n"
	if err := ns.ServeTLS(server+":443", ca.Issue(t, httpgettest.Leaf{IPs: []net.IP{net.ParseIP(server)}}),
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/part.sh" {
				http.NotFound(w, r)
				return
			}
			fetched.Add(1)
			io.WriteString(w, script)
		})); err != nil {
		t.Fatal(err)
	}
	if err := vm.WriteTree(dir, map[string]string{"etc/ssl/certs/ca-certificates.crt": string(ca.PEM)}); err != nil {
		t.Fatal(err)
	}
	// A WireGuard interface with a fresh key, no peers: wg-quick brings
	// it up listening on 51820; the readiness probe records that.
	wgKey, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	wgPriv := base64.StdEncoding.EncodeToString(wgKey.Bytes())
	wgConf := "[Interface]\nPrivateKey = " + wgPriv + "\nAddress = 10.9.0.2/24\nListenPort = 51820\n"
	wgCfg := "wireguard:\n  interfaces:\n    - name: wg0\n      config_path: /etc/wireguard/wg0.conf\n      content: |\n" +
		"        " + strings.ReplaceAll(strings.TrimSuffix(wgConf, "\n"), "\n", "\n        ") + "\n" +
		"  readinessprobe:\n    - wg show wg0 listen-port > /var/log/e2e-wg.txt\n"
	userData := "Content-Type: multipart/mixed; boundary=\"e2e\"\nMIME-Version: 1.0\n\n" +
		"--e2e\nContent-Type: text/cloud-config\n\n" + e2eUserData(e2eRuncmd, "power_state:\n  mode: poweroff\n"+wgCfg) +
		"\n--e2e\nContent-Type: text/x-include-url\n\nhttps://" + server + "/part.sh\n--e2e--\n"

	img := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(img, dir, "root", "", 2048); err != nil {
		t.Fatal(err)
	}
	seed := e2eSeed(t, "iid-pkg-1", userData)
	res := bootOwnKernel(t, ns, dir, img, seed, "root=LABEL=root ro")
	mustContain(t, "console", res.Console, "starting as PID 1")
	poweredOffByPowerState(t, res)
	wantProvisioned(t, img)
	log := catRoot(t, img, "/var/log/earlyinit.log")
	mustContain(t, "earlyinit.log", log, "late stages: systemd units earlyinit-boot.service and earlyinit-final.service (running /usr/bin/earlyinit)")
	if n := fetched.Load(); n != 1 {
		t.Errorf("the included URL was fetched %d times, want 1", n)
	}
	wantFile(t, img, "/var/log/e2e-include.log", "included-over-https\n")

	// wireguard: the file 0600, the unit enabled, the interface up, and
	// the key in no log.
	mustContain(t, "earlyinit.log", log, "module wireguard: ok in ")
	wantFile(t, img, "/etc/wireguard/wg0.conf", wgConf)
	wantMode(t, img, "/etc/wireguard/wg0.conf", "0600")
	wantFile(t, img, "/var/log/e2e-wg.txt", "51820\n")
	if st, err := vm.Stat(img, "/etc/systemd/system/multi-user.target.wants/wg-quick@wg0.service"); err != nil || !strings.Contains(st, "Type: symlink") {
		t.Errorf("wg-quick@wg0 is not enabled: %v %s", err, st)
	}
	for what, s := range map[string]string{"console": res.Console, "earlyinit.log": log} {
		if strings.Contains(s, wgPriv) {
			t.Errorf("the %s shows the WireGuard private key", what)
		}
	}

	chroot(t, dir, "/etc/kernel/postrm.d/zz-earlyinit", kver, "/boot/vmlinuz-"+kver)
	if _, err := os.Stat(initrdPath(dir, kver)); err == nil {
		t.Errorf("the postrm hook left %s", initrdPath(dir, kver))
	}
}
