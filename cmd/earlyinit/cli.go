package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/boot"
)

// verb is one CLI subcommand.
type verb struct {
	help string
	// operands is the synopsis of the verb's operands, after its flags
	// ("[KEY]", "OUTPUT USER-DATA [META-DATA]"); "" when it takes none.
	operands string
	// words returns the words its first operand may be, for the
	// completion (nil: none, or file names when files is set).
	words func() []string
	files bool
	// flags returns the verb's flag set, as its run parses with: the help,
	// the manual page and the completion are made from it. nil: no flags.
	flags func() *pflag.FlagSet
	run   func(args []string) int
}

// verbs are the CLI's verbs by name; each file adds its own in init, from
// a package variable (statically laid out: no work at start-up, which
// every process pays, issue 18).
var verbs = map[string]*verb{}

func init() {
	verbs["version"] = &verbVersion
	verbs["help"] = &verbHelp
}

// verbVersion is the version verb.
var verbVersion = verb{help: "print the version (also: earlyinit --version)", run: versionVerb}

// verbHelp is the help verb.
var verbHelp = verb{help: "print this help, or a verb's (as `earlyinit VERB --help`)", operands: "[VERB]", words: verbNames, run: helpVerb}

func versionVerb(args []string) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help") {
		writeVerbHelp(os.Stdout, "version", nil)
		return 0
	}
	if len(args) > 0 {
		return usageError("version", "takes no arguments, got %q", args)
	}
	fmt.Println(boot.Version)
	return 0
}

// helpVerb is `earlyinit help [VERB]`: the help on stdout, exit 0.
func helpVerb(args []string) int {
	switch {
	case len(args) == 0:
		usage(os.Stdout)
		return 0
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help"):
		writeVerbHelp(os.Stdout, "help", nil)
		return 0
	case len(args) > 1:
		return usageError("help", "one VERB at most, got %q", args)
	}
	if _, ok := verbs[args[0]]; !ok {
		return usageError("help", "unknown verb %q (verbs: %s)", args[0], strings.Join(verbNames(), ", "))
	}
	writeVerbHelp(os.Stdout, args[0], nil)
	return 0
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

// usage writes the CLI's help to w: the synopsis, what earlyinit is, its
// own options and every verb with its help line.
func usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s\n       earlyinit --help | --version\n\n%s\n\nverbs (earlyinit VERB --help for each one's flags):\n", usageSynopsis, usageIntro)
	for _, n := range verbNames() {
		fmt.Fprintf(w, "  %-12s %s\n", n, verbs[n].help)
	}
}

// run is the CLI: `earlyinit VERB ARGS...`, and the options of earlyinit
// itself, -h/--help (help, exit 0) and -v/--version (as cloud-init's). A
// usage error exits 2, with the reason and the help on stderr.
func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "earlyinit: no verb given")
		usage(os.Stderr)
		return 2
	}
	switch args[0] {
	case "-h", "--help":
		return helpVerb(args[1:])
	case "-v", "--version":
		return versionVerb(args[1:])
	}
	if strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(os.Stderr, "earlyinit: unknown option %q: earlyinit's own are --help and --version; a verb's follow it\n", args[0])
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
