package main

import (
	"fmt"
	"os"
	"sort"
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

func usage() {
	fmt.Fprintf(os.Stderr, "usage: earlyinit VERB [flags]\n\nAs PID 1 (the initramfs's /init), earlyinit runs the boot pipeline.\n\nverbs:\n")
	names := make([]string, 0, len(verbs))
	for n := range verbs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-12s %s\n", n, verbs[n].help)
	}
}

func run(args []string) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		usage()
		return 2
	}
	v, ok := verbs[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "earlyinit: unknown verb %q\n", args[0])
		usage()
		return 2
	}
	return v.run(args[1:])
}
