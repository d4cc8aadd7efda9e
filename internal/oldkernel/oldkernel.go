// Package oldkernel runs a test as on an older Linux kernel: in a child
// process of the test binary under a seccomp filter that answers what
// that kernel answers. Every system call numbered from the first one the
// kernel did not have fails with ENOSYS (an old kernel's answer to a
// number it does not know), and each Rule makes one call, or one call
// with one argument (an ioctl request, a flag), fail with the errno the
// old kernel gives for it (ENOTTY for an ioctl it does not know, EINVAL
// for a flag it does not know).
//
// It is how earlyinit checks, without booting a CentOS 7 kernel, that
// every system call newer than its oldest supported kernel falls back:
// the code under test, Go's runtime and standard library (crypto/rand
// without getrandom, os/exec without pidfds, file copies without
// copy_file_range) and the commands the test runs all meet the old
// kernel's answers. What a seccomp filter cannot show is not emulated:
// the vDSO (Go reads the clock, and on Linux 6.11 and later random
// bytes, without a system call), file-system and driver behaviour, and
// /proc and /sys contents.
//
// Use:
//
//	func TestOnLinux310(t *testing.T) {
//		if !oldkernel.Run(t, oldkernel.Linux310()) {
//			return // the parent: the child ran the test and reported
//		}
//		// The child, under the filter: the test's body.
//	}
package oldkernel

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Kernel is what an older kernel answers differently from the running one.
type Kernel struct {
	// Name is for messages ("Linux 3.10").
	Name string
	// FirstUnknown is the first system call number the kernel does not
	// have (on the running architecture): it and every higher number
	// fail with ENOSYS. 0 leaves all numbers alone.
	FirstUnknown uint32
	// Rules are checked first, in order.
	Rules []Rule
}

// Rule makes one system call fail with Errno: every call of Nr, or only
// those whose argument Arg (0-5) has Value in its low 32 bits (Mask:
// any bit of Value set).
type Rule struct {
	Name   string // for messages: "openat2", "ioctl XFS_IOC_FSGEOMETRY"
	Nr     uint32
	HasArg bool
	Arg    int
	Value  uint32
	Mask   bool
	Errno  unix.Errno
}

// Call is a Rule failing every call of nr with errno.
func Call(name string, nr uintptr, errno unix.Errno) Rule {
	return Rule{Name: name, Nr: uint32(nr), Errno: errno}
}

// CallArg is a Rule failing the calls of nr whose argument arg is value
// (its low 32 bits: an ioctl request) with errno.
func CallArg(name string, nr uintptr, arg int, value uint32, errno unix.Errno) Rule {
	return Rule{Name: name, Nr: uint32(nr), HasArg: true, Arg: arg, Value: value, Errno: errno}
}

// CallFlag is a Rule failing the calls of nr whose argument arg has any
// bit of mask set with errno.
func CallFlag(name string, nr uintptr, arg int, mask uint32, errno unix.Errno) Rule {
	return Rule{Name: name, Nr: uint32(nr), HasArg: true, Arg: arg, Value: mask, Mask: true, Errno: errno}
}

// Linux310 is the system call table of Linux 3.10 (CentOS 7, RHEL 7):
// finit_module (3.8) is its newest call, and every number after it
// (sched_setattr, 3.14, onwards: renameat2, getrandom, memfd_create,
// copy_file_range, statx, pidfd_*, clone3, openat2, faccessat2...) fails
// with ENOSYS. sched_setattr follows finit_module in both the x86-64 table
// (313, 314) and the generic one arm64 uses (273, 274).
func Linux310() Kernel {
	return Kernel{Name: "Linux 3.10", FirstUnknown: uint32(unix.SYS_SCHED_SETATTR)}
}

// With returns k with rules added.
func (k Kernel) With(rules ...Rule) Kernel {
	k.Rules = append(append([]Rule(nil), k.Rules...), rules...)
	return k
}

// env carries the kernel and the test's name to the child.
const env = "EARLYINIT_OLDKERNEL"

type childSpec struct {
	Test   string
	Kernel Kernel
}

var (
	installOnce sync.Once
	installErr  error
	installed   string
)

