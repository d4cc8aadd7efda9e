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

// NIC is a network card. Netdev is "user" for QEMU's user network, always
// with restrict=on (the guest reaches nothing outside the VM: QEMU's DHCP,
// DNS and the host forwards still work), "tap:NAME" for an existing tap
// device, or "" for a card with no backend (no link).
type NIC struct {
	MAC    string
	Model  string // "virtio-net-pci" (default), "e1000"
	Netdev string
	// HostFwd are the user network's forwards from this machine into the
	// guest, as QEMU's hostfwd= ("tcp:127.0.0.1:2222-:22"); only
	// 127.0.0.1 may be the host address.
	HostFwd []string
}

// UserNetdev is the -netdev value of a user-network NIC with id: always
// restrict=on, and each host forward bound to 127.0.0.1.
func (n NIC) UserNetdev(id string) (string, error) {
	v := "user,id=" + id + ",restrict=on"
	for _, f := range n.HostFwd {
		proto, rest, _ := strings.Cut(f, ":")
		if (proto != "tcp" && proto != "udp") || !strings.HasPrefix(rest, "127.0.0.1:") || strings.Contains(f, ",") {
			return "", fmt.Errorf("hostfwd %q: want tcp:127.0.0.1:PORT-:PORT", f)
		}
		v += ",hostfwd=" + f
	}
	return v, nil
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
			nd, err := n.UserNetdev(id)
			if err != nil {
				// Never a user network without restrict=on: a card
				// with no backend instead, and the test sees no link.
				continue
			}
			args = append(args, "-netdev", nd)
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
	m, err := Start(ctx, c)
	if err != nil {
		return nil, err
	}
	return m.Wait()
}

// Machine is a VM that runs while the caller talks to it (over a host
// forward, say); Wait waits for it to power off.
type Machine struct {
	c      Config
	cmd    *exec.Cmd
	buf    syncBuffer
	ctx    context.Context
	cancel context.CancelFunc
	t0     time.Time
	done   chan struct{}
	err    error
}

// Start boots the VM and returns at once; the timeout runs from now.
func Start(ctx context.Context, c Config) (*Machine, error) {
	if c.Timeout == 0 {
		c.Timeout = 5 * time.Minute
	}
	m := &Machine{c: c, done: make(chan struct{})}
	m.ctx, m.cancel = context.WithTimeout(ctx, c.Timeout)
	args := c.Args()
	m.cmd = exec.CommandContext(m.ctx, args[0], args[1:]...)
	var w io.Writer = &m.buf
	if c.Console != nil {
		w = io.MultiWriter(&m.buf, c.Console)
	}
	m.cmd.Stdout, m.cmd.Stderr, m.cmd.Stdin = w, w, nil
	m.cmd.WaitDelay = 5 * time.Second
	m.t0 = time.Now()
	if err := m.cmd.Start(); err != nil {
		m.cancel()
		return nil, fmt.Errorf("qemu: %w", err)
	}
	go func() {
		m.err = m.cmd.Wait()
		close(m.done)
	}()
	return m, nil
}

// Console is what the serial console showed so far.
func (m *Machine) Console() string { return m.buf.String() }

// Done is closed when QEMU has exited.
func (m *Machine) Done() <-chan struct{} { return m.done }

// Stop kills the VM (a power cut) and waits for QEMU to exit.
func (m *Machine) Stop() {
	m.cancel()
	<-m.done
}

// Wait waits until the VM powers off or its timeout ends, and returns
// what it left.
func (m *Machine) Wait() (*Result, error) {
	<-m.done
	timedOut := m.ctx.Err() != nil
	m.cancel()
	res := &Result{Console: m.buf.String(), Duration: time.Since(m.t0), Accel: Accel(m.c.Kernel)}
	if timedOut {
		return res, fmt.Errorf("%w (%s)", ErrTimeout, m.c.Timeout)
	}
	if m.err != nil {
		return res, fmt.Errorf("qemu: %w", m.err)
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
