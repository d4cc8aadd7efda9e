package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/earlyinit/earlyinit/initramfs"
)

func init() {
	verbs["initramfs"] = verb{"build earlyinit's own initramfs for a kernel from this binary and /lib/modules/KVER ([--kver KVER] [-o FILE] [--config FILE] [--root DIR])", initramfsVerb}
}

func initramfsVerb(args []string) int {
	return runInitramfs(args, "/proc/self/exe", os.Stdout, os.Stderr)
}

// runInitramfs is `earlyinit initramfs`: it packs self (the running
// binary, static) as /init with the modules of one kernel, configured by
// initramfs.conf, into the file that kernel's bootloader entry already
// names. It prints one line saying what it wrote.
func runInitramfs(args []string, self string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("initramfs", flag.ContinueOnError)
	fl.SetOutput(stderr)
	kver := fl.String("kver", "", "kernel release whose modules go in (default: the newest ROOT/boot/vmlinuz-*)")
	out := fl.String("o", "", "output file (default: ROOT/boot/initrd.img-KVER on Debian/Ubuntu, initramfs-KVER.img on Fedora/RHEL/openEuler, initrd-KVER on SUSE)")
	conf := fl.String("config", "", "settings file (default: ROOT"+initramfs.ConfFile+"; defaults when that is missing)")
	root := fl.String("root", "/", "the root whose boot/, lib/modules/ and etc/ are used")
	if err := fl.Parse(args); err != nil {
		return 2
	}
	if fl.NArg() > 0 {
		fmt.Fprintf(stderr, "earlyinit initramfs: unexpected arguments %q\nusage: earlyinit initramfs [--kver KVER] [-o FILE] [--config FILE] [--root DIR]\n", fl.Args())
		return 2
	}
	line, err := buildInitramfs(*root, *kver, *out, *conf, self, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "earlyinit initramfs: %v\n", err)
		return 1
	}
	fmt.Fprintln(stdout, line)
	return 0
}

func buildInitramfs(root, kver, out, confFile, self string, stderr io.Writer) (string, error) {
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
		Binary:      self,
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
	}
	res, err := initramfs.Build(o)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s: kernel %s, %d modules, cpio %.2f MB, %s %.2f MB", out, kver, res.Modules, float64(res.CPIOSize)/1e6, res.Compression, float64(res.Size)/1e6), nil
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
