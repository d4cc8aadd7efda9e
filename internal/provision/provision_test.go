package provision

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/logs"
	"github.com/earlyinit/earlyinit/internal/looptest"
	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/settings"
	"golang.org/x/sys/unix"
)

// The recorded nova config drive the datasource tests read; its one link
// has this MAC.
const (
	driveDir = "../datasource/configdrive/testdata/config-2"
	driveMAC = "fa:16:3e:69:b0:58"
	driveIID = "2b3c84ef-9c33-4a1e-b7a6-2d3b4c07c5f1"
)

// testLog is a Log that keeps every line; Step recovers (logs.Guard).
type testLog struct {
	mu sync.Mutex
	bytes.Buffer
	steps []string
}

func (l *testLog) line(s string)             { l.mu.Lock(); l.WriteString(s + "\n"); l.mu.Unlock() }
func (l *testLog) Printf(f string, a ...any) { l.line(fmt.Sprintf(f, a...)) }
func (l *testLog) Errorf(f string, a ...any) { l.line("E " + fmt.Sprintf(f, a...)) }
func (l *testLog) Debugf(f string, a ...any) {}
func (l *testLog) Step(name string, fn func() error) error {
	err := logs.Guard(l, "step "+name, fn)
	l.steps = append(l.steps, fmt.Sprintf("%s:%v", name, err))
	return err
}
func (l *testLog) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.Buffer.String() }

// driveSys is a machine with one config drive, the recorded one, and no
// metadata service.
type driveSys struct{ dir string }

func (s driveSys) SeedDir(dir string) (fs.FS, bool) { return nil, false }
func (s driveSys) Drives(time.Duration, func(blockdev.Device) bool) []blockdev.Device {
	return []blockdev.Device{{Path: "/dev/sr0", Name: "sr0", FS: blockdev.FS{Type: "iso9660", Label: "config-2"}}}
}
func (s driveSys) ReadDrive(dev blockdev.Device, read func(fs.FS) (*instance.Data, error)) (*instance.Data, error) {
	return read(datasource.DriveFS(s.dir, datasource.MaxDriveTotal))
}
func (s driveSys) RaiseLinks() func() { return func() {} }
func (s driveSys) Network(context.Context) (datasource.Service, func(), error) {
	return datasource.Service{}, nil, errors.New("no metadata service here")
}

// fakeNL is a machine's NICs: renames take effect, nothing fails.
type fakeNL struct{ links []nic.Link }

func (f *fakeNL) LinkList() ([]nic.Link, error) { return append([]nic.Link(nil), f.links...), nil }
func (f *fakeNL) SetName(i int, name string) error {
	for j := range f.links {
		if f.links[j].Name == name {
			return syscall.EEXIST
		}
	}
	for j := range f.links {
		if f.links[j].Index == i {
			f.links[j].Name = name
			return nil
		}
	}
	return syscall.ENODEV
}
func (f *fakeNL) SetUp(i int) error   { return nil }
func (f *fakeNL) SetDown(i int) error { return nil }

func newNL() *fakeNL {
	return &fakeNL{links: []nic.Link{
		{Index: 1, Name: "lo", Kind: "loopback", Up: true},
		{Index: 2, Name: "ens3", MAC: driveMAC, Driver: "virtio_net", Kind: "device", Carrier: true},
	}}
}

