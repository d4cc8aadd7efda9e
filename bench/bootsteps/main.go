// Command bootsteps boots the demo VM (qemu-tests/demo: a busybox root, an
// OpenStack config drive, two NICs) with two or more earlyinit initramfs
// images, alternating, and prints the boot's own time per step side by
// side: the median over the runs of each step of the boot record
// (/run/earlyinit/boot.json, which the root's test init copies to
// /seen/boot.json), then `earlyinit analyze` of each image's first run.
//
//	bootsteps -kernel /boot/vmlinuz-K -initrd before=OLD.img -initrd after=build/initramfs.img [-runs 3]
//
// Figures, not assertions: a run that failed is listed and left out of the
// medians; the exit status is 1 only when an image had no good run. Under
// TCG (no usable KVM) every figure is many times what it is on KVM.
// bench/before-after.sh runs it for `make bench`.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/vm"
)

// image is one initramfs under test.
type image struct {
	label, path string
	records     []boot.Record
	analyze     string // `earlyinit analyze` of the first good run
	failed      []string
}

type initrds []*image

func (l *initrds) String() string { return fmt.Sprint(*l) }

func (l *initrds) Set(v string) error {
	label, path, ok := strings.Cut(v, "=")
	if !ok || label == "" || path == "" {
		return fmt.Errorf("-initrd %q: want LABEL=PATH", v)
	}
	*l = append(*l, &image{label: label, path: path})
	return nil
}

func main() {
	kernel := flag.String("kernel", "", "kernel image")
	var imgs initrds
	flag.Var(&imgs, "initrd", "LABEL=PATH of an earlyinit initramfs (repeat to compare)")
	runs := flag.Int("runs", 3, "boots of each image")
	bin := flag.String("earlyinit", "build/earlyinit", "earlyinit binary whose analyze verb reads the boot records")
	consoles := flag.String("consoles", "build/bench-boot", "directory for each boot's console")
	flag.Parse()
	if *kernel == "" || len(imgs) == 0 {
		fmt.Fprintln(os.Stderr, "bootsteps: -kernel and -initrd are required")
		os.Exit(2)
	}
	if err := run(*kernel, imgs, *runs, *bin, *consoles, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "bootsteps: %v\n", err)
		os.Exit(1)
	}
}

func run(kernel string, imgs initrds, runs int, bin, consoles string, w io.Writer) error {
	for _, im := range imgs {
		if _, err := os.Stat(im.path); err != nil {
			return fmt.Errorf("initrd %s: %w", im.label, err)
		}
	}
	if err := os.MkdirAll(consoles, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "bench-bootsteps")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	d, err := newDemo(tmp)
	if err != nil {
		return fmt.Errorf("demo disks: %w", err)
	}
	fmt.Fprintf(w, "demo VM boots (accel %s), %d runs of each image, alternating:\n", vm.Accel(kernel), runs)
	for i := 1; i <= runs; i++ {
		for _, im := range imgs {
			rec, err := d.boot(kernel, im.path, filepath.Join(consoles, fmt.Sprintf("%s-%d.console", im.label, i)))
			if err != nil {
				im.failed = append(im.failed, fmt.Sprintf("run %d: %v", i, err))
				fmt.Fprintf(w, "  %s run %d: FAILED: %v\n", im.label, i, err)
				continue
			}
			fmt.Fprintf(w, "  %s run %d: total %s\n", im.label, i, rec.Total.Round(time.Millisecond))
			im.records = append(im.records, *rec)
			if im.analyze == "" {
				im.analyze = analyze(bin, *rec)
			}
		}
	}
	fmt.Fprintln(w)
	printTable(w, imgs)
	for _, im := range imgs {
		if im.analyze != "" {
			fmt.Fprintf(w, "\nearlyinit analyze, %s (first run):\n%s", im.label, im.analyze)
		}
	}
	var none []string
	for _, im := range imgs {
		if len(im.records) == 0 {
			none = append(none, im.label)
		}
	}
	if len(none) > 0 {
		return fmt.Errorf("no good run of %s", strings.Join(none, ", "))
	}
	return nil
}

// demo holds the demo's pristine disks; each boot gets a copy of the root
// (earlyinit writes into it, and a second boot of one disk is no first
// boot).
type demo struct {
	dir, root, iso string
}

// newDemo makes the demo's disks as qemu-tests/demo does: a busybox root
// that looks like a systemd distribution, and an OpenStack config drive.
func newDemo(dir string) (*demo, error) {
	root := filepath.Join(dir, "root")
	img := filepath.Join(dir, "root.img")
	if err := vm.BusyboxRoot(root); err != nil {
		return nil, err
	}
	if err := vm.WriteTree(root, map[string]string{"usr/sbin/ip": "", "bin/systemctl": "", "usr/lib/systemd/systemd-udevd": ""}); err != nil {
		return nil, err
	}
	if err := vm.Ext4(img, root, "demo-root", "", 32); err != nil {
		return nil, err
	}
	seed := filepath.Join(dir, "seed")
	iso := filepath.Join(dir, "config-2.iso")
	if err := vm.WriteTree(seed, vm.DemoDrive()); err != nil {
		return nil, err
	}
	if err := vm.ISO(iso, seed, "config-2"); err != nil {
		return nil, err
	}
	return &demo{dir: dir, root: img, iso: iso}, nil
}

