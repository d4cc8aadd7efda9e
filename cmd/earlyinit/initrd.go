//go:build initrd

package main

import (
	"fmt"
	"os"

	"github.com/earlyinit/earlyinit/pkg/paths"
)

// The initramfs build (tag initrd) leaves out the verbs that build images
// and packages; asked for one, it names the binary that has it.
func init() {
	for _, n := range []string{"initramfs", "mkseed", "setup", "man"} {
		verbs[n] = verb{"not in the initramfs build: run " + paths.InstalledBinary + " " + n, func([]string) int {
			fmt.Fprintf(os.Stderr, "earlyinit: %s is not in this build (the initramfs's, without TLS and the image-building verbs): run %s %s\n", n, paths.InstalledBinary, n)
			return 2
		}}
	}
}
