//go:build qemu

package qemutests

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
	"github.com/earlyinit/earlyinit/internal/vm"
)

// Issue 16's Debian boot: a private cloud's user-data on a Debian root
// (DebianCloudConfigPackages) whose only network is the test's namespace.
// The namespace serves, over HTTPS on RouterIP with a certificate of a
// test CA, a flat apt repository of a package the test builds, signed by
// a key of its own. One boot applies ca_certs, apt, packages, ntp, locale,
// disk_setup, fs_setup and mounts, and everything is checked on the disks
// after power-off; a second boot, of a fresh copy of the same root, asks
// for package_update with no reachable mirror: one failure line, and the
// boot and the other modules go on.

const (
	ccMAC = "52:54:00:12:34:16"
	// ccAddr is the guest's static address, on the namespace's link.
	ccAddr = "10.77.0.60"
	// The package the repository serves and the file it installs.
	ccPkg         = "ei-e2e-marker"
	ccPkgFile     = "/usr/share/ei-e2e-marker/marker.txt"
	ccPkgContent  = "installed from the private mirror over https\n"
	ccNTPServer   = "192.0.2.123"
	ccLocale      = "de_DE.UTF-8"
	ccDataLabel   = "data"
	ccDeadMirror  = "http://" + vm.RouterIP + ":9/debian" // nothing listens there
	ccMountMarker = "/data/e2e-mounted.txt"
)

const ccNetwork = `version: 2
ethernets:
  nic0:
    match:
      macaddress: "` + ccMAC + `"
    set-name: lan0
    addresses: [` + ccAddr + `/24]
`

// ccUserData renders cloud-config from a map (yaml keeps the PEM and the
// armoured key exact).
func ccUserData(t *testing.T, cfg map[string]any) string {
	t.Helper()
	b, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ud := "#cloud-config\n" + string(b)
	t.Logf("user-data:\n%s", ud)
	return ud
}

// ccBoot boots a root image with the data disk and the NoCloud drive, on
// ns's link, until the guest powers itself off. A TCG boot of this root
// takes 1-2 minutes, locale-gen and apt under TCG a minute more.
func ccBoot(t *testing.T, ns *vm.NetNS, root, data, iid, userData string) *vm.Result {
	t.Helper()
	seed := seedISO(t, "cidata", map[string]string{
		"meta-data":      "instance-id: " + iid + "\nlocal-hostname: cc-host\n",
		"network-config": ccNetwork,
		"user-data":      userData,
	})
	res := boot(t, vm.Config{
		Append:   "root=LABEL=root rw console=ttyS0 panic=-1 earlyinit.timeout=30",
		Disks:    []vm.Disk{{Path: root}, {Path: data}, {Path: seed, If: "ide-cd"}},
		NICs:     []vm.NIC{{MAC: ccMAC, Netdev: "tap:" + ns.Tap}},
		Wrap:     ns.Wrap(),
		RNG:      true,
		MemoryMB: 1024,
		Timeout:  10 * time.Minute,
	})
	t.Logf("boot took %s (%s)", res.Duration.Round(time.Second), res.Accel)
	return res
}

// blankDisk makes an empty (sparse) disk of sizeMB.
func blankDisk(t *testing.T, sizeMB int) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "data.img")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, int64(sizeMB)<<20); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCloudConfigDebian is issue 16's Debian test (see above). Run it
// with -run TestCloudConfigDebian and -timeout 40m (the first run builds
// the root, a few minutes, then the two boots, one after the other).
func TestCloudConfigDebian(t *testing.T) {
	parallel(t, 3*time.Minute) // two Debian boots
	t0 := time.Now()
	tarball, err := vm.DebianRootWith(debianCache(), vm.DebianCloudConfigPackages())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "root")
	if err := vm.Untar(tarball, dir); err != nil {
		t.Fatal(err)
	}
	t.Logf("root %s in %s", filepath.Base(tarball), time.Since(t0).Round(time.Millisecond))
	// The image lists no public mirror, as a private cloud's image does:
	// the guest could not reach one, and apt-get update would fail on it.
	// The recorder (debian_test.go) powers off boots without power_state.
	if err := vm.WriteTree(dir, map[string]string{
		"etc/apt/sources.list": "# earlyinit e2e: no public mirror; user-data adds the private one\n",
	}); err != nil {
		t.Fatal(err)
	}
	withRecorder(t, dir)
	root := filepath.Join(t.TempDir(), "root.img")
	failRoot := filepath.Join(t.TempDir(), "fail.img")
	for _, img := range []string{root, failRoot} {
		if err := vm.Ext4(img, dir, "root", "", 1536); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("applied", func(t *testing.T) {
		testCloudConfigApplied(t, root)
	})
	t.Run("no-mirror", func(t *testing.T) {
		testCloudConfigNoMirror(t, failRoot)
	})
}

