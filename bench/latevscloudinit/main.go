// Command latevscloudinit boots one Debian bookworm root (with cloud-init
// 22.4.2 installed) under QEMU with one NoCloud drive, two ways, and prints
// how long each took:
//
//	A) Debian's way: Debian's initramfs-tools image, cloud-init enabled;
//	B) earlyinit: build/initramfs.img, /etc/cloud/cloud-init.disabled,
//	   and this tree's earlyinit as /usr/bin/earlyinit (where the package
//	   puts it: the late stages run it, not the initramfs build's copy)
//	   (-initrd again for C, D...: other earlyinit images, e.g. before
//	   and after a change);
//	bare (-until provisioned): Debian's image, nothing to provision and
//	   no datasource tool at all: user alice, her key and sudo, and the
//	   host keys baked into the image, cloud-init disabled and its
//	   generator masked; what the same machine takes to boot to sshd
//	   without any tool, so each tool's overhead is its time less bare's.
//
// -until poweroff (the default) times the whole user-data, power_state
// included, to the VM's power-off. -until provisioned times, inside the
// guest, the kernel's start to the machine being provisioned (user
// created, key installed, sshd listening; see provisioned.go), and sets
// each tool's own account of its stages beside it.
//
// Figures, not assertions: a run that did not apply the user-data is
// reported as such, and the program exits 0 unless it could not run at all.
// bench/late-vs-cloudinit.sh runs it.
package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/vm"
)

const (
	mac      = "52:54:00:12:34:01"
	aliceKey = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGuJbD/mAw1Xx0vV+jXz/cD7eOGBx5CYI2UBBLPW8qHq alice@bench"
	binData  = "\x00\x01binary\xff\xfe bench\n"
	// The same command line for both, but for earlyinit's own knob.
	appendCommon = "root=LABEL=root rw console=ttyS0 panic=-1"
)

// The NoCloud drive: the Debian e2e test's user-data, with runcmd also
// noting the guest's uptime when it ran, and power_state (userData).
const networkConfig = `version: 2
ethernets:
  nic0:
    match:
      macaddress: "` + mac + `"
    set-name: lan0
    addresses: [192.0.2.50/24]
`

var userDataBase = `#cloud-config
users:
  - default
  - name: alice
    gecos: Alice
    groups: [sudo]
    shell: /bin/bash
    sudo: "ALL=(ALL) NOPASSWD:ALL"
    ssh_authorized_keys:
      - ` + aliceKey + `
write_files:
  - path: /etc/e2e/plain.txt
    content: |
      plain text from user-data
    owner: root:root
    permissions: '0640'
  - path: /etc/e2e/b64.bin
    encoding: b64
    content: ` + base64.StdEncoding.EncodeToString([]byte(binData)) + `
    owner: alice:alice
    permissions: '0600'
    defer: true
bootcmd:
  - echo "bootcmd $INSTANCE_ID $(date -u +%s)" >> /var/log/e2e-bootcmd.log
runcmd:
  - echo "runcmd ran" >> /var/log/e2e-runcmd.log
  - ip -o addr show lan0 >> /var/log/e2e-runcmd.log
  - runuser -u alice -- sudo -n id -u > /var/log/e2e-sudo.log 2>&1
  - cut -d' ' -f1 /proc/uptime > /var/log/e2e-runcmd-uptime
`

// userData is the user-data of both tools: with power_state when the
// run ends at power-off; without when the bench powers the VM off
// itself, after the tool's last stage (-until provisioned).
func userData(powerState bool) string {
	if powerState {
		return userDataBase + "power_state:\n  mode: poweroff\n"
	}
	return userDataBase
}

// saveUnit keeps what earlyinit leaves in /run (a tmpfs) for `earlyinit
// analyze`: at shutdown, after the final stages stopped, it copies the
// boot record and status to /var/log/bench. It is in both images (it
// finds nothing to copy under cloud-init) and costs nothing at boot.
const saveUnit = `[Unit]
Description=bench: keep earlyinit's boot record at shutdown
After=local-fs.target
Before=earlyinit-final.service cloud-final.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/true
ExecStop=/bin/sh -c 'mkdir -p /var/log/bench; cp /run/earlyinit/boot.json /run/earlyinit/status.json /var/log/bench/ 2>/dev/null; sync; true'

[Install]
WantedBy=multi-user.target
`

