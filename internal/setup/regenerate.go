package setup

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/proc"
)

// ErrNoGenerator is returned by Plan for distro and off when the system has
// kernels but neither initramfs-tools nor dracut.
var ErrNoGenerator = errors.New("no initramfs generator: neither initramfs-tools (update-initramfs) nor dracut is installed")

// Exec runs one command line; argv[0] is looked up in PATH.
type Exec interface {
	Run(argv []string) error
}

// System is what regenerating a root's initramfs images needs to know.
type System struct {
	// Root is the system's root: "/" for the running system, or the
	// directory of a system image.
	Root string
	// Chroot is set for a Root other than "/": the distribution's
	// generator then runs in it through chroot(8), and earlyinit's own
	// with --root Root.
	Chroot bool
	// Generator is the distribution's initramfs generator.
	Generator Generator
	// Kernels are the installed kernel versions.
	Kernels []string
	// Self is earlyinit's own executable, which builds mode own's images.
	Self string
}

// Inspect returns the System under root, with self as earlyinit's
// executable.
func Inspect(root, self string) (System, error) {
	k, err := Kernels(root)
	if err != nil {
		return System{}, err
	}
	return System{Root: root, Chroot: filepath.Clean(root) != "/", Generator: DetectGenerator(root), Kernels: k, Self: self}, nil
}

// Plan returns the commands that regenerate every installed kernel's
// initramfs for mode m, in order. With no kernels there is nothing to do.
//
//   - own: `earlyinit initramfs --kver KVER` per kernel (the verb picks the
//     distribution's file name in /boot).
//   - distro and off with initramfs-tools: `update-initramfs -u -k KVER`
//     per kernel whose /boot/initrd.img-KVER exists, `-c -k KVER` for one
//     that has none (-u only updates existing images). Per kernel rather
//     than `-k all`, which is the same loop over the images that exist.
//   - distro and off with dracut: `dracut --force --kver KVER` per kernel,
//     to dracut's default output for the distribution (Debian's dracut
//     writes /boot/initrd.img-KVER, Fedora's /boot/initramfs-KVER.img or
//     the BLS entry's initrd).
//
// The hooks and the dracut module read the mode from StateFile while the
// generator runs, so it must be written first.
func (s System) Plan(m Mode) ([][]string, error) {
	if _, err := ParseMode(string(m)); err != nil {
		return nil, err
	}
	if len(s.Kernels) == 0 {
		return nil, nil
	}
	var cmds [][]string
	if m == Own {
		if s.Self == "" {
			return nil, errors.New("own mode: earlyinit's own executable is unknown")
		}
		for _, k := range s.Kernels {
			c := []string{s.Self, "initramfs", "--kver", k}
			if s.Chroot {
				c = append(c, "--root", s.Root)
			}
			cmds = append(cmds, c)
		}
		return cmds, nil
	}
	for _, k := range s.Kernels {
		var c []string
		switch s.Generator {
		case InitramfsTools:
			op := "-c"
			if isFile(s.Root, "/boot/initrd.img-"+k) {
				op = "-u"
			}
			c = []string{"update-initramfs", op, "-k", k}
		case Dracut:
			c = []string{"dracut", "--force", "--kver", k}
		default:
			return nil, fmt.Errorf("mode %s under %s: %w", m, s.Root, ErrNoGenerator)
		}
		if s.Chroot {
			c = append([]string{"chroot", s.Root}, c...)
		}
		cmds = append(cmds, c)
	}
	return cmds, nil
}

// Regenerate runs the Plan for m with ex. A failing command does not stop
// the others (each kernel gets its image if it can); the errors are
// returned together, each naming its command.
func (s System) Regenerate(ex Exec, m Mode, log io.Writer) error {
	cmds, err := s.Plan(m)
	if err != nil {
		return err
	}
	if len(cmds) == 0 {
		fmt.Fprintf(log, "earlyinit setup: no installed kernel under %s (/lib/modules/KVER with /boot/vmlinuz-KVER): no initramfs to regenerate\n", s.Root)
		return nil
	}
	var errs []error
	for _, c := range cmds {
		fmt.Fprintf(log, "earlyinit setup: running %s\n", strings.Join(c, " "))
		if err := ex.Run(c); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", strings.Join(c, " "), err))
		}
	}
	return errors.Join(errs...)
}

// defaultPath is the PATH commands run with when the caller has none
// (the generators live in sbin).
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// commandTimeout bounds one regenerating command by default: a generator
// takes seconds to a few minutes for one kernel; one that hangs must not
// hang the package's installation with it.
const commandTimeout = 30 * time.Minute

// SystemExec runs commands with os/exec, their output going to Stdout and
// Stderr, stdin closed.
type SystemExec struct {
	Stdout, Stderr io.Writer
	// Timeout bounds each command (0: commandTimeout).
	Timeout time.Duration
}

// Run runs argv and waits for it, through proc.Run: in a process group of
// its own, killed as a group after the Timeout; a child it leaves in the
// background holds nothing up.
func (e SystemExec) Run(argv []string) error {
	if len(argv) == 0 {
		return errors.New("empty command")
	}
	name := argv[0]
	env := os.Environ()
	if os.Getenv("PATH") == "" {
		// exec.Command looks names up in this process's PATH: look them
		// up in defaultPath instead, and give the command that PATH.
		env = append(env, "PATH="+defaultPath)
		if !strings.Contains(name, "/") {
			for _, dir := range filepath.SplitList(defaultPath) {
				if p := filepath.Join(dir, name); isExecutable(p) {
					name = p
					break
				}
			}
		}
	}
	timeout := e.Timeout
	if timeout == 0 {
		timeout = commandTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = e.Stdout, e.Stderr
	err := proc.Run(cmd)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("not done after %s, killed: %w", timeout, err)
	}
	return err
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