func testCloudConfigApplied(t *testing.T, root string) {
	defer dumpLogs(t, root)
	// The package, in a repository served over HTTPS with a test CA's
	// certificate for RouterIP.
	deb, err := vm.BuildDeb(t.TempDir(), vm.Deb{Name: ccPkg, Version: "1.0", Description: "earlyinit e2e marker package",
		Files: map[string]string{ccPkgFile: ccPkgContent}})
	if err != nil {
		t.Fatal(err)
	}
	repo, err := vm.NewAptRepo(filepath.Join(t.TempDir(), "repo"), deb)
	if err != nil {
		t.Fatal(err)
	}
	ca := httpgettest.NewCA(t, "earlyinit e2e private cloud CA")
	ns := metadataNS(t, false, nil)
	cert := ca.Issue(t, httpgettest.Leaf{DNSNames: []string{}, IPs: []net.IP{net.ParseIP(vm.RouterIP)}})
	if err := ns.ServeTLS(vm.RouterIP+":443", cert, repo.Handler()); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("repository requests: %v", repo.Requests())
		}
	}()
	data := blankDisk(t, 128)

	ud := ccUserData(t, map[string]any{
		// remove_defaults: the bundle is the test's CA alone, and
		// update-ca-certificates has one certificate to hash instead of
		// Debian's 140 (a minute under TCG).
		"ca_certs": map[string]any{"remove_defaults": true, "trusted": []any{string(ca.PEM)}},
		"apt": map[string]any{"sources": map[string]any{
			"e2e-mirror": map[string]any{
				"source": "deb [signed-by=$KEY_FILE] https://" + vm.RouterIP + "/ ./",
				"key":    repo.PublicKey,
			},
		}},
		"packages": []any{ccPkg},
		"ntp":      map[string]any{"servers": []any{ccNTPServer}},
		"locale":   ccLocale,
		"disk_setup": map[string]any{
			"/dev/vdb": map[string]any{"table_type": "mbr", "layout": true, "overwrite": false},
		},
		"fs_setup": []any{
			map[string]any{"label": ccDataLabel, "filesystem": "ext4", "device": "/dev/vdb", "partition": "auto"},
		},
		// The disk by its name, as cloud-init's examples write it:
		// vdb has a partition now, so /dev/vdb1 is what is mounted
		// (cc_mounts' sanitize_devname).
		"mounts": []any{[]any{"vdb", "/data"}},
		"runcmd": []any{
			// What is mounted on /data, written there; the locales
			// the guest has.
			"grep ' /data ' /proc/mounts > " + ccMountMarker,
			"locale -a > /var/log/e2e-locales.txt",
		},
		"power_state": map[string]any{"mode": "poweroff"},
	})
	poweredOffByPowerState(t, ccBoot(t, ns, root, data, "iid-cc-1", ud))

	// The runner: each module ran, none failed.
	log := catRoot(t, root, "/var/log/earlyinit.log")
	for _, m := range []string{"ca_certs", "apt_configure", "package_update_upgrade_install", "ntp", "locale", "disk_setup", "mounts", "runcmd", "scripts_user"} {
		if !regexp.MustCompile(`(?m)module ` + m + `: ok in `).MatchString(log) {
			t.Errorf("earlyinit.log does not say module %s ran ok", m)
		}
	}
	for _, bad := range []string{"ERROR", "FAILED", "PANIC"} {
		if strings.Contains(log, bad) {
			t.Errorf("earlyinit.log has %s lines", bad)
		}
	}

	// ca_certs: the CA is the bundle apt's https reads, the defaults
	// gone from it and from ca-certificates.conf.
	pem := strings.TrimSpace(string(ca.PEM))
	bundle := catRoot(t, root, "/etc/ssl/certs/ca-certificates.crt")
	mustContain(t, "/etc/ssl/certs/ca-certificates.crt", bundle, pem)
	if n := strings.Count(bundle, "-----BEGIN CERTIFICATE-----"); n != 1 {
		t.Errorf("/etc/ssl/certs/ca-certificates.crt has %d certificates, want the test's CA alone (remove_defaults)", n)
	}
	wantFile(t, root, "/usr/share/ca-certificates/cloud-init-ca-certs.crt", string(ca.PEM))
	wantFile(t, root, "/etc/ca-certificates.conf", "cloud-init-ca-certs.crt\n")

	// apt: the source with its key, and the package installed from it,
	// downloaded once over https.
	wantFile(t, root, "/etc/apt/sources.list.d/e2e-mirror.list",
		"deb [signed-by=/etc/apt/cloud-init.gpg.d/e2e-mirror.gpg] https://"+vm.RouterIP+"/ ./\n")
	if _, err := vm.Stat(root, "/etc/apt/cloud-init.gpg.d/e2e-mirror.gpg"); err != nil {
		t.Errorf("the source's key: %v", err)
	}
	wantFile(t, root, ccPkgFile, ccPkgContent)
	if st := dpkgStatus(t, root, ccPkg); st["Status"] != "install ok installed" || st["Version"] != "1.0" {
		t.Errorf("dpkg status of %s: %q %q, want install ok installed, 1.0", ccPkg, st["Status"], st["Version"])
	}
	if n := repo.Served("/" + filepath.Base(deb)); n != 1 {
		t.Errorf("the repository served the .deb %d times, want 1", n)
	}
	if n := repo.Served("/InRelease"); n < 1 {
		t.Errorf("the repository never served InRelease")
	}

	// ntp: systemd-timesyncd (the client the root has) gets the server.
	ntpConf := catRoot(t, root, "/etc/systemd/timesyncd.conf.d/cloud-init.conf")
	if !regexp.MustCompile(`(?m)^NTP=` + regexp.QuoteMeta(ccNTPServer) + `\s*$`).MatchString(ntpConf) {
		t.Errorf("timesyncd's cloud-init.conf does not name %s:\n%s", ccNTPServer, ntpConf)
	}

	// locale: generated, and the system's.
	if !regexp.MustCompile(`(?m)^LANG=` + regexp.QuoteMeta(ccLocale) + `$`).MatchString(catRoot(t, root, "/etc/default/locale")) {
		t.Errorf("/etc/default/locale does not set LANG=%s:\n%s", ccLocale, catRoot(t, root, "/etc/default/locale"))
	}
	if !regexp.MustCompile(`(?m)^de_DE\.UTF-8 UTF-8$`).MatchString(catRoot(t, root, "/etc/locale.gen")) {
		t.Errorf("/etc/locale.gen does not enable de_DE.UTF-8")
	}
	if !regexp.MustCompile(`(?m)^de_DE\.utf8$`).MatchString(catRoot(t, root, "/var/log/e2e-locales.txt")) {
		t.Errorf("locale -a in the guest does not list de_DE.utf8:\n%s", catRoot(t, root, "/var/log/e2e-locales.txt"))
	}

	// disk_setup, fs_setup, mounts: one MBR partition with an ext4 file
	// system labelled data, in fstab as /dev/vdb1 (mounts named the
	// disk), mounted on /data in the guest.
	part, err := vm.Partition(data, vm.MBR)
	if err != nil {
		t.Fatalf("the data disk: %v", err)
	}
	if !part.Verified(vm.MBR) {
		t.Errorf("the data disk's table does not verify:\n%s", part.Verify)
	}
	off := part.Start * 512
	probe := blkidAt(t, data, off)
	if probe["TYPE"] != "ext4" || probe["LABEL"] != ccDataLabel {
		t.Errorf("blkid of the data partition: TYPE=%q LABEL=%q, want ext4 %q", probe["TYPE"], probe["LABEL"], ccDataLabel)
	}
	fstab := catRoot(t, root, "/etc/fstab")
	if !regexp.MustCompile(`(?m)^/dev/vdb1\s+/data\s+auto\s+\S*nofail\S*\s+0\s+2$`).MatchString(fstab) ||
		!strings.Contains(fstab, "comment=earlyinit") {
		t.Errorf("/etc/fstab lacks the data mount:\n%s", fstab)
	}
	mustContain(t, "/etc/fstab", fstab, "LABEL=root / ext4 defaults 0 1\n")
	marker, err := vm.Cat(data+"?offset="+strconv.FormatInt(off, 10), "/"+filepath.Base(ccMountMarker))
	if err != nil || !regexp.MustCompile(`^/dev/vdb1 /data ext4 `).MatchString(marker) {
		t.Errorf("what runcmd saw mounted on /data (%v): %q, want /dev/vdb1 ext4", err, marker)
	}
}

