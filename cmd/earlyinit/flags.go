package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// Every verb declares its flags once, in a function returning its
// *pflag.FlagSet (verb.flags). The verb parses its arguments with that set,
// and `earlyinit VERB --help`, the manual page (man.go) and the bash
// completion (completion.go) are made from the same set, so none of them
// can name a flag the verb lacks or miss one it has. Flags take GNU's
// forms, as cloud-init's argparse and cloud-localds's getopt do: --long,
// --long=VALUE, --long VALUE, -s VALUE, -sVALUE, bundled -ab; they may
// follow the operands, and "--" ends them.

// Flag annotations (pflag.Flag.Annotations) the help, the manual page and
// the completion read.
const (
	// annValues lists the values a flag takes, for the completion and
	// for the help's "one of".
	annValues = "earlyinit-values"
	// annFile marks a flag whose value is a file name, annDir a directory.
	annFile = "earlyinit-file"
	annDir  = "earlyinit-dir"
)

// newFlags returns an empty flag set for the verb name: errors are
// returned, never printed (parseFlags prints them), and the help lists the
// flags in the order they are defined.
func newFlags(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	return fs
}

// oneOf records the values flag name takes: the completion offers them
// and the help lists them. The verb still checks the value it gets.
func oneOf(fs *pflag.FlagSet, name string, values ...string) {
	mustAnnotate(fs, name, annValues, values)
}

// fileFlag marks flag name's value as a file name, dirFlag as a directory:
// the completion completes them as such.
func fileFlag(fs *pflag.FlagSet, names ...string) {
	for _, n := range names {
		mustAnnotate(fs, n, annFile, []string{"true"})
	}
}

func dirFlag(fs *pflag.FlagSet, names ...string) {
	for _, n := range names {
		mustAnnotate(fs, n, annDir, []string{"true"})
	}
}

func mustAnnotate(fs *pflag.FlagSet, name, key string, values []string) {
	if err := fs.SetAnnotation(name, key, values); err != nil {
		panic(fmt.Sprintf("verb %s: %v", fs.Name(), err))
	}
}

// rootFlag is the --root DIR most verbs take: the root whose state they
// read or change.
func rootFlag(fs *pflag.FlagSet, p *string, def, usage string) {
	fs.StringVar(p, "root", def, usage)
	dirFlag(fs, "root")
}

// parseFlags parses a verb's arguments with its flag set. It returns ok
// when the verb should go on (fs.Args() are its operands); otherwise the
// verb returns code: 0 after -h/--help, whose help went to stdout, 2 after
// a usage error, said on stderr with the verb's synopsis.
func parseFlags(fs *pflag.FlagSet, args []string) (ok bool, code int) {
	err := fs.Parse(args)
	switch {
	case err == nil:
		return true, 0
	case errors.Is(err, pflag.ErrHelp):
		writeVerbHelp(os.Stdout, fs.Name(), fs)
		return false, 0
	}
	return false, usageError(fs.Name(), "%v", err)
}

// usageError says what is wrong with a verb's command line on stderr, with
// its synopsis and where to find more, and returns 2, the exit status of a
// usage error.
func usageError(name, format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "earlyinit %s: %s\n", name, fmt.Sprintf(format, a...))
	fmt.Fprintf(os.Stderr, "usage: %s\nTry 'earlyinit %s --help' for more.\n", verbSynopsis(name), name)
	return 2
}

// verbSynopsis is "earlyinit VERB [flags] OPERANDS".
func verbSynopsis(name string) string {
	s := "earlyinit " + name
	v, ok := verbs[name]
	if !ok {
		return s
	}
	if v.flags != nil && v.flags().HasFlags() {
		s += " [flags]"
	}
	if v.operands != "" {
		s += " " + v.operands
	}
	return s
}

// writeVerbHelp writes `earlyinit VERB --help`: the synopsis, the verb's
// help and its flags. fs is the verb's flag set (nil: made from the verb).
func writeVerbHelp(w io.Writer, name string, fs *pflag.FlagSet) {
	v, ok := verbs[name]
	if !ok {
		return
	}
	fmt.Fprintf(w, "usage: %s\n\n%s\n", verbSynopsis(name), v.help)
	if fs == nil && v.flags != nil {
		fs = v.flags()
	}
	if fs == nil || !fs.HasFlags() {
		return
	}
	fmt.Fprintf(w, "\nflags:\n")
	fs.VisitAll(func(f *pflag.Flag) {
		fmt.Fprintf(w, "  %s\n      %s\n", flagSpec(f, "-", "--"), flagUsage(f))
	})
}

// flagSpec is how a flag is written: "-s, --long VALUE", with the
// prefixes given (the manual page escapes its hyphens).
func flagSpec(f *pflag.Flag, short, long string) string {
	s := long + f.Name
	if f.Shorthand != "" {
		s = short + f.Shorthand + ", " + s
	}
	if a := flagArg(f); a != "" {
		s += " " + a
	}
	return s
}

// flagArg is the name of a flag's value ("" for a flag without one): the
// first `word` in its usage, as pflag's own help takes it, else its
// values joined with "|", else DIR, FILE or VALUE.
func flagArg(f *pflag.Flag) string {
	if f.NoOptDefVal != "" {
		return ""
	}
	if name, _ := pflag.UnquoteUsage(f); name != "" && strings.Contains(f.Usage, "`") {
		return name
	}
	switch {
	case len(f.Annotations[annValues]) > 0:
		return strings.Join(f.Annotations[annValues], "|")
	case f.Annotations[annDir] != nil:
		return "DIR"
	case f.Annotations[annFile] != nil:
		return "FILE"
	}
	return "VALUE"
}

// flagUsage is a flag's help, without the backquotes that name its value,
// with the values it takes when its value's name does not list them, and
// its default when it has one worth saying.
func flagUsage(f *pflag.Flag) string {
	_, u := pflag.UnquoteUsage(f)
	if vs := f.Annotations[annValues]; len(vs) > 0 && flagArg(f) != strings.Join(vs, "|") {
		u += ": " + strings.Join(vs, ", ")
	}
	switch f.Value.Type() {
	case "bool", "count", "stringArray":
	default:
		if f.DefValue != "" {
			u += " (default " + f.DefValue + ")"
		}
	}
	return u
}
