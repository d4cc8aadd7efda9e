//go:build initrd

package main

import (
	"fmt"
	"os"

	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/provision"
)

// The initramfs build (tag initrd) leaves out the verbs that build images
// and packages and the tools of cloud-init's CLI that cost more than a few
// KB there (render, cloud-id, make-mime, collect-logs), and the package's
// (tags initrd,nolate) the late-stage runner's too; asked for one, it names the binary that has it. The
// stand-ins are a static table: registering them costs no allocation at
// start-up (TestNoInitWork).
func init() {
	for i := range leftOut {
		if i < leftOutAlways || !provision.LateRunner {
			verbs[leftOut[i].name] = &leftOut[i].v
		}
	}
}

// leftOutAlways is how many of leftOut every initramfs build leaves out;
// the rest only the package's (no late-stage runner).
const leftOutAlways = 9

var leftOut = [...]struct {
	name string
	v    verb
}{
	{"initramfs", verb{help: notHere + "initramfs", run: func([]string) int { return notInThisBuild("initramfs") }}},
	{"mkseed", verb{help: notHere + "mkseed", run: func([]string) int { return notInThisBuild("mkseed") }}},
	{"setup", verb{help: notHere + "setup", run: func([]string) int { return notInThisBuild("setup") }}},
	{"man", verb{help: notHere + "man", run: func([]string) int { return notInThisBuild("man") }}},
	{"completion", verb{help: notHere + "completion", run: func([]string) int { return notInThisBuild("completion") }}},
	{"render", verb{help: notHere + "render", run: func([]string) int { return notInThisBuild("render") }}},
	{"cloud-id", verb{help: notHere + "cloud-id", run: func([]string) int { return notInThisBuild("cloud-id") }}},
	{"make-mime", verb{help: notHere + "make-mime", run: func([]string) int { return notInThisBuild("make-mime") }}},
	{"collect-logs", verb{help: notHere + "collect-logs", run: func([]string) int { return notInThisBuild("collect-logs") }}},
	{"late", verb{help: notHere + "late", run: func([]string) int { return notInThisBuild("late") }}},
	{"single", verb{help: notHere + "single", run: func([]string) int { return notInThisBuild("single") }}},
	{"schema", verb{help: notHere + "schema", run: func([]string) int { return notInThisBuild("schema") }}},
}

// notHere is a left-out verb's help, before its name.
const notHere = "not in the initramfs build: run " + paths.InstalledBinary + " "

func notInThisBuild(n string) int {
	fmt.Fprintf(os.Stderr, "earlyinit: %s is not in this build (the initramfs's): run %s %s\n", n, paths.InstalledBinary, n)
	return 2
}