type variant struct {
	name     string
	initrd   string
	append   string
	disabled bool // /etc/cloud/cloud-init.disabled: earlyinit's and bare's
	bare     bool // no tool: the user and keys baked in (bakeBare)
	img      string
}

// earlyinit tells whether v is an earlyinit variant (B, C...).
func (v *variant) earlyinit() bool { return v.disabled && !v.bare }

// bareName is the bare variant's name.
const bareName = "bare"

type result struct {
	v         *variant
	n         int
	wall      time.Duration
	handover  float64 // kernel timestamp of the first systemd[1] line
	runcmd    float64 // guest uptime when runcmd ran
	powered   bool    // "reboot: Power down" on the console
	missing   []string
	err       error
	analyze   string
	img       string  // the run's disk, left in the work directory
	busy      bool    // another QEMU, or other work, ran on the host during the boot
	othersCPU float64 // CPU seconds the host spent on other processes meanwhile
	// -until provisioned (provisioned.go)
	prov *provisioned
}

// initrdList is -initrd, once per earlyinit image: PATH or LABEL=PATH.
type initrdList []string

func (l *initrdList) String() string     { return strings.Join(*l, ",") }
func (l *initrdList) Set(s string) error { *l = append(*l, s); return nil }

// earlyinitVariants are the earlyinit images to boot, named B, C...
func earlyinitVariants(initrds []string) ([]*variant, error) {
	var vs []*variant
	for i, x := range initrds {
		label, path, ok := strings.Cut(x, "=")
		if !ok {
			label, path = "", x
		}
		if path == "" || strings.ContainsAny(label, " \t") {
			return nil, fmt.Errorf("-initrd %q: want PATH or LABEL=PATH, a label without blanks", x)
		}
		name := fmt.Sprintf("%c earlyinit", 'B'+i)
		if label != "" {
			name += " " + label
		}
		vs = append(vs, &variant{name: name, initrd: path, append: appendCommon + " earlyinit.timeout=30", disabled: true})
	}
	return vs, nil
}

func (r *result) applied() bool { return r.err == nil && r.powered && len(r.missing) == 0 }

// counted tells whether the run goes into the means: applied, on a host
// where no other VM ran meanwhile.
func (r *result) counted() bool { return r.applied() && !r.busy }

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "latevscloudinit:", err)
		os.Exit(1)
	}
}