// boot boots a copy of the root with initrd and returns the boot record
// the root's init kept; the console goes to consoleFile.
func (d *demo) boot(kernel, initrd, consoleFile string) (*boot.Record, error) {
	disk := filepath.Join(d.dir, "run.img")
	if err := copyFile(d.root, disk); err != nil {
		return nil, err
	}
	defer os.Remove(disk)
	console, err := os.Create(consoleFile)
	if err != nil {
		return nil, err
	}
	defer console.Close()
	cfg := vm.Config{
		Kernel: kernel, Initrd: initrd,
		Append:  "console=ttyS0 panic=-1 root=LABEL=demo-root rw quiet",
		Disks:   []vm.Disk{{Path: disk}, {Path: d.iso, If: "ide-cd"}},
		NICs:    []vm.NIC{{MAC: "fa:16:3e:00:00:0b"}, {MAC: "fa:16:3e:00:00:0a"}},
		RNG:     true,
		Console: console,
		Timeout: 5 * time.Minute,
	}
	if _, err := vm.Run(context.Background(), cfg); err != nil {
		return nil, fmt.Errorf("%w (console: %s)", err, consoleFile)
	}
	s, err := vm.Cat(disk, "/seen/boot.json")
	if err != nil || s == "" {
		return nil, fmt.Errorf("no /seen/boot.json on the root (%v): see %s", err, consoleFile)
	}
	var rec boot.Record
	if err := json.Unmarshal([]byte(s), &rec); err != nil {
		return nil, fmt.Errorf("/seen/boot.json: %w", err)
	}
	return &rec, nil
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

// analyze is `earlyinit analyze` of a record, or why there is none.
func analyze(bin string, rec boot.Record) string {
	dir, err := os.MkdirTemp("", "bench-analyze")
	if err != nil {
		return fmt.Sprintf("(%v)\n", err)
	}
	defer os.RemoveAll(dir)
	if err := vm.WriteTree(dir, map[string]string{"run/earlyinit/boot.json": string(rec.Marshal())}); err != nil {
		return fmt.Sprintf("(%v)\n", err)
	}
	cmd := exec.Command(bin, "analyze", "--root", dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Sprintf("(%s analyze: %v: %s)\n", bin, err, strings.TrimSpace(stderr.String()))
	}
	return string(out)
}

// row is one line of the table: a name and how to read its time from a
// record (false when the record has none).
type row struct {
	name string
	get  func(boot.Record) (time.Duration, bool)
}

// rows are the steps, in the order the images' records first name them,
// then the record's totals.
func rows(imgs initrds) []row {
	var out []row
	seen := map[string]bool{}
	for _, im := range imgs {
		for _, rec := range im.records {
			for _, s := range rec.Steps {
				if seen[s.Name] {
					continue
				}
				seen[s.Name] = true
				name := s.Name
				out = append(out, row{"step " + name, func(r boot.Record) (time.Duration, bool) { return stepTime(r, name) }})
			}
		}
	}
	always := func(f func(boot.Record) time.Duration) func(boot.Record) (time.Duration, bool) {
		return func(r boot.Record) (time.Duration, bool) { return f(r), true }
	}
	return append(out,
		row{"total (to switch_root)", always(func(r boot.Record) time.Duration { return r.Total })},
		row{"module loading", always(func(r boot.Record) time.Duration { return r.ModuleLoad })},
		row{"device waits", always(func(r boot.Record) time.Duration { return r.DeviceWait })},
		row{"metadata service", always(func(r boot.Record) time.Duration { return r.NetworkWait })},
		row{"earlyinit's own", always(func(r boot.Record) time.Duration {
			return r.Total - r.ModuleLoad - r.DeviceWait - r.NetworkWait
		})},
	)
}

// stepTime is the time of the steps named name in r (summed, should a step
// run twice).
func stepTime(r boot.Record, name string) (time.Duration, bool) {
	var d time.Duration
	found := false
	for _, s := range r.Steps {
		if s.Name == name {
			d += s.Duration
			found = true
		}
	}
	return d, found
}

// printTable prints each row's median per image, side by side, and the
// last image's change against the first.
func printTable(w io.Writer, imgs initrds) {
	fmt.Fprintf(w, "%-26s", "median per image")
	for _, im := range imgs {
		fmt.Fprintf(w, " %12s", im.label)
	}
	if len(imgs) > 1 {
		fmt.Fprintf(w, " %9s", "change")
	}
	fmt.Fprintln(w)
	for _, r := range rows(imgs) {
		fmt.Fprintf(w, "%-26s", r.name)
		var meds []time.Duration
		for _, im := range imgs {
			var ds []time.Duration
			for _, rec := range im.records {
				if d, ok := r.get(rec); ok {
					ds = append(ds, d)
				}
			}
			if len(ds) == 0 {
				fmt.Fprintf(w, " %12s", "-")
				meds = append(meds, -1)
				continue
			}
			m := median(ds)
			meds = append(meds, m)
			fmt.Fprintf(w, " %12s", m.Round(100*time.Microsecond))
		}
		if len(meds) > 1 {
			first, last := meds[0], meds[len(meds)-1]
			if first > 0 && last >= 0 {
				fmt.Fprintf(w, " %+8.0f%%", 100*(float64(last)-float64(first))/float64(first))
			}
		}
		fmt.Fprintln(w)
	}
	for _, im := range imgs {
		for _, f := range im.failed {
			fmt.Fprintf(w, "%s %s\n", im.label, f)
		}
	}
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