// Run runs t's test again in a child process under k's filter and
// returns false: the caller returns, the child's result is t's. In the
// child it installs the filter (for the whole process, irrevocably) and
// returns true: the caller goes on with the test's body. The child runs
// only t's test (-test.run), with -test.v; its output is t's log. A child
// that skipped skips t. The filter needs Linux 3.17 (seccomp's TSYNC) on
// the machine running the test, and amd64 or arm64.
func Run(t *testing.T, k Kernel) bool {
	t.Helper()
	if raw := os.Getenv(env); raw != "" {
		var spec childSpec
		if err := json.Unmarshal([]byte(raw), &spec); err != nil {
			t.Fatalf("%s: %v", env, err)
		}
		if spec.Test != t.Name() {
			t.Skipf("the child for %s runs only that test", spec.Test)
		}
		installOnce.Do(func() {
			installErr = install(spec.Kernel)
			installed = spec.Kernel.Name
		})
		if installErr != nil {
			t.Fatalf("install the %s filter: %v", spec.Kernel.Name, installErr)
		}
		t.Logf("running as on %s (seccomp filter installed)", installed)
		return true
	}
	if _, ok := auditArch(); !ok {
		t.Skipf("no seccomp filter for %s", runtime.GOARCH)
	}
	raw, err := json.Marshal(childSpec{Test: t.Name(), Kernel: k})
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.run=" + runPattern(t.Name()), "-test.v", "-test.count=1"}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(d).Round(time.Second).String())
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env+"="+string(raw))
	out, err := cmd.CombinedOutput()
	text := string(out)
	switch {
	case err != nil:
		t.Fatalf("the test as on %s failed (%v):\n%s", k.Name, err, text)
	case strings.Contains(text, "--- SKIP: "+t.Name()+" "):
		t.Skipf("as on %s: skipped:\n%s", k.Name, text)
	case !strings.Contains(text, "--- PASS: "+t.Name()+" "):
		t.Fatalf("the child did not run %s:\n%s", t.Name(), text)
	}
	if testing.Verbose() {
		t.Logf("as on %s:\n%s", k.Name, text)
	}
	return false
}

// runPattern is the -test.run pattern matching exactly test, a name
// t.Name() gave (subtests separated by "/").
func runPattern(test string) string {
	parts := strings.Split(test, "/")
	for i, p := range parts {
		parts[i] = "^" + regexp.QuoteMeta(p) + "$"
	}
	return strings.Join(parts, "/")
}

// auditArch is the AUDIT_ARCH_ value seccomp reports for the running
// architecture's native calls; false where the filter is not written for
// it (the argument offsets assume little-endian 64-bit).
func auditArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	}
	return 0, false
}

// seccomp_data (linux/seccomp.h): nr, arch, instruction pointer, args.
const (
	offNr   = 0
	offArch = 4
	offArgs = 16
)

// program is k's filter as classic BPF, for install and for tests.
func program(k Kernel) ([]unix.SockFilter, error) {
	arch, ok := auditArch()
	if !ok {
		return nil, fmt.Errorf("no seccomp filter for %s", runtime.GOARCH)
	}
	ld := func(off uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: off}
	}
	jeq := func(v uint32, jt, jf uint8) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: v, Jt: jt, Jf: jf}
	}
	ret := func(v uint32) unix.SockFilter {
		return unix.SockFilter{Code: unix.BPF_RET | unix.BPF_K, K: v}
	}
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e)&0xffff }

	var body []unix.SockFilter
	for _, r := range k.Rules {
		if !r.HasArg {
			body = append(body, jeq(r.Nr, 0, 1), ret(errno(r.Errno)))
			continue
		}
		if r.Arg < 0 || r.Arg > 5 {
			return nil, fmt.Errorf("rule %s: argument %d", r.Name, r.Arg)
		}
		test := jeq(r.Value, 0, 1)
		if r.Mask {
			test = unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K, K: r.Value, Jt: 0, Jf: 1}
		}
		body = append(body,
			jeq(r.Nr, 0, 4),
			ld(offArgs+8*uint32(r.Arg)), // the low half, little-endian
			test,
			ret(errno(r.Errno)),
			ld(offNr),
		)
	}
	if k.FirstUnknown != 0 {
		body = append(body,
			unix.SockFilter{Code: unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, K: k.FirstUnknown, Jt: 0, Jf: 1},
			ret(errno(unix.ENOSYS)),
		)
	}
	if len(body) > 200 {
		return nil, fmt.Errorf("%d rules: too many for one filter", len(k.Rules))
	}
	prog := []unix.SockFilter{
		ld(offArch),
		// Another architecture's calls (x32, i386 on amd64): allowed.
		jeq(arch, 0, uint8(len(body)+1)),
		ld(offNr),
	}
	prog = append(prog, body...)
	return append(prog, ret(unix.SECCOMP_RET_ALLOW)), nil
}

// install sets no_new_privs and k's filter on every thread of the process
// (SECCOMP_FILTER_FLAG_TSYNC): Go's threads, and every thread and command
// started later, inherit it.
func install(k Kernel) error {
	prog, err := program(k)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("PR_SET_NO_NEW_PRIVS: %w", err)
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	r, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("seccomp: %w", errno)
	}
	if r != 0 {
		return fmt.Errorf("seccomp: thread %d could not take the filter", r)
	}
	return nil
}
