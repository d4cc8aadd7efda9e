package main

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/boot"
)

func init() {
	verbs["provision"] = &verbProvision
}

// verbProvision is the provision verb.
var verbProvision = verb{help: "from a distribution's initramfs: provision the root it mounted (--root DIR), then let it switch_root",
	flags: func() *pflag.FlagSet { return provisionFlags(new(string)) }, run: provisionVerb}

func provisionFlags(root *string) *pflag.FlagSet {
	fs := newFlags("provision")
	rootFlag(fs, root, "", "where the distribution's initramfs mounted the real root (${rootmnt}, /sysroot); required")
	return fs
}

// provisionVerb is `earlyinit provision --root DIR`, what the
// initramfs-tools boot script and the dracut hook run (boot.Provision).
// It exits 0 whenever the root was there to work on: nothing earlyinit
// does may stop the distribution's boot.
func provisionVerb(args []string) int {
	root := new(string)
	fs := provisionFlags(root)
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if *root == "" || fs.NArg() > 0 {
		return usageError("provision", "want --root DIR and no operands")
	}
	if err := boot.Provision(*root, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "earlyinit provision: %v\n", err)
		return 1
	}
	return 0
}