func testCloudConfigNoMirror(t *testing.T, root string) {
	defer dumpLogs(t, root)
	ns := metadataNS(t, false, nil)
	data := blankDisk(t, 16)
	ud := ccUserData(t, map[string]any{
		// sources.list names a mirror nothing serves.
		"apt": map[string]any{
			"preserve_sources_list": false,
			"primary":               []any{map[string]any{"arches": []any{"default"}, "uri": ccDeadMirror}},
		},
		"package_update": true,
		"write_files": []any{
			map[string]any{"path": "/etc/e2e/boot.txt", "content": "written at boot\n"},
			// write_files_deferred runs after the package module.
			map[string]any{"path": "/etc/e2e/deferred.txt", "content": "written after the packages\n", "defer": true},
		},
		"bootcmd": []any{`echo "bootcmd ran" >> /var/log/e2e-bootcmd.log`},
		"runcmd":  []any{`echo "runcmd ran" >> /var/log/e2e-runcmd.log`},
	})
	res := ccBoot(t, ns, root, data, "iid-cc-fail", ud)
	// No power_state: the recorder saved earlyinit status and the state of
	// multi-user.target once the final stage was over, and powered off.
	st, rec := recorded(t, root, res)
	mustContain(t, "recorder", rec, "status exit: 1\n")
	if st.Status != "error" || len(st.Errors) != 1 || !strings.Contains(st.Errors[0], "package_update_upgrade_install") {
		t.Errorf("earlyinit status = %q, errors %q; want error, one naming package_update_upgrade_install", st.Status, st.Errors)
	}

	mustContain(t, "/etc/apt/sources.list", catRoot(t, root, "/etc/apt/sources.list"), "deb "+ccDeadMirror+" bookworm main\n")
	// One failure line, naming the module, the command and the mirror.
	log := catRoot(t, root, "/var/log/earlyinit.log")
	failed := regexp.MustCompile(`(?m)^.*FAILED.*$`).FindAllString(log, -1)
	if len(failed) != 1 {
		t.Errorf("earlyinit.log has %d FAILED lines, want 1:\n%s", len(failed), strings.Join(failed, "\n"))
	}
	lineRE := regexp.MustCompile(`(?m)module package_update_upgrade_install: FAILED after [0-9.]+s: package update failed: run apt-get .*\bupdate: .*Failed to fetch ` +
		regexp.QuoteMeta(ccDeadMirror) + `/`)
	if !lineRE.MatchString(log) {
		t.Errorf("earlyinit.log has no failure line naming the module, apt-get update and %s:\n%s", ccDeadMirror, strings.Join(failed, "\n"))
	}
	for _, m := range []string{"bootcmd", "write_files", "apt_configure", "runcmd", "write_files_deferred", "scripts_user"} {
		if !regexp.MustCompile(`(?m)module ` + m + `: ok in `).MatchString(log) {
			t.Errorf("earlyinit.log does not say module %s ran ok", m)
		}
	}
	// The modules before and after it ran.
	wantFile(t, root, "/etc/e2e/boot.txt", "written at boot\n")
	wantFile(t, root, "/etc/e2e/deferred.txt", "written after the packages\n")
	wantFile(t, root, "/var/log/e2e-runcmd.log", "runcmd ran\n")
	wantFile(t, root, "/var/log/e2e-bootcmd.log", "bootcmd ran\n")
	wantFile(t, root, "/etc/hostname", "cc-host\n")
}

// dpkgStatus returns pkg's stanza of the root's dpkg status.
func dpkgStatus(t *testing.T, img, pkg string) map[string]string {
	t.Helper()
	st, err := vm.ControlStanzas(strings.NewReader(catRoot(t, img, "/var/lib/dpkg/status")))
	if err != nil {
		t.Fatalf("/var/lib/dpkg/status: %v", err)
	}
	for _, s := range st {
		if s["Package"] == pkg {
			return s
		}
	}
	t.Errorf("/var/lib/dpkg/status has no %s", pkg)
	return map[string]string{}
}

// blkidAt probes the file system at byte off of img (blkid -p).
func blkidAt(t *testing.T, img string, off int64) map[string]string {
	t.Helper()
	out, err := exec.Command("blkid", "-p", "-O", strconv.FormatInt(off, 10), "-o", "export", img).Output()
	if err != nil {
		t.Errorf("blkid -p -O %d %s: %v (make deps installs util-linux)", off, img, err)
		return map[string]string{}
	}
	kv := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			kv[k] = v
		}
	}
	return kv
}
