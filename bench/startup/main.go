// Command startup times process start-up, side by side in one run: a
// static Go hello-world against `earlyinit version` (and, with -net, a
// two-NIC `earlyinit net-convert` against `cloud-init devel net-convert`,
// on the same input, for each renderer of -renderers). Runs alternate (A,
// B, A, B...) so that a busy host skews both alike; each figure is the
// median wall time from fork to exit of N runs. The host's load average
// is printed before and after: under load every figure grows, the
// hello-world's too. What the runs write goes to a tmpfs when the host
// has one at /dev/shm (outputBase says why), and the run prints where.
//
// The hello-world is built here with the flags the Makefile builds
// earlyinit with (CGO_ENABLED=0, -trimpath, -gcflags=all=-l, -s -w), so
// the difference is what earlyinit's own size and initialisation cost.
// -inittrace also prints the package initialisation earlyinit does before
// main (GODEBUG=inittrace=1), heaviest first. -before BINARY adds an older
// earlyinit (make bench: the tree before issue 18) to every comparison.
//
// Figures, not assertions: `make bench` (bench/before-after.sh) and
// bench/net-convert.sh (-startup=false) run it.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/inittrace"
)

const helloSrc = `package main

import "os"

func main() { os.Stdout.WriteString("hello, world\n") }
`

// buildFlags are the Makefile's, but for the version stamp.
var buildFlags = []string{"build", "-trimpath", "-gcflags=all=-l", "-ldflags=-s -w -buildid="}

