// Command mkinitramfs builds earlyinit's initramfs (see package initramfs).
//
//	mkinitramfs [-kver 6.1.0-56-amd64] [-modules initramfs/modules.conf] [-o build/initramfs.cpio.gz]
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/earlyinit/earlyinit/initramfs"
)

func main() {
	kver := flag.String("kver", "", "kernel release whose modules go in (default: newest /boot/vmlinuz-*)")
	root := flag.String("modules-root", "/", "directory holding lib/modules/<kver>")
	conf := flag.String("modules", "initramfs/modules.conf", "module set")
	pkg := flag.String("pkg", "./cmd/earlyinit", "earlyinit's main package")
	out := flag.String("o", "build/initramfs.cpio.gz", "output file")
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
	res, err := initramfs.Build(initramfs.Options{KVer: *kver, ModulesRoot: *root, Config: *conf, Package: *pkg, Output: *out, Tags: splitTags(*tags), Log: log.Printf})
	if err != nil {
		log.Fatalf("mkinitramfs: %v", err)
	}
	fmt.Fprintf(os.Stdout, "%s: kernel %s, %d modules, cpio %.2f MB, gzip %.2f MB\n", *out, *kver, res.Modules, float64(res.CPIOSize)/1e6, float64(res.GzSize)/1e6)
}

func splitTags(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