func run() error {
	kver := flag.String("kver", "", "kernel version (default: the newest /boot/vmlinuz-*)")
	var initrds initrdList
	flag.Var(&initrds, "initrd", "earlyinit's initramfs, PATH or LABEL=PATH; again for another earlyinit variant (default build/initramfs.img)")
	until := flag.String("until", "poweroff", "poweroff: time the whole user-data to power-off; provisioned: time to user, key and sshd, and each tool's own account")
	withCloudInit := flag.Bool("cloudinit", true, "boot the cloud-init variant (A) too")
	smp := flag.Int("smp", 1, "vCPUs of each VM (1 to 8)")
	bin := flag.String("earlyinit", "build/earlyinit", "earlyinit binary with the analyze verb")
	cache := flag.String("cache", vm.CacheDir(), "Debian root cache")
	out := flag.String("out", "build/bench-late", "work directory (images, consoles)")
	runs := flag.Int("runs", 0, "boots of each (default 2; 3 with -until provisioned, whose figures are medians)")
	withBare := flag.Bool("bare", true, "with -until provisioned, boot the bare variant too (nothing to provision, no tool)")
	jobs := flag.Int("j", 2, "VMs at once (1 or 2); with 2, A and B of one round boot side by side")
	timeout := flag.Duration("timeout", 20*time.Minute, "bound on one boot")
	idle := flag.Duration("idle", 0, "before each boot, wait up to this long (polling every 30 s) until no other QEMU runs on the host (with -j 1)")
	flag.Parse()
	if *jobs < 1 || *jobs > 2 {
		return fmt.Errorf("-j %d: 1 or 2", *jobs)
	}
	if *smp < 1 || *smp > 8 {
		return fmt.Errorf("-smp %d: 1 to 8", *smp)
	}
	if *until != "poweroff" && *until != "provisioned" {
		return fmt.Errorf("-until %q: poweroff or provisioned", *until)
	}
	provMode := *until == "provisioned"
	if *runs <= 0 {
		*runs = 2
		if provMode {
			*runs = 3
		}
	}
	if len(initrds) == 0 {
		initrds = initrdList{"build/initramfs.img"}
	}
	eVariants, err := earlyinitVariants(initrds)
	if err != nil {
		return err
	}
	if *kver == "" {
		k, err := newestKernel()
		if err != nil {
			return err
		}
		*kver = k
	}
	kernel := vm.Kernel(*kver)
	debInitrd := "/boot/initrd.img-" + *kver
	need := []string{kernel, debInitrd, *bin, "/lib/modules/" + *kver}
	for _, v := range eVariants {
		need = append(need, v.initrd)
	}
	for _, f := range need {
		if _, err := os.Stat(f); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	out2, err := filepath.Abs(*out)
	if err != nil {
		return err
	}
	*out = out2

	t0 := time.Now()
	// debootstrap does not resolve virtual packages: python3-cryptography
	// needs python3-cffi-backend-api-*, which python3-cffi-backend provides.
	// kmod: without /sbin/modprobe the kernel cannot load isofs when
	// cloud-init mounts the NoCloud CD-ROM (minbase and udev lack it; any
	// real image has it).
	tarball, err := vm.DebianRootWith(*cache, []string{"cloud-init", "python3-cffi-backend", "kmod"})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "root %s (%s)\n", filepath.Base(tarball), time.Since(t0).Round(time.Second))
	var variants []*variant
	if *withCloudInit {
		variants = append(variants, &variant{name: "A cloud-init", initrd: debInitrd, append: appendCommon})
	}
	variants = append(variants, eVariants...)
	if provMode && *withBare {
		variants = append(variants, &variant{name: bareName, initrd: debInitrd, append: appendCommon, disabled: true, bare: true})
	}
	extra := map[string]string{}
	var wants []string
	if provMode {
		extra, wants = probeFiles()
	}
	if err := images(tarball, *kver, *out, *bin, variants, extra, wants); err != nil {
		return err
	}
	seed := filepath.Join(*out, "seed.iso")
	seedDir := filepath.Join(*out, "seed")
	os.RemoveAll(seedDir)
	if err := vm.WriteTree(seedDir, map[string]string{
		"meta-data":      "instance-id: iid-bench-1\nlocal-hostname: bench-host\n",
		"network-config": networkConfig,
		"user-data":      userData(!provMode),
	}); err != nil {
		return err
	}
	if err := vm.ISO(seed, seedDir, "cidata"); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "images ready after %s; accel %s\n", time.Since(t0).Round(time.Second), vm.Accel(kernel))

	loadBefore := loadavg()
	var results []*result
	for i := 1; i <= *runs; i++ {
		for _, v := range variants {
			results = append(results, &result{v: v, n: i})
		}
	}
	sem := make(chan struct{}, *jobs)
	var wg sync.WaitGroup
	for _, r := range results {
		wg.Add(1)
		sem <- struct{}{}
		go func(r *result) {
			defer wg.Done()
			defer func() { <-sem }()
			if *idle > 0 {
				waitIdle(os.Stderr, *idle)
			}
			bootOne(r, kernel, seed, *out, *bin, *timeout, *smp, *jobs, provMode)
			fmt.Fprintf(os.Stderr, "%s run %d: %s\n", r.v.name, r.n, r.line())
		}(r)
	}
	wg.Wait()
	loads := fmt.Sprintf("load average before the first boot %s, after the last %s (%d CPUs)", loadBefore, loadavg(), runtime.NumCPU())
	setup := fmt.Sprintf("kernel %s, QEMU %s, %d vCPU(s), 1024 MB, %d VM(s) at once; %s", *kver, vm.Accel(kernel), *smp, *jobs, loads)
	if provMode {
		plots(os.Stderr, results, variants, *out, *bin)
		reportProvisioned(os.Stdout, results, variants, setup)
		return nil
	}
	report(os.Stdout, results, variants, setup)
	return nil
}

