//go:build initrd

package main

import (
	"fmt"
	"os"

	"github.com/earlyinit/earlyinit/pkg/paths"
	"github.com/earlyinit/earlyinit/pkg/provision"
)

// The initramfs build (tag initrd) leaves out the verbs that build images
// and packages, and the package's (tags initrd,nolate) the late-stage
// runner's too; asked for one, it names the binary that has it.
func init() {
	left := []string{"initramfs", "mkseed", "setup", "man"}
	if !provision.LateRunner {
		left = append(left, "late", "single", "schema")
	}
	for _, n := range left {
		verbs[n] = verb{"not in the initramfs build: run " + paths.InstalledBinary + " " + n, func([]string) int {
			fmt.Fprintf(os.Stderr, "earlyinit: %s is not in this build (the initramfs's): run %s %s\n", n, paths.InstalledBinary, n)
			return 2
		}}
	}
}
