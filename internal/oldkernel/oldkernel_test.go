package oldkernel

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

func TestRunPattern(t *testing.T) {
	for in, want := range map[string]string{
		"TestA":           "^TestA$",
		"TestA/b_c":       "^TestA$/^b_c$",
		"TestA/x.y(1)/#0": `^TestA$/^x\.y\(1\)$/^#0$`,
	} {
		if got := runPattern(in); got != want {
			t.Errorf("runPattern(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLinux310: under the filter, calls newer than 3.10 fail with ENOSYS,
// 3.10's own do not, a rule's argument is matched; and what Go does for
// earlyinit on such a kernel works: random bytes (getrandom, 3.17: Go
// reads /dev/urandom, unless the vDSO has them, Linux 6.11 and later),
// starting and signalling a command (pidfds, 5.3: Go keeps the pid), a
// file copy (copy_file_range, 4.5: Go copies itself).
func TestLinux310(t *testing.T) {
	k := Linux310().With(CallArg("fcntl F_GETPIPE_SZ", unix.SYS_FCNTL, 1, unix.F_GETPIPE_SZ, unix.EINVAL))
	if !Run(t, k) {
		return
	}
	for _, c := range []struct {
		name string
		err  error
	}{
		{"openat2", func() error {
			fd, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_RDONLY})
			if err == nil {
				unix.Close(fd)
			}
			return err
		}()},
		{"getrandom", func() error { _, err := unix.Getrandom(make([]byte, 4), unix.GRND_NONBLOCK); return err }()},
		{"pidfd_open", func() error {
			fd, err := unix.PidfdOpen(os.Getpid(), 0)
			if err == nil {
				unix.Close(fd)
			}
			return err
		}()},
		{"renameat2", unix.Renameat2(unix.AT_FDCWD, "/nonexistent-a", unix.AT_FDCWD, "/nonexistent-b", 0)},
	} {
		if !errors.Is(c.err, unix.ENOSYS) {
			t.Errorf("%s: %v, want ENOSYS", c.name, c.err)
		}
	}
	// finit_module is 3.8: not ENOSYS (EBADF for fd -1), on a kernel
	// with modules.
	if _, err := os.Stat("/proc/modules"); err == nil {
		if err := unix.FinitModule(-1, "", 0); !errors.Is(err, unix.EBADF) {
			t.Errorf("finit_module(-1): %v, want EBADF", err)
		}
	}
	if err := unix.Syncfs(0); errors.Is(err, unix.ENOSYS) {
		t.Errorf("syncfs: %v (2.6.39, in 3.10)", err)
	}
	// The rule: F_GETPIPE_SZ fails, another fcntl on the same fd does not.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := unix.FcntlInt(r.Fd(), unix.F_GETPIPE_SZ, 0); !errors.Is(err, unix.EINVAL) {
		t.Errorf("fcntl F_GETPIPE_SZ: %v, want EINVAL", err)
	}
	if _, err := unix.FcntlInt(r.Fd(), unix.F_GETFL, 0); err != nil {
		t.Errorf("fcntl F_GETFL: %v", err)
	}

	b := make([]byte, 32)
	rand.Read(b)
	if bytes.Equal(b, make([]byte, 32)) {
		t.Error("crypto/rand gave zeros")
	}
	out, err := exec.Command("sh", "-c", "echo $((6*7))").Output()
	if err != nil || string(out) != "42\n" {
		t.Errorf("sh: %q, %v", out, err)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Errorf("kill: %v", err)
	}
	cmd.Wait()
	if err := cmd.Process.Signal(unix.Signal(0)); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("signal after wait: %v, want os.ErrProcessDone", err)
	}

	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src"), filepath.Join(dir, "dst")
	data := bytes.Repeat([]byte("earlyinit"), 100000)
	if err := os.WriteFile(src, data, 0o600); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	o, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(o, in); err != nil {
		t.Fatal(err)
	}
	o.Close()
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, data) {
		t.Error("the copy differs")
	}
}