// loadavg is the host's /proc/loadavg: the 1, 5 and 15 minute averages.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func newestKernel() (string, error) {
	m, _ := filepath.Glob("/boot/vmlinuz-*")
	if len(m) == 0 {
		return "", fmt.Errorf("no /boot/vmlinuz-*: run make deps")
	}
	out, err := exec.Command("sh", "-c", "ls /boot/vmlinuz-* | sed 's|^/boot/vmlinuz-||' | sort -V | tail -n 1").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// images makes one ext4 template per variant from the same tree: the
// Debian root with cloud-init, the host kernel's modules, the save unit
// and the extra files (paths in the root), the units among them named
// in wants enabled for multi-user.target; earlyinit's also have
// /etc/cloud/cloud-init.disabled and bin as /usr/bin/earlyinit; bare's,
// made last, the first and what bakeBare adds.
func images(tarball, kver, out, bin string, variants []*variant, extra map[string]string, wants []string) error {
	dir := filepath.Join(out, "root")
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := vm.Untar(tarball, dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, "lib/modules"), 0o755); err != nil {
		return err
	}
	if b, err := exec.Command("cp", "-a", "/lib/modules/"+kver, filepath.Join(dir, "lib/modules/")).CombinedOutput(); err != nil {
		return fmt.Errorf("copy modules: %v: %s", err, b)
	}
	if err := vm.WriteTree(dir, map[string]string{"etc/systemd/system/bench-save.service": saveUnit}); err != nil {
		return err
	}
	if err := vm.WriteTree(dir, extra); err != nil {
		return err
	}
	for _, u := range append([]string{"bench-save.service"}, wants...) {
		if err := os.Symlink("../"+u, filepath.Join(dir, "etc/systemd/system/multi-user.target.wants", u)); err != nil {
			return err
		}
	}
	for p, c := range extra {
		if strings.HasPrefix(c, "#!") {
			if err := os.Chmod(filepath.Join(dir, p), 0o755); err != nil {
				return err
			}
		}
	}
	disabled := filepath.Join(dir, "etc/cloud/cloud-init.disabled")
	var ordered []*variant // bare last: bakeBare changes the tree
	for _, v := range variants {
		if !v.bare {
			ordered = append(ordered, v)
		}
	}
	for _, v := range variants {
		if v.bare {
			ordered = append(ordered, v)
		}
	}
	for _, v := range ordered {
		if v.bare {
			if err := bakeBare(dir); err != nil {
				return fmt.Errorf("bare image: %w", err)
			}
		}
		os.Remove(disabled)
		installed := filepath.Join(dir, "usr/bin/earlyinit")
		os.Remove(installed)
		if v.earlyinit() {
			if b, err := exec.Command("cp", bin, installed).CombinedOutput(); err != nil {
				return fmt.Errorf("earlyinit into the root: %v: %s", err, b)
			}
		}
		if v.disabled {
			if err := os.WriteFile(disabled, nil, 0o644); err != nil {
				return err
			}
		}
		v.img = filepath.Join(out, fmt.Sprintf("template-%s.img", v.tag()))
		if err := vm.Ext4(v.img, dir, "root", "", 3072); err != nil {
			return err
		}
	}
	return nil
}

var (
	handoverRe = regexp.MustCompile(`(?m)^\[\s*(\d+\.\d+)\] systemd\[1\]:`)
	uptimeRe   = regexp.MustCompile(`^(\d+\.\d+)\s*$`)
)

