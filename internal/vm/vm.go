// Package vm boots a kernel and an initramfs under QEMU for earlyinit's
// integration tests and demo: KVM when it really works, TCG otherwise,
// serial console captured, disks and NICs attached as the test asks.
package vm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Disk is a drive attached to the VM.
type Disk struct {
	Path string
	// If is how it is attached: "virtio" (default), "ide-cd" (an IDE
	// CD-ROM, /dev/sr0), "ide-hd", "scsi-cd", "nvme".
	If       string
	ReadOnly bool
}

// NIC is a network card. Netdev is "user" for QEMU's user network, "tap:NAME"
// for an existing tap device, or "" for a card with no backend (no link).
type NIC struct {
	MAC    string
	Model  string // "virtio-net-pci" (default), "e1000"
	Netdev string
}

// Config is one VM.
type Config struct {
	Kernel, Initrd string
	Append         string
	Disks          []Disk
	NICs           []NIC
	RNG            bool // attach virtio-rng
	// SMBIOS are QEMU -smbios values, one per table, for a platform's
	// DMI strings: "type=1,manufacturer=OpenStack Foundation,product=OpenStack Nova",
	// "type=3,asset=OpenTelekomCloud". A comma inside a value is doubled, as QEMU wants.
	SMBIOS   []string
	MemoryMB int
	// Timeout bounds the whole run; the VM is killed after it.
	Timeout time.Duration
	// Console, if set, receives the serial console live.
	Console io.Writer
	// Wrap runs QEMU under another command (e.g. "ip netns exec NS").
	Wrap []string
}

// Result is what a finished VM left.
type Result struct {
	Console  string
	Duration time.Duration
	Accel    string
}

var (
	accelOnce sync.Once
	accel     string
)

// Accel returns "kvm" when /dev/kvm can really run a guest here, else
// "tcg". /dev/kvm may exist and still hang QEMU, so a tiny guest is booted
// under KVM with a short bound; EARLYINIT_ACCEL overrides the probe.
func Accel(kernel string) string {
	accelOnce.Do(func() {
		if a := os.Getenv("EARLYINIT_ACCEL"); a != "" {
			accel = a
			return
		}
		accel = "tcg"
		if _, err := os.Stat("/dev/kvm"); err != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		defer cancel()
		// No initrd and no root: the kernel panics at once and, with
		// panic=-1 and -no-reboot, QEMU exits. Only a working KVM gets
		// there in time.
		cmd := exec.CommandContext(ctx, "qemu-system-x86_64", "-accel", "kvm", "-cpu", "host", "-m", "256",
			"-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot",
			"-kernel", kernel, "-append", "console=ttyS0 panic=-1 root=/dev/nonexistent")
		out, _ := cmd.CombinedOutput()
		if ctx.Err() == nil && bytes.Contains(out, []byte("Kernel panic")) {
			accel = "kvm"
		}
	})
	return accel
}

// Args returns QEMU's command line for c.
func (c Config) Args() []string {
	a := Accel(c.Kernel)
	mem := c.MemoryMB
	if mem == 0 {
		mem = 512
	}
	cpu := "max"
	if a == "kvm" {
		cpu = "host"
	}
	args := []string{"qemu-system-x86_64", "-accel", a, "-cpu", cpu, "-M", "pc", "-m", fmt.Sprint(mem),
		"-display", "none", "-monitor", "none", "-serial", "stdio", "-no-reboot",
		"-kernel", c.Kernel, "-initrd", c.Initrd, "-append", c.Append}
	scsi := false
	for i, d := range c.Disks {
		id := fmt.Sprintf("d%d", i)
		drive := fmt.Sprintf("file=%s,format=raw,if=none,id=%s", d.Path, id)
		if d.ReadOnly || strings.HasSuffix(d.If, "-cd") {
			drive += ",readonly=on"
		}
		args = append(args, "-drive", drive)
		switch d.If {
		case "", "virtio":
			args = append(args, "-device", "virtio-blk-pci,drive="+id)
		case "ide-cd", "ide-hd":
			args = append(args, "-device", d.If+",drive="+id)
		case "scsi-cd", "scsi-hd":
			if !scsi {
				args = append(args, "-device", "virtio-scsi-pci,id=scsi0")
				scsi = true
			}
			args = append(args, "-device", d.If+",bus=scsi0.0,drive="+id)
		case "nvme":
			args = append(args, "-device", fmt.Sprintf("nvme,serial=nvme%d,drive=%s", i, id))
		}
	}
	// No default NIC: only the cards the test asks for.
	args = append(args, "-nic", "none")
	for i, n := range c.NICs {
		model := n.Model
		if model == "" {
			model = "virtio-net-pci"
		}
		id := fmt.Sprintf("n%d", i)
		dev := fmt.Sprintf("%s,mac=%s", model, n.MAC)
		switch {
		case n.Netdev == "user":
			args = append(args, "-netdev", "user,id="+id)
			dev += ",netdev=" + id
		case strings.HasPrefix(n.Netdev, "tap:"):
			args = append(args, "-netdev", fmt.Sprintf("tap,id=%s,ifname=%s,script=no,downscript=no", id, n.Netdev[4:]))
			dev += ",netdev=" + id
		}
		args = append(args, "-device", dev)
	}
	for _, t := range c.SMBIOS {
		args = append(args, "-smbios", t)
	}
	if c.RNG {
		args = append(args, "-object", "rng-random,id=rng0,filename=/dev/urandom", "-device", "virtio-rng-pci,rng=rng0")
	}
	return append(c.Wrap, args...)
}

// ErrTimeout is returned when the VM did not stop by itself in time.
var ErrTimeout = errors.New("VM did not power off within its timeout")

// Run boots the VM and waits until it powers off (or the kernel reboots,
// which -no-reboot turns into an exit) or the timeout ends.
func Run(ctx context.Context, c Config) (*Result, error) {
	if c.Timeout == 0 {
		c.Timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	args := c.Args()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var buf syncBuffer
	var w io.Writer = &buf
	if c.Console != nil {
		w = io.MultiWriter(&buf, c.Console)
	}
	cmd.Stdout = w
	cmd.Stderr = w
	cmd.Stdin = nil
	t0 := time.Now()
	err := cmd.Run()
	res := &Result{Console: buf.String(), Duration: time.Since(t0), Accel: Accel(c.Kernel)}
	if ctx.Err() != nil {
		return res, fmt.Errorf("%w (%s)", ErrTimeout, c.Timeout)
	}
	if err != nil {
		return res, fmt.Errorf("qemu: %w", err)
	}
	return res, nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Kernel returns /boot/vmlinuz-<kver>.
func Kernel(kver string) string { return filepath.Join("/boot", "vmlinuz-"+kver) }