// newRoot makes a real root that networkd renders for, with cloud-init
// installed.
func newRoot(t testing.TB, dir string) (root, run string) {
	t.Helper()
	root, run = filepath.Join(dir, "root"), filepath.Join(dir, "run")
	for _, p := range []string{"etc/os-release", "usr/sbin/ip", "usr/sbin/systemctl", "usr/bin/cloud-init", "usr/lib/systemd/systemd-udevd"} {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("ID=debian\nVERSION_ID=12\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	return root, run
}

func testEnv(t testing.TB, log Log) Env {
	return envIn(t, t.TempDir(), log)
}

// envIn is testEnv with the roots under dir.
func envIn(t testing.TB, dir string, log Log) Env {
	root, run := newRoot(t, dir)
	s, errs := settings.ParseCmdline("root=/dev/vda1")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return Env{Root: root, RunRoot: run, Settings: s, Log: log, System: driveSys{driveDir}, Netlink: newNL()}
}

// TestRun: a config drive's files become the instance cache, the new
// instance's identity and the network config in the root, and a second
// boot of the same instance changes nothing.
func TestRun(t *testing.T) {
	log := &testLog{}
	env := testEnv(t, log)
	res := Run(env)
	if !res.Instance {
		t.Fatalf("no instance:\n%s", log.String())
	}
	if got := strings.Join(log.steps, " "); got != "datasource:<nil> grow:<nil> instance:<nil> network:<nil>" {
		t.Errorf("steps %s\n%s", got, log.String())
	}
	read := func(p string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(env.Root, p))
		if err != nil {
			t.Error(err)
		}
		return string(b)
	}
	if got := read(paths.DataDir + "/instance-id"); got != driveIID+"\n" {
		t.Errorf("instance-id %q", got)
	}
	if got := read("/etc/hostname"); !strings.HasPrefix(got, "web-1") {
		t.Errorf("hostname %q", got)
	}
	network := read("/etc/systemd/network/10-cloud-init-ens3.network")
	if !strings.Contains(network, "MACAddress="+driveMAC) {
		t.Errorf("networkd file:\n%s", network)
	}
	if link := read("/etc/systemd/network/10-earlyinit-ens3.link"); !strings.Contains(link, "Name=ens3") {
		t.Errorf("persistent name file:\n%s", link)
	}
	for _, p := range []string{"/etc/cloud/cloud.cfg.d/99-earlyinit-disable-network-config.cfg", paths.DataDir + "/network-config.sha256"} {
		read(p)
	}
	if _, err := os.Stat(filepath.Join(env.RunRoot, paths.RunDir, instance.InstanceDataFile)); err != nil {
		t.Errorf("instance-data in the run dir: %v", err)
	}

	// The same instance again: no new identity, the network left as is.
	log2 := &testLog{}
	env.Log, env.Netlink = log2, newNL()
	if res := Run(env); !res.Instance {
		t.Fatalf("second boot: no instance:\n%s", log2.String())
	}
	for _, want := range []string{"same as last boot", "network: config unchanged since last written"} {
		if !strings.Contains(log2.String(), want) {
			t.Errorf("second boot: no %q:\n%s", want, log2.String())
		}
	}
}

// TestRunNothingFound: no datasource, no instance, nothing written.
func TestRunNothingFound(t *testing.T) {
	log := &testLog{}
	env := testEnv(t, log)
	env.System = driveSys{t.TempDir()} // a drive with no files
	if res := Run(env); res.Instance {
		t.Fatalf("an instance from an empty drive:\n%s", log.String())
	}
	if _, err := os.Stat(filepath.Join(env.Root, paths.CacheDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cache dir after a rejected drive: %v", err)
	}
}

// BenchmarkRun is earlyinit's own work in one boot, without the emulator,
// the kernel or the waits: a config drive's files → instance → network →
// every file written into a fresh temporary root. The goal is at most
// 10 ms per boot on the project's 2-core machine. "tmpfs" is that work
// (the root in memory, so fsync is free); "disk" adds what the flushes of
// the atomic writes cost on this machine's disk, in its temporary
// directory; "ext4" is the same on an ext4 filesystem made for the run
// (a loop device; root only), as a freshly built image's root is: on a
// long-used host filesystem, ext4's allocator can spend as much time
// skipping recently deleted inodes (recently_deleted, in perf) as
// earlyinit spends in all its work. "-selinux" is the same on a root with
// SELinux enforcing and Debian's reference policy
// (internal/selinux/testdata/debian): the policy loaded (once per boot,
// each root being new) and every file labelled.
// cpu-ns/op is the CPU time the process (all its threads, the garbage
// collector's too) spent per boot: on a busy host, where ns/op (wall)
// also counts the waits for a CPU, it is the steadier figure.
func BenchmarkRun(b *testing.B) {
	for _, where := range []struct {
		name    string
		parent  func(*testing.B) string // the directory the roots are made in
		selinux bool
	}{
		{"tmpfs", inTmpfs, false}, {"disk", (*testing.B).TempDir, false}, {"ext4", freshExt4, false},
		{"tmpfs-selinux", inTmpfs, true}, {"disk-selinux", (*testing.B).TempDir, true}, {"ext4-selinux", freshExt4, true},
	} {
		b.Run(where.name, func(b *testing.B) {
			var policy map[string][]byte
			if where.selinux {
				if os.Geteuid() != 0 {
					b.Skip("labels are security.* xattrs: root only")
				}
				policy = debianPolicy(b)
			}
			parent := where.parent(b)
			b.ReportAllocs()
			n := 0
			var cpu time.Duration
			defer func() { b.ReportMetric(float64(cpu.Nanoseconds())/float64(max(n, 1)), "cpu-ns/op") }()
			for b.Loop() {
				b.StopTimer()
				log := &testLog{}
				n++
				env := envIn(b, filepath.Join(parent, strconv.Itoa(n)), log)
				for p, data := range policy {
					writeIn(b, env.Root, p, data)
				}
				// What the root had before the boot is on its disk, as
				// on a real root: otherwise ext4's first journal commit
				// in Run would also write the policy files out.
				syncFS(b, env.Root)
				b.StartTimer()
				c0 := cpuTime()
				if res := Run(env); !res.Instance {
					b.Fatalf("no instance:\n%s", log.String())
				}
				cpu += cpuTime() - c0
				if policy != nil && n == 1 {
					// The work is the labelled one.
					b.StopTimer()
					if !strings.Contains(log.String(), "selinux: labels from policy default (5621 entries)") {
						b.Fatalf("no policy loaded:\n%s", log.String())
					}
					buf := make([]byte, 64)
					l, err := unix.Lgetxattr(filepath.Join(env.Root, "etc/hostname"), "security.selinux", buf)
					if err != nil || string(buf[:l]) != "system_u:object_r:net_conf_t:s0\x00" {
						b.Fatalf("/etc/hostname labelled %q, %v", buf[:max(l, 0)], err)
					}
					b.StartTimer()
				}
			}
		})
	}
}

// inTmpfs is a new directory in /dev/shm, removed when b is done; b is
// skipped where /dev/shm is not a tmpfs.
func inTmpfs(b *testing.B) string {
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err != nil || st.Type != unix.TMPFS_MAGIC {
		b.Skip("/dev/shm is not a tmpfs")
	}
	d, err := os.MkdirTemp("/dev/shm", "earlyinit-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// freshExt4 is a new, empty ext4 filesystem mounted for b (a sparse
// 1 GiB image on a loop device, looptest's), undone when b is done; b is
// skipped unless it runs as root.
func freshExt4(b *testing.B) string {
	looptest.Require(b)
	dev := looptest.Attach(b, looptest.Image(b, 1<<30), 512)
	looptest.Mkfs(b, "ext4", dev)
	return looptest.Mount(b, dev, "ext4")
}

// syncFS writes out what dir's filesystem has in its caches.
func syncFS(b testing.TB, dir string) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		b.Fatal(err)
	}
}

// cpuTime is the CPU time this process has used, user and system, all
// threads.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// debianPolicy is Debian 12's file labelling policy as internal/selinux's
// tests have it, SELINUX=enforcing: the files by their path in a root.
func debianPolicy(b *testing.B) map[string][]byte {
	const dir = "/etc/selinux/default/contexts/files/"
	files := map[string][]byte{"/etc/selinux/config": []byte("SELINUX=enforcing\nSELINUXTYPE=default\n")}
	for _, name := range []string{"file_contexts", "file_contexts.homedirs", "file_contexts.subs_dist"} {
		data, err := os.ReadFile("../selinux/testdata/debian/" + name)
		if errors.Is(err, fs.ErrNotExist) {
			var z []byte
			if z, err = os.ReadFile("../selinux/testdata/debian/" + name + ".gz"); err == nil {
				var r *gzip.Reader
				if r, err = gzip.NewReader(bytes.NewReader(z)); err == nil {
					data, err = io.ReadAll(r)
				}
			}
		}
		if err != nil {
			b.Fatal(err)
		}
		files[dir+name] = data
	}
	return files
}

// writeIn writes data to p in root, making its directories.
func writeIn(b testing.TB, root, p string, data []byte) {
	full := filepath.Join(root, p)
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(full, data, 0o644); err != nil {
		b.Fatal(err)
	}
}

// noSourceSys is a machine where no source answers: no drive, no
// metadata service.
type noSourceSys struct{ driveSys }

func (noSourceSys) Drives(time.Duration, func(blockdev.Device) bool) []blockdev.Device { return nil }

// TestRunKeepsCachedInstance: a later boot where no source answers (the
// config drive detached) keeps the instance the drive provisioned (where
// cloud-init would take None: TestCachedInstanceAgainstCloudInit): no None
// instance, nothing stored again, the host name kept. On a root with no
// instance, or with earlyinit.ds=none, None it is.
func TestRunKeepsCachedInstance(t *testing.T) {
	// The image lists the drive and None, as images for one cloud do.
	list := func(root string) {
		writeIn(t, root, "etc/cloud/cloud.cfg.d/90-list.cfg", []byte("datasource_list: [ConfigDrive, None]\n"))
	}
	log := &testLog{}
	env := testEnv(t, log)
	list(env.Root)
	if res := Run(env); !res.Instance {
		t.Fatalf("first boot: no instance:\n%s", log.String())
	}
	hostname := filepath.Join(env.Root, "etc/hostname")
	before, err := os.ReadFile(hostname)
	if err != nil {
		t.Fatal(err)
	}

	runData := filepath.Join(env.RunRoot, paths.RunDir, instance.InstanceDataFile)
	stored, err := os.ReadFile(runData)
	if err != nil {
		t.Fatal(err)
	}
	// A reboot: /run is empty again.
	if err := os.RemoveAll(filepath.Join(env.RunRoot, "run")); err != nil {
		t.Fatal(err)
	}

	log2 := &testLog{}
	env.Log, env.Netlink, env.System = log2, newNL(), noSourceSys{}
	if res := Run(env); !res.Instance {
		t.Errorf("second boot, no source: no late stages for the cached instance:\n%s", log2.String())
	}
	for _, want := range []string{`instance "` + driveIID + `" (cached) stays`, "kept from the cache"} {
		if !strings.Contains(log2.String(), want) {
			t.Errorf("second boot: no %q:\n%s", want, log2.String())
		}
	}
	// The late stages find the instance's record where they read it.
	for _, p := range []string{runData, filepath.Join(env.RunRoot, paths.CloudRunDir, instance.InstanceDataFile)} {
		if got, err := os.ReadFile(p); err != nil || string(got) != string(stored) {
			t.Errorf("%s after the second boot: %v; want the first boot's (%d bytes), got %d", p, err, len(stored), len(got))
		}
	}
	if got, err := os.ReadFile(filepath.Join(env.RunRoot, paths.RunDir, ".instance-id")); err != nil || string(got) != driveIID+"\n" {
		t.Errorf("run .instance-id %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(env.RunRoot, paths.RunDir, instance.InstanceDataSensitiveFile)); err == nil {
		t.Errorf("the sensitive instance data came back from the disk, where it is not kept")
	}
	if b, err := os.ReadFile(filepath.Join(env.Root, paths.DataDir+"/instance-id")); err != nil || string(b) != driveIID+"\n" {
		t.Errorf("instance-id after the second boot: %q, %v", b, err)
	}
	if after, err := os.ReadFile(hostname); err != nil || string(after) != string(before) {
		t.Errorf("/etc/hostname %q, was %q (%v)", after, before, err)
	}

	// No instance on the root: None, the image's configuration.
	log3 := &testLog{}
	env3 := testEnv(t, log3)
	list(env3.Root)
	env3.System = noSourceSys{}
	if res := Run(env3); !res.Instance || !strings.Contains(log3.String(), "falling back to None") {
		t.Errorf("fresh root, no source: want None:\n%s", log3.String())
	}
	// None asked for on the command line, over a cached instance.
	log4 := &testLog{}
	env.Log, env.Netlink = log4, newNL()
	env.Settings.Datasources = "none"
	if res := Run(env); !res.Instance || strings.Contains(log4.String(), "(cached) stays") {
		t.Errorf("earlyinit.ds=none: want None:\n%s", log4.String())
	}
}