// bootOne boots a fresh copy of r's template and reads what it left.
func bootOne(r *result, kernel, seed, out, bin string, timeout time.Duration, smp, jobs int, provMode bool) {
	prefix := "run"
	if provMode {
		prefix = "provisioned"
	}
	img := filepath.Join(out, fmt.Sprintf("%s-%s%d.img", prefix, r.v.tag(), r.n))
	r.img = img
	if b, err := exec.Command("cp", "--sparse=always", r.v.img, img).CombinedOutput(); err != nil {
		r.err = fmt.Errorf("copy image: %v: %s", err, b)
		return
	}
	stop := watchHost(r, jobs, img)
	res, err := vm.Run(context.Background(), vm.Config{
		Kernel: kernel, Initrd: r.v.initrd, Append: r.v.append,
		Disks:    []vm.Disk{{Path: img}, {Path: seed, If: "ide-cd"}},
		NICs:     []vm.NIC{{MAC: mac}},
		RNG:      true,
		MemoryMB: 1024,
		Timeout:  timeout,
		Wrap:     smpWrap(smp),
	})
	stop()
	if res == nil {
		r.err = err
		return
	}
	os.WriteFile(strings.TrimSuffix(img, ".img")+".console", []byte(res.Console), 0o644)
	r.err, r.wall = err, res.Duration
	if m := handoverRe.FindStringSubmatch(res.Console); m != nil {
		r.handover, _ = strconv.ParseFloat(m[1], 64)
	}
	r.powered = strings.Contains(res.Console, "reboot: Power down")
	if s, err := vm.Cat(img, "/var/log/e2e-runcmd-uptime"); err == nil {
		if m := uptimeRe.FindStringSubmatch(s); m != nil {
			r.runcmd, _ = strconv.ParseFloat(m[1], 64)
		}
	}
	if r.v.bare {
		r.missing = checkBare(img)
	} else {
		r.missing = check(img, r.v.img, r.v.earlyinit())
	}
	if r.v.earlyinit() {
		r.analyze = earlyinitAnalyze(img, bin)
	}
	if provMode {
		r.prov = readProvisioned(img, res.Console, r.v.earlyinit())
	}
}

// qemuCount is the number of QEMU processes on the host, the bench's
// own included.
func qemuCount() int {
	ents, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range ents {
		if b, err := os.ReadFile("/proc/" + e.Name() + "/comm"); err == nil && strings.HasPrefix(string(b), "qemu-system") {
			n++
		}
	}
	return n
}

// waitIdle waits, at most max, until no QEMU runs on the host.
func waitIdle(log io.Writer, max time.Duration) {
	deadline := time.Now().Add(max)
	for n := qemuCount(); n > 0; n = qemuCount() {
		if time.Now().After(deadline) {
			fmt.Fprintf(log, "%d other QEMU still running after %s: booting anyway\n", n, max)
			return
		}
		fmt.Fprintf(log, "%d other QEMU running: waiting\n", n)
		time.Sleep(30 * time.Second)
	}
}

