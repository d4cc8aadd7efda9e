// Command earlyinit is cloud-init's job done from the initramfs. As PID 1
// (the initramfs's /init) it runs the boot pipeline and switch_roots to the
// real init; otherwise it is a CLI whose verbs read and act on the state it
// left in the real root.
package main

import (
	"fmt"
	"os"
	"time"

	"github.com/earlyinit/earlyinit/internal/boot"
)

func main() {
	// PID 1 is the boot pipeline, except after switch_root on a root
	// without systemd, where earlyinit runs as `late --exec INIT`.
	if os.Getpid() == 1 && !(len(os.Args) > 1 && os.Args[1] == "late") {
		err := boot.Main()
		// Main returns only when the boot cannot go on. Say why, give the
		// console a moment, and exit: the kernel panics, and panic= reboots.
		fmt.Fprintf(os.Stderr, "earlyinit: FATAL: %v\n", err)
		if k, kerr := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0); kerr == nil {
			fmt.Fprintf(k, "<0>earlyinit: FATAL: %v\n", err)
			k.Close()
		}
		time.Sleep(time.Second)
		os.Exit(1)
	}
	os.Exit(run(os.Args[1:]))
}
