package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/earlyinit/earlyinit/pkg/boot"
)

func init() {
	verbs["provision"] = verb{"from a distribution's initramfs: provision the root it mounted (--root DIR), then let it switch_root", provisionVerb}
}

// provisionVerb is `earlyinit provision --root DIR`, what the
// initramfs-tools boot script and the dracut hook run (boot.Provision).
// It exits 0 whenever the root was there to work on: nothing earlyinit
// does may stop the distribution's boot.
func provisionVerb(args []string) int {
	fs := flag.NewFlagSet("provision", flag.ContinueOnError)
	root := fs.String("root", "", "where the distribution's initramfs mounted the real root (${rootmnt}, /sysroot)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *root == "" || fs.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "earlyinit provision: usage: earlyinit provision --root DIR")
		return 2
	}
	if err := boot.Provision(*root, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "earlyinit provision: %v\n", err)
		return 1
	}
	return 0
}