// watchHost watches the host while r's VM (the QEMU whose command line
// names img) boots: r is busy if more QEMU run than the bench's own jobs,
// or if other processes took more than a tenth of a CPU on average
// (r.othersCPU: the host's busy CPU time less the VM's). stop ends the
// watch.
func watchHost(r *result, jobs int, img string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	t0, busy0 := time.Now(), hostBusyTicks()
	go func() {
		defer close(finished)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		pid := 0
		var own uint64
		for {
			if qemuCount() > jobs {
				r.busy = true
			}
			if pid == 0 {
				pid = findQEMU(img)
			}
			if pid > 0 {
				if c, ok := procTicks(pid); ok {
					own = c
				}
			}
			select {
			case <-done:
				if others := int64(hostBusyTicks()-busy0) - int64(own); others > 0 {
					r.othersCPU = float64(others) / clockTicks
				}
				if r.othersCPU > 0.1*time.Since(t0).Seconds() {
					r.busy = true
				}
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// clockTicks is USER_HZ, the unit of /proc's CPU times (100 on Linux).
const clockTicks = 100

// hostBusyTicks is the host's CPU time not idle since boot: /proc/stat's
// user, nice, system, irq, softirq and steal.
func hostBusyTicks() uint64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(strings.SplitN(string(b), "\n", 2)[0])
	var sum uint64
	for i, x := range f {
		if i == 0 || i == 4 || i == 5 || i > 8 { // "cpu", idle, iowait, guest
			continue
		}
		n, _ := strconv.ParseUint(x, 10, 64)
		sum += n
	}
	return sum
}

// procTicks is a process's CPU time (utime + stime, its threads'
// included).
func procTicks(pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// Fields after the command's closing parenthesis: state is the
	// first, utime and stime the 12th and 13th.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return 0, false
	}
	u, _ := strconv.ParseUint(f[11], 10, 64)
	s, _ := strconv.ParseUint(f[12], 10, 64)
	return u + s, true
}

// findQEMU is the pid of the QEMU whose command line names img, or 0.
func findQEMU(img string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		comm, _ := os.ReadFile("/proc/" + e.Name() + "/comm")
		if !strings.HasPrefix(string(comm), "qemu-system") {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(string(cmdline), "file="+img+",") {
			return pid
		}
	}
	return 0
}

// smpWrap runs QEMU with -smp n (vm.Config has no vCPU count): sh
// appends it to QEMU's command line and execs it.
func smpWrap(n int) []string {
	if n <= 1 {
		return nil
	}
	return []string{"sh", "-c", `exec "$@" -smp "$0"`, strconv.Itoa(n)}
}

// check returns what of the user-data is not on the disk, and whether
// the host keys were made anew (they differ from the template's): for
// earlyinit the RSA key is gone and not made again, since Debian's
// sshd_config names no host key (docs/cloud-config.md, ssh).
func check(img, template string, earlyinit bool) []string {
	cat := func(p string) string { s, _ := vm.Cat(img, p); return s }
	var miss []string
	want := func(ok bool, what string) {
		if !ok {
			miss = append(miss, what)
		}
	}
	want(regexp.MustCompile(`(?m)^alice:x:\d+:\d+:Alice:/home/alice:/bin/bash$`).MatchString(cat("/etc/passwd")), "user alice")
	want(strings.Contains(cat("/home/alice/.ssh/authorized_keys"), aliceKey), "alice's key")
	// The last line: sudo may warn first (cloud-init leaves /etc/hosts
	// without the new hostname, so sudo cannot resolve it).
	sudo := strings.Split(strings.TrimSpace(cat("/var/log/e2e-sudo.log")), "\n")
	want(sudo[len(sudo)-1] == "0", "alice's sudo")
	want(cat("/etc/e2e/plain.txt") == "plain text from user-data\n", "write_files plain")
	want(cat("/etc/e2e/b64.bin") == binData, "write_files b64")
	want(strings.Contains(cat("/var/log/e2e-bootcmd.log"), "bootcmd iid-bench-1 "), "bootcmd")
	rc := cat("/var/log/e2e-runcmd.log")
	want(strings.Contains(rc, "runcmd ran\n"), "runcmd")
	want(regexp.MustCompile(`(?m)^\d+: lan0\s+inet 192\.0\.2\.50/24 `).MatchString(rc), "lan0 192.0.2.50/24")
	for _, t := range []string{"rsa", "ecdsa", "ed25519"} {
		f := "/etc/ssh/ssh_host_" + t + "_key.pub"
		old, _ := vm.Cat(template, f)
		now := cat(f)
		if earlyinit && t == "rsa" {
			want(now == "", "no rsa host key")
			continue
		}
		want((strings.HasPrefix(now, "ssh-") || strings.HasPrefix(now, "ecdsa-")) && now != old, "new "+t+" host key")
	}
	return miss
}

// earlyinitRoot rebuilds, in a temporary directory, the run/earlyinit of
// the boot from what the bench's units kept in /var/log/bench.
func earlyinitRoot(img string) (string, error) {
	dir, err := os.MkdirTemp("", "bench-analyze")
	if err != nil {
		return "", err
	}
	for _, f := range []string{"boot.json", "status.json"} {
		s, err := vm.Cat(img, "/var/log/bench/"+f)
		if err != nil || s == "" {
			continue
		}
		if err := vm.WriteTree(dir, map[string]string{"run/earlyinit/" + f: s}); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// earlyinitAnalyze is `earlyinit analyze` of what the bench's units
// kept, or why there is none.
func earlyinitAnalyze(img, bin string) string {
	out, err := earlyinitVerb(img, bin, "analyze")
	if err != nil {
		return fmt.Sprintf("(not recorded: %v)\n", err)
	}
	return out
}

// earlyinitVerb runs `earlyinit VERB... --root DIR` (analyze, analyze
// plot) on what the bench's units kept: its standard output.
func earlyinitVerb(img, bin string, verb ...string) (string, error) {
	dir, err := earlyinitRoot(img)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	cmd := exec.Command(bin, append(verb, "--root", dir)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("earlyinit %s: %w: %s", strings.Join(verb, " "), err, strings.TrimSpace(stderr.String()))
	}
	return string(b), nil
}

// earlyinitRecord reads the boot record and the late stages the bench's
// units kept.
func earlyinitRecord(img string) (*boot.Record, *late.StageStatus, *late.StageStatus, error) {
	var rec boot.Record
	s, err := vm.Cat(img, "/var/log/bench/boot.json")
	if err != nil {
		return nil, nil, nil, err
	}
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		return nil, nil, nil, fmt.Errorf("boot.json: %w", err)
	}
	var st struct {
		V1 struct {
			Boot  *late.StageStatus `json:"boot"`
			Final *late.StageStatus `json:"final"`
		} `json:"v1"`
	}
	s, err = vm.Cat(img, "/var/log/bench/status.json")
	if err != nil {
		return &rec, nil, nil, err
	}
	if err := json.Unmarshal([]byte(s), &st); err != nil {
		return &rec, nil, nil, fmt.Errorf("status.json: %w", err)
	}
	return &rec, st.V1.Boot, st.V1.Final, nil
}

func (r *result) line() string {
	var s string
	if r.wall > 0 {
		s = fmt.Sprintf("%8.1fs %12s %12s", r.wall.Seconds(), secs(r.handover), secs(r.runcmd))
	} else {
		s = fmt.Sprintf("%9s %12s %12s", "-", "-", "-")
	}
	return s + "  " + r.status()
}

// status is a run's outcome in a few words.
func (r *result) status() string {
	var s []string
	switch {
	case r.err != nil:
		s = append(s, "FAILED: "+strings.SplitN(r.err.Error(), "\n", 2)[0])
	case !r.powered:
		s = append(s, "did not power off")
	}
	if len(r.missing) > 0 {
		s = append(s, "NOT applied: "+strings.Join(r.missing, ", "))
	} else if r.err == nil {
		s = append(s, "applied")
	}
	if r.busy {
		s = append(s, fmt.Sprintf("host busy (others took %.0f CPU-s): not in the mean", r.othersCPU))
	}
	return strings.Join(s, "; ")
}

func secs(f float64) string {
	if f == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs", f)
}

func report(w io.Writer, results []*result, variants []*variant, setup string) {
	fmt.Fprintf(w, "\nSame Debian bookworm root (cloud-init 22.4.2 installed), same NoCloud drive, %s.\n", setup)
	fmt.Fprintf(w, "wall: QEMU start to power-off; real init: kernel time of the first systemd[1] line; runcmd: guest uptime when runcmd ran.\n\n")
	fmt.Fprintf(w, "%-14s %-6s %9s %12s %12s  %s\n", "", "", "wall", "real init", "runcmd", "user-data")
	for _, v := range variants {
		var n int
		var wall, ho, rc float64
		for _, r := range results {
			if r.v == v && r.counted() {
				n++
				wall += r.wall.Seconds()
				ho += r.handover
				rc += r.runcmd
			}
		}
		if n > 0 {
			fmt.Fprintf(w, "%-14s %-6s %8.1fs %12s %12s  mean of %d applied run(s) on an idle host\n", v.name, "mean", wall/float64(n), secs(ho/float64(n)), secs(rc/float64(n)), n)
		} else {
			fmt.Fprintf(w, "%-14s %-6s %9s %12s %12s  no run applied the user-data on an idle host\n", v.name, "mean", "-", "-", "-")
		}
		for _, r := range results {
			if r.v == v {
				fmt.Fprintf(w, "%-14s run %-2d %s\n", "", r.n, r.line())
			}
		}
	}
	printAnalyze(w, results, variants)
}

// printAnalyze prints `earlyinit analyze` of the first run of each
// earlyinit variant that has one.
func printAnalyze(w io.Writer, results []*result, variants []*variant) {
	for _, v := range variants {
		for _, r := range results {
			if r.v == v && v.earlyinit() && r.analyze != "" {
				fmt.Fprintf(w, "\nearlyinit analyze (%s, run %d):\n%s", r.v.name, r.n, r.analyze)
				break
			}
		}
	}
}
