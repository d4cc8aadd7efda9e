package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/pkg/boot"
)

// verb is one CLI subcommand.
type verb struct {
	help string
	run  func(args []string) int
}

var verbs = map[string]verb{
	"version": {"print the version", func([]string) int { fmt.Println(boot.Version); return 0 }},
}

// usageSynopsis and usageIntro are the help's first lines, shared by
// usage and the manual page (man.go).
const (
	usageSynopsis = "earlyinit VERB [flags]"
	usageIntro    = "As PID 1 (the initramfs's /init), earlyinit runs the boot pipeline and switch_roots to the real init; otherwise it is a CLI whose verbs read and act on the state it left in the real root."
)

// verbNames returns the registered verbs' names, sorted.
func verbNames() []string {
	return slices.Sorted(maps.Keys(verbs))
}

// usage writes the CLI's help to w: the synopsis, what earlyinit is, and
// every verb with its help line.
func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n\n%s\n\nverbs:\n", usageSynopsis, usageIntro)
	for _, n := range verbNames() {
		fmt.Fprintf(w, "  %-12s %s\n", n, verbs[n].help)
	}
}

func run(args []string) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		usage(os.Stderr)
		return 2
	}
	v, ok := verbs[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "earlyinit: unknown verb %q\n", args[0])
		usage(os.Stderr)
		return 2
	}
	return v.run(args[1:])
}
