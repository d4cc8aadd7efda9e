//go:build !initrd

package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/initramfs"
	"github.com/earlyinit/earlyinit/internal/paths"
)

func init() {
	verbs["initramfs"] = &verbInitramfs
}

// verbInitramfs is the initramfs verb.
var verbInitramfs = verb{help: "build earlyinit's own initramfs for a kernel from this binary and /lib/modules/KVER",
	flags: func() *pflag.FlagSet { return new(initramfsOpts).flags() }, run: initramfsVerb}

// initramfsOpts are initramfs's flags.
type initramfsOpts struct{ kver, out, conf, root string }

func (o *initramfsOpts) flags() *pflag.FlagSet {
	fs := newFlags("initramfs")
	fs.StringVar(&o.kver, "kver", "", "the kernel release `KVER` whose modules go in (default: the newest ROOT/boot/vmlinuz-*)")
	fs.StringVarP(&o.out, "output", "o", "", "the output `FILE` (default: ROOT/boot/initrd.img-KVER on Debian/Ubuntu, initramfs-KVER.img on Fedora/RHEL/openEuler, initrd-KVER on SUSE)")
	fs.StringVar(&o.conf, "config", "", "the settings `FILE` (default: ROOT"+initramfs.ConfFile+"; defaults when that is missing)")
	fileFlag(fs, "output", "config")
	rootFlag(fs, &o.root, "/", "the root whose boot/, lib/modules/ and etc/ are used")
	return fs
}

func initramfsVerb(args []string) int {
	return runInitramfs(args, initrdBinary(paths.InitrdBinary, "/proc/self/exe"), os.Stdout, os.Stderr)
}

// initrdBinary is the earlyinit `earlyinit initramfs` packs as /init: the
// package's initramfs build (paths.InitrdBinary, built with tag initrd,
// without TLS) when it is installed, else self, the running binary (with
// TLS, some 0.4 MB more of initramfs).
func initrdBinary(initrd, self string) string {
	if fi, err := os.Stat(initrd); err == nil && fi.Mode().IsRegular() {
		return initrd
	}
	return self
}

// runInitramfs is `earlyinit initramfs`: it packs bin (static) as /init
// with the modules of one kernel, configured by initramfs.conf, into the
// file that kernel's bootloader entry already names. It prints one line
// saying what it wrote.
func runInitramfs(args []string, bin string, stdout, stderr io.Writer) int {
	var o initramfsOpts
	fl := o.flags()
	if err := fl.Parse(args); errors.Is(err, pflag.ErrHelp) {
		writeVerbHelp(stdout, "initramfs", fl)
		return 0
	} else if err != nil {
		fmt.Fprintf(stderr, "earlyinit initramfs: %v\nusage: %s\n", err, verbSynopsis("initramfs"))
		return 2
	}
	kver, out, conf, root := &o.kver, &o.out, &o.conf, &o.root
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "earlyinit initramfs: unexpected arguments %q\nusage: %s\n", fl.Args(), verbSynopsis("initramfs"))
		return 2
	}
	line, err := buildInitramfs(*root, *kver, *out, *conf, bin, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "earlyinit initramfs: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, line)
	return 0
}

func buildInitramfs(root, kver, out, confFile, bin string, stderr io.Writer) (string, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return "", err
	}
	c, err := readInitramfsConf(root, confFile)
	if err != nil {
		return "", err
	}
	if kver == "" {
		if kver, err = initramfs.NewestKernel(filepath.Join(root, "boot")); err != nil {
			return "", fmt.Errorf("%w; or name one with --kver", err)
		}
	}
	if out == "" {
		out = initramfs.DefaultOutput(root, kver)
	}
	o := initramfs.Options{
		KVer:        kver,
		ModulesRoot: root,
		Binary:      bin,
		Output:      out,
		Compression: c.Compress,
		ModulesAdd:  c.ModulesAdd,
		ModulesOmit: c.ModulesOmit,
		Log:         func(format string, args ...any) { fmt.Fprintf(stderr, format+"\n", args...) },
	}
	if c.HostOnly {
		if o.HostOnly, err = initramfs.Host("/proc/modules", "/proc/self/mounts", root, nil); err != nil {
			return "", fmt.Errorf("HOSTONLY=yes: %w", err)
		}
	} else if c.RootFS == "auto" {
		o.ModulesOmit = append(o.ModulesOmit, rootFSOmit(root, c.ModulesAdd, o.Log)...)
	}
	res, err := initramfs.Build(o)
	if err != nil {
		return "", err
	}
	name := bin
	if p, err := os.Executable(); err == nil && bin == "/proc/self/exe" {
		name = p
	}
	return fmt.Sprintf("%s: kernel %s, init %s, %d modules, cpio %.2f MB, %s %.2f MB", out, kver, name, res.Modules, float64(res.CPIOSize)/1e6, res.Compression, float64(res.Size)/1e6), nil
}

// rootFSOmit is what ROOTFS=auto leaves out of a generic image built in
// root: the root filesystem drivers its /etc/fstab does not mount "/"
// with, none when it names none, each choice logged.
func rootFSOmit(root string, add []string, log func(string, ...any)) []string {
	all := strings.Join(initramfs.RootFilesystems, ", ")
	f, err := os.Open(filepath.Join(root, "etc/fstab"))
	if err != nil {
		log("initramfs: root filesystem drivers: %s kept (/etc/fstab: %v)", all, err)
		return nil
	}
	mods, ok := initramfs.FstabRootFS(f)
	f.Close()
	if !ok {
		log("initramfs: root filesystem drivers: %s kept (/etc/fstab mounts / with none of them)", all)
		return nil
	}
	omit := initramfs.OtherRootFS(mods, add)
	if len(omit) > 0 {
		log("initramfs: root filesystem %s (/etc/fstab): %s left out (ROOTFS=all in %s keeps them)", strings.Join(mods, ","), strings.Join(omit, ", "), initramfs.ConfFile)
	}
	return omit
}

// readInitramfsConf reads file, or when file is "" the root's
// initramfs.conf if there is one.
func readInitramfsConf(root, file string) (initramfs.Conf, error) {
	explicit := file != ""
	if !explicit {
		file = filepath.Join(root, initramfs.ConfFile)
	}
	f, err := os.Open(file)
	if err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			return initramfs.DefaultConf(), nil
		}
		return initramfs.Conf{}, err
	}
	defer f.Close()
	return initramfs.ParseConf(f, file)
}
