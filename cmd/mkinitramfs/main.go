// Command mkinitramfs builds earlyinit's initramfs (see package initramfs).
//
//	mkinitramfs [-kver 6.1.0-56-amd64] [-modules initramfs/modules.conf]
//	            [-binary FILE | -pkg ./cmd/earlyinit [-tags faultinject]]
//	            [-compress auto|zstd|xz|gzip|lz4|none] [-hostonly [-loaded FILE] [-fstype xfs,...]]
//	            [-o build/initramfs.img]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/earlyinit/earlyinit/initramfs"
	"github.com/earlyinit/earlyinit/initramfs/gobuild"
)

func main() {
	kver := flag.String("kver", "", "kernel release whose modules go in (default: newest /boot/vmlinuz-*)")
	root := flag.String("modules-root", "/", "directory holding lib/modules/<kver> and boot/config-<kver>")
	conf := flag.String("modules", "initramfs/modules.conf", `module set ("" for the one built in)`)
	pkg := flag.String("pkg", "./cmd/earlyinit", "earlyinit's main package, compiled with Go")
	binary := flag.String("binary", "", "a static earlyinit to pack instead of compiling -pkg")
	out := flag.String("o", "build/initramfs.img", "output file")
	comp := flag.String("compress", initramfs.DefaultCompression, "compression: auto, "+strings.Join(initramfs.Compressions(), ", ")+" (default xz with -hostonly)")
	hostOnly := flag.Bool("hostonly", false, "keep only the modules this machine has loaded, its root filesystem's and the config drives'")
	loaded := flag.String("loaded", "/proc/modules", "with -hostonly: the loaded modules, in /proc/modules' format")
	fstypes := flag.String("fstype", "", "with -hostonly: comma-separated filesystems to keep (default: the type of / in /proc/self/mounts)")
	tags := flag.String("tags", "", "comma-separated Go build tags for earlyinit (tests only: faultinject)")
	flag.Parse()
	log.SetFlags(0)
	if *kver == "" {
		k, err := initramfs.NewestKernel(filepath.Join(*root, "boot"))
		if err != nil {
			log.Fatal(err)
		}
		*kver = k
	}
	if *binary == "" {
		tmp, err := os.MkdirTemp("", "mkinitramfs")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(tmp)
		if *binary, err = gobuild.Compile(*pkg, split(*tags), tmp); err != nil {
			log.Fatalf("mkinitramfs: %v", err)
		}
	}
	o := initramfs.Options{KVer: *kver, ModulesRoot: *root, Config: *conf, Binary: *binary,
		Output: *out, Log: log.Printf}
	if *hostOnly {
		// A host-only image lives in /boot next to every kernel: xz
		// makes a virtio VM with an XFS root 2.82 MB with the package's
		// build of earlyinit (zstd 3.13 MB), and unpacking so small an
		// image is quick either way.
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == "compress" })
		if !set {
			*comp = "xz"
		}
		h, err := initramfs.Host(*loaded, "/proc/self/mounts", "/", split(*fstypes))
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
	fmt.Fprintf(os.Stdout, "%s: kernel %s, %d modules, cpio %.2f MB, %s %.2f MB\n", *out, *kver, res.Modules, float64(res.CPIOSize)/1e6, res.Compression, float64(res.Size)/1e6)
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