func main() {
	earlyinit := flag.String("earlyinit", "build/earlyinit", "the earlyinit binary")
	before := flag.String("before", "", "an older earlyinit binary to time beside it")
	runs := flag.Int("runs", 200, "runs of each command")
	net := flag.Bool("net", false, "also time net-convert against cloud-init's")
	netRuns := flag.Int("net-runs", 10, "runs of each net-convert (cloud-init's takes about half a second)")
	renderers := flag.String("renderers", "networkd", "net-convert's renderers, comma-separated (networkd, netplan, sysconfig, eni, network-manager)")
	startup := flag.Bool("startup", true, "time the start-up (false: net-convert alone)")
	trace := flag.Int("inittrace", 10, "print earlyinit's N costliest package initialisations (0: none)")
	flag.Parse()
	fmt.Printf("load average before: %s\n", loadavg())
	if err := run(*earlyinit, *before, *runs, *startup, *net, *netRuns, strings.Split(*renderers, ","), *trace); err != nil {
		fmt.Fprintf(os.Stderr, "startup: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("load average after:  %s (%d CPUs)\n", loadavg(), runtime.NumCPU())
}

// loadavg is /proc/loadavg's 1, 5 and 15 minute averages.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func run(earlyinit, before string, runs int, startup, net bool, netRuns int, renderers []string, trace int) error {
	for _, bin := range []string{earlyinit, before} {
		if bin == "" {
			continue
		}
		if _, err := os.Stat(bin); err != nil {
			return fmt.Errorf("%s: %w (run make build)", bin, err)
		}
	}
	base, fsName := outputBase()
	tmp, err := os.MkdirTemp(base, "startup-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	fmt.Printf("files written under %s (%s)\n", tmp, fsName)
	if !startup {
		return netConvert(earlyinit, before, tmp, netRuns, renderers)
	}
	hello, err := buildHello(tmp)
	if err != nil {
		return err
	}
	cmds := [][]string{{hello}, {earlyinit, "version"}}
	if before != "" {
		cmds = append(cmds, []string{before, "version"})
	}
	res, cpu, err := sideBySide(runs, cmds...)
	if err != nil {
		return err
	}
	fmt.Printf("start-up, median of %d runs each, alternating (%d CPUs); wall, and the process's CPU time (user + system):\n", runs, runtime.NumCPU())
	fmt.Printf("  %-34s %8.2f ms   cpu %6.2f ms\n", "static hello-world", ms(res[0]), ms(cpu[0]))
	fmt.Printf("  %-34s %8.2f ms   cpu %6.2f ms   (+%.2f ms, cpu +%.2f ms; goal <= +2 ms)\n", "earlyinit version", ms(res[1]), ms(cpu[1]), ms(res[1]-res[0]), ms(cpu[1]-cpu[0]))
	if before != "" {
		fmt.Printf("  %-34s %8.2f ms   cpu %6.2f ms   (+%.2f ms, cpu +%.2f ms)\n", "earlyinit version, before", ms(res[2]), ms(cpu[2]), ms(res[2]-res[0]), ms(cpu[2]-cpu[0]))
	}
	if trace > 0 {
		if err := printInitTrace(earlyinit, "", trace); err != nil {
			return err
		}
		if before != "" {
			if err := printInitTrace(before, "before: ", trace); err != nil {
				return err
			}
		}
	}
	if net {
		if err := netConvert(earlyinit, before, tmp, netRuns, renderers); err != nil {
			return err
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// buildHello builds the hello-world into dir.
func buildHello(dir string) (string, error) {
	src := filepath.Join(dir, "hello")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(helloSrc), 0o644); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("module hello\n\ngo 1.21\n"), 0o644); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "hello.bin")
	cmd := exec.Command("go", append(buildFlags, "-o", out, ".")...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=", "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the hello-world: %w: %s", err, b)
	}
	return out, nil
}

// sideBySide runs each command runs times, alternating, and returns each
// one's median wall time and median CPU time (user + system, the kernel's
// account of the process: on a host busy with other work, where the wall
// time also counts the waits for a CPU, the steadier figure). A command
// that fails is an error: a figure of a failing run means nothing.
func sideBySide(runs int, cmds ...[]string) (wall, cpu []time.Duration, err error) {
	walls := make([][]time.Duration, len(cmds))
	cpus := make([][]time.Duration, len(cmds))
	for i := 0; i < runs; i++ {
		for j, argv := range cmds {
			w, c, err := timeRun(argv)
			if err != nil {
				return nil, nil, err
			}
			walls[j] = append(walls[j], w)
			cpus[j] = append(cpus[j], c)
		}
	}
	for j := range cmds {
		wall = append(wall, median(walls[j]))
		cpu = append(cpu, median(cpus[j]))
	}
	return wall, cpu, nil
}

func timeRun(argv []string) (wall, cpu time.Duration, err error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	var stderr bytes.Buffer
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr
	start := time.Now()
	err = cmd.Run()
	wall = time.Since(start)
	if err != nil {
		return 0, 0, fmt.Errorf("%s: %w: %s", strings.Join(argv, " "), err, strings.TrimSpace(stderr.String()))
	}
	return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	n := len(s)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// printInitTrace prints the n costliest package initialisations of one
// `earlyinit version`, and their sum.
func printInitTrace(earlyinit, label string, n int) error {
	cmd := exec.Command(earlyinit, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s version with GODEBUG=inittrace=1: %w", earlyinit, err)
	}
	inits, err := inittrace.Parse(stderr.String())
	if err != nil {
		return err
	}
	var total time.Duration
	var bytes, allocs int64
	for _, in := range inits {
		total += in.Clock
		bytes += in.Bytes
		allocs += in.Allocs
	}
	sort.SliceStable(inits, func(i, j int) bool { return inits[i].Clock > inits[j].Clock })
	fmt.Printf("%searlyinit's package initialisation (GODEBUG=inittrace=1, one run): %d packages, %.2f ms, %d bytes in %d allocations\n",
		label, len(inits), ms(total), bytes, allocs)
	for _, in := range inits[:min(n, len(inits))] {
		fmt.Printf("  %-58s %6.3f ms %8d B %5d allocs\n", in.Package, ms(in.Clock), in.Bytes, in.Allocs)
	}
	return nil
}

// outputBase is where the runs write: /dev/shm when it is a tmpfs, else
// the temporary directory. On a disk, ext4 writes a file's data out when
// a file it truncated to zero is closed (auto_da_alloc): each run
// rewriting the same files, that is about 1 ms of sysconfig's 7 files,
// the same for both tools, and most of what separates earlyinit's
// renderers from each other; in memory, the runs time the tools.
func outputBase() (dir, fsName string) {
	var st unix.Statfs_t
	if err := unix.Statfs("/dev/shm", &st); err == nil && st.Type == unix.TMPFS_MAGIC {
		return "/dev/shm", "tmpfs"
	}
	return os.TempDir(), "the temporary directory's filesystem: a disk's flushes count"
}

// netConvert times earlyinit's net-convert against cloud-init's on the
// two-NIC corpus case, alternating, for each renderer (and the older
// earlyinit's, when before is set). The distribution is debian, but for
// sysconfig: rhel (cloud-init has no sysconfig templates for debian).
func netConvert(earlyinit, before, tmp string, runs int, renderers []string) error {
	if _, err := exec.LookPath("cloud-init"); err != nil {
		return errors.New("cloud-init is not installed: run make deps")
	}
	const input = "internal/netcfg/render/testdata/corpus/nd-two-nics/network_data.json"
	if _, err := os.Stat(input); err != nil {
		return fmt.Errorf("%s: %w (run from the repository's top)", input, err)
	}
	for _, renderer := range renderers {
		distro := "debian"
		if renderer == "sysconfig" {
			distro = "rhel"
		}
		args := func(out string) []string {
			return []string{"net-convert", "-p", input, "-k", "network_data.json", "-d", filepath.Join(tmp, out, renderer), "-D", distro, "-O", renderer,
				"-m", "eth0,fa:16:3e:00:00:0a", "-m", "eth1,fa:16:3e:00:00:0b"}
		}
		ours := append([]string{earlyinit}, args("ours")...)
		theirs := append([]string{"cloud-init", "devel"}, args("theirs")...)
		cmds := [][]string{ours, theirs}
		if before != "" {
			cmds = append(cmds, append([]string{before}, args("before")...))
		}
		res, cpu, err := sideBySide(runs, cmds...)
		if err != nil {
			return err
		}
		fmt.Printf("net-convert, two-NIC network_data.json to %s (-D %s), median of %d runs each, alternating; wall, and CPU time:\n", renderer, distro, runs)
		fmt.Printf("  %-34s %8.2f ms   cpu %7.2f ms\n", "earlyinit net-convert", ms(res[0]), ms(cpu[0]))
		fmt.Printf("  %-34s %8.2f ms   cpu %7.2f ms\n", "cloud-init devel net-convert", ms(res[1]), ms(cpu[1]))
		fmt.Printf("  %-34s %8.1fx   cpu %6.1fx   (goal >= 50x)\n", "ratio", float64(res[1])/float64(res[0]), float64(cpu[1])/float64(cpu[0]))
		if before != "" {
			fmt.Printf("  %-34s %8.2f ms   ratio %.1fx\n", "earlyinit net-convert, before", ms(res[2]), float64(res[1])/float64(res[2]))
		}
	}
	return nil
}
