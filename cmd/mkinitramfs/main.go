// Command mkinitramfs builds earlyinit's initramfs (see package initramfs).
//
//	mkinitramfs [-kver 6.1.0-56-amd64] [-modules initramfs/modules.conf]
//	            [-compress zstd|xz|gzip|lz4|none] [-hostonly [-loaded FILE] [-fstype xfs,...]]
//	            [-o build/initramfs.img]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/earlyinit/earlyinit/initramfs"
)

func main() {
	kver := flag.String("kver", "", "kernel release whose modules go in (default: newest /boot/vmlinuz-*)")
	root := flag.String("modules-root", "/", "directory holding lib/modules/<kver> and boot/config-<kver>")
	conf := flag.String("modules", "initramfs/modules.conf", "module set")
	pkg := flag.String("pkg", "./cmd/earlyinit", "earlyinit's main package")
	out := flag.String("o", "build/initramfs.img", "output file")
	comp := flag.String("compress", initramfs.DefaultCompression, "compression: "+strings.Join(initramfs.Compressions(), ", ")+" (default xz with -hostonly)")
	hostOnly := flag.Bool("hostonly", false, "keep only the modules this machine has loaded, its root filesystem's and the config drives'")
	loaded := flag.String("loaded", "/proc/modules", "with -hostonly: the loaded modules, in /proc/modules' format")
	fstypes := flag.String("fstype", "", "with -hostonly: comma-separated filesystems to keep (default: the type of / in /proc/self/mounts)")
	tags := flag.String("tags", "", "comma-separated Go build tags for earlyinit (tests only: faultinject)")
	flag.Parse()
	log.SetFlags(0)
	if *kver == "" {
		k, err := initramfs.NewestKernel("/boot")
		if err != nil {
			log.Fatal(err)
		}
		*kver = k
	}
	o := initramfs.Options{KVer: *kver, ModulesRoot: *root, Config: *conf, Package: *pkg, Output: *out,
		Tags: split(*tags), Log: log.Printf}
	if *hostOnly {
		// A host-only image lives in /boot next to every kernel: xz
		// keeps a virtio VM with an XFS root under 3 MB (2.77 MB; zstd
		// 3.08 MB), and unpacking so small an image is quick either way.
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == "compress" })
		if !set {
			*comp = "xz"
		}
		h, err := hostModules(*loaded, *fstypes)
		if err != nil {
			log.Fatalf("mkinitramfs: -hostonly: %v", err)
		}
		o.HostOnly = h
	}
	o.Compression = *comp
	res, err := initramfs.Build(o)
	if err != nil {
		log.Fatalf("mkinitramfs: %v", err)
	}
	fmt.Fprintf(os.Stdout, "%s: kernel %s, %d modules, cpio %.2f MB, %s %.2f MB\n", *out, *kver, res.Modules, float64(res.CPIOSize)/1e6, *comp, float64(res.Size)/1e6)
}

// hostModules reads the loaded modules and the filesystems to keep.
func hostModules(loaded, fstypes string) (*initramfs.HostOnly, error) {
	f, err := os.Open(loaded)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := initramfs.ReadLoaded(f)
	if err != nil {
		return nil, err
	}
	h := &initramfs.HostOnly{Loaded: names, FSTypes: split(fstypes)}
	if fstypes == "" {
		t, err := rootFSType("/proc/self/mounts")
		if err != nil {
			return nil, err
		}
		h.FSTypes = []string{t}
	}
	return h, nil
}

// rootFSType returns the type of the last mount on / in a mounts file.
func rootFSType(mounts string) (string, error) {
	f, err := os.Open(mounts)
	if err != nil {
		return "", err
	}
	defer f.Close()
	t := ""
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fl := strings.Fields(s.Text()); len(fl) >= 3 && fl[1] == "/" {
			t = fl[2]
		}
	}
	if t == "" {
		return "", fmt.Errorf("%s: no mount on /", mounts)
	}
	return t, s.Err()
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