// TestProgramFlag: a Mask rule matches any of its bits, and a kernel
// without FirstUnknown leaves the newer calls alone.
func TestProgramFlag(t *testing.T) {
	k := Kernel{Name: "a kernel without dup3's O_CLOEXEC"}.With(CallFlag("dup3 O_CLOEXEC", unix.SYS_DUP3, 2, unix.O_CLOEXEC, unix.EINVAL))
	if !Run(t, k) {
		return
	}
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Dup3(fd, 100, unix.O_CLOEXEC); !errors.Is(err, unix.EINVAL) {
		t.Errorf("dup3(O_CLOEXEC): %v, want EINVAL", err)
	}
	if err := unix.Dup3(fd, 100, 0); err != nil {
		t.Errorf("dup3(0): %v", err)
	}
	unix.Close(100)
	fd2, err := unix.Openat2(unix.AT_FDCWD, "/", &unix.OpenHow{Flags: unix.O_RDONLY})
	if err != nil {
		t.Errorf("openat2: %v", err)
	} else {
		unix.Close(fd2)
	}
}

// TestEarlyinitOnLinux310 runs the earlyinit binaries, the package's
// (/usr/bin/earlyinit) and PID 1's (tags initrd,nolate), with Linux 3.10's
// system calls: Go's runtime and the packages' initialisation start, and
// verbs that parse, render and write files work (net-convert, schema,
// mkseed). The boot's own work is tested package by package (rootfs,
// proc, resizefs: their TestOnLinux310 and TestGrowOnLinux310).
func TestEarlyinitOnLinux310(t *testing.T) {
	const binEnv = "EARLYINIT_OLDKERNEL_BIN"
	if os.Getenv(binEnv) == "" {
		dir := t.TempDir()
		for name, tags := range map[string]string{"earlyinit": "", "earlyinit-initrd": "initrd,nolate"} {
			cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-tags", tags, "-o", filepath.Join(dir, name), "github.com/earlyinit/earlyinit/cmd/earlyinit")
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("go build -tags %q: %v\n%s", tags, err, out)
			}
		}
		t.Setenv(binEnv, dir)
	}
	if !Run(t, Linux310()) {
		return
	}
	bin := os.Getenv(binEnv)
	dir := t.TempDir()
	netcfg := filepath.Join(dir, "network.yaml")
	if err := os.WriteFile(netcfg, []byte("version: 2\nethernets:\n  eth0: {match: {macaddress: \"52:54:00:00:00:01\"}, set-name: eth0, dhcp4: true}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	userData := filepath.Join(dir, "user-data")
	if err := os.WriteFile(userData, []byte("#cloud-config\nhostname: old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		bin  string
		args []string
		file string // written by the verb, under dir
	}{
		{"earlyinit-initrd", []string{"version"}, ""},
		{"earlyinit-initrd", []string{"net-convert", "-p", netcfg, "-k", "yaml", "-d", filepath.Join(dir, "initrd"), "-O", "networkd"}, "initrd/etc/systemd/network/10-cloud-init-eth0.network"},
		{"earlyinit", []string{"net-convert", "-p", netcfg, "-k", "yaml", "-d", filepath.Join(dir, "full"), "-O", "sysconfig"}, "full/etc/sysconfig/network-scripts/ifcfg-eth0"},
		{"earlyinit", []string{"schema", "--config-file", userData}, ""},
		{"earlyinit", []string{"mkseed", filepath.Join(dir, "seed.iso"), userData}, "seed.iso"},
	} {
		out, err := exec.Command(filepath.Join(bin, c.bin), c.args...).CombinedOutput()
		if err != nil {
			t.Errorf("%s %v: %v\n%s", c.bin, c.args, err, out)
			continue
		}
		if c.file != "" {
			if _, err := os.Stat(filepath.Join(dir, c.file)); err != nil {
				t.Errorf("%s %v: %v\n%s", c.bin, c.args, err, out)
			}
		}
	}
}
