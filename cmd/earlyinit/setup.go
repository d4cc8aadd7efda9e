//go:build !initrd

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/setup"
)

func init() {
	verbs["setup"] = &verbSetup
}

// verbSetup is the setup verb.
var verbSetup = verb{help: "print or switch how earlyinit boots: own (its own initramfs), distro (inside the distribution's), off; regenerates every kernel's initramfs (--no-regenerate: only record the mode; --install: the package's postinst)",
	operands: "[own|distro|off]", words: func() []string { return []string{"own", "distro", "off"} },
	flags: func() *pflag.FlagSet { return new(setupOpts).flags() }, run: setupVerb}

// setupOpts are setup's flags.
type setupOpts struct {
	root             string
	noRegen, install bool
}

func (o *setupOpts) flags() *pflag.FlagSet {
	fs := newFlags("setup")
	rootFlag(fs, &o.root, "/", "the system's root: / or a system image's directory")
	fs.BoolVar(&o.noRegen, "no-regenerate", false, "only record the mode")
	fs.BoolVar(&o.install, "install", false, "keep the recorded mode, else distro, and regenerate (the package's postinst)")
	return fs
}

// defaultSelf is where the package installs earlyinit, for when the running
// executable cannot be named.
const defaultSelf = "/usr/bin/earlyinit"

func setupVerb(args []string) int {
	self, err := os.Executable()
	if err != nil {
		self = defaultSelf
	}
	return setupRun(args, setupEnv{
		exec:   setup.SystemExec{Stdout: os.Stdout, Stderr: os.Stderr},
		self:   self,
		stdout: os.Stdout,
		stderr: os.Stderr,
	})
}

// setupEnv is what the setup verb runs with; tests fake exec.
type setupEnv struct {
	exec           setup.Exec
	self           string
	stdout, stderr io.Writer
}

const setupUsage = "usage: earlyinit setup [--root DIR]                        print the mode\n" +
	"       earlyinit setup own|distro|off [--root DIR] [--no-regenerate]\n" +
	"       earlyinit setup --install [--root DIR] [--no-regenerate]"

// setupRun is `earlyinit setup`. Exit codes: 0 done; 1 the state file is
// unreadable or could not be written, or a regeneration failed; 2 usage.
//
// The mode is recorded before regenerating: the initramfs-tools hook and
// the dracut module read it while the generator runs. --install is what
// the package's postinst runs: the recorded mode if there is one (an
// upgrade keeps it), else distro; a system without any initramfs
// generator only gets the mode recorded, with a warning, so that
// installing the package in a container or a half-built image does not
// fail.
func setupRun(args []string, env setupEnv) int {
	var o setupOpts
	fs := o.flags()
	// Flags may come before or after the mode word.
	if err := fs.Parse(args); errors.Is(err, pflag.ErrHelp) {
		writeVerbHelp(env.stdout, "setup", fs)
		fmt.Fprintf(env.stdout, "\n%s\n", setupUsage)
		return 0
	} else if err != nil {
		fmt.Fprintf(env.stderr, "earlyinit setup: %v\n%s\n", err, setupUsage)
		return 2
	}
	words := fs.Args()
	if fi, err := os.Stat(o.root); err != nil || !fi.IsDir() {
		fmt.Fprintf(env.stderr, "earlyinit setup: --root %s: not a directory\n", o.root)
		return 2
	}
	var st setupState
	var err error
	st.file = filepath.Join(o.root, setup.StateFile)
	st.recorded, st.isRecorded, err = setup.ReadMode(o.root)
	if err != nil && (len(words) == 0 || o.install) {
		// Switching modes overwrites a bad state file; printing the mode
		// or keeping it cannot.
		fmt.Fprintf(env.stderr, "earlyinit setup: %v\n", err)
		return 1
	}
	mode, code, ok := o.mode(words, st, env)
	if !ok {
		return code
	}
	if !st.isRecorded || st.recorded != mode {
		if err := setup.WriteMode(o.root, mode); err != nil {
			fmt.Fprintf(env.stderr, "earlyinit setup: recording mode %s: %v\n", mode, err)
			return 1
		}
	}
	fmt.Fprintf(env.stdout, "earlyinit setup: mode %s (recorded in %s)\n", mode, st.file)
	if o.noRegen {
		return 0
	}
	return o.regenerate(mode, env)
}

// setupState is the state file and the mode it records, if any.
type setupState struct {
	file       string
	recorded   setup.Mode
	isRecorded bool
}

// mode is the mode to switch to, from the mode word or --install. When
// there is none to switch to (a usage error, or the mode printed), ok is
// false and code is the exit code.
func (o *setupOpts) mode(words []string, st setupState, env setupEnv) (mode setup.Mode, code int, ok bool) {
	switch {
	case len(words) > 1 || (len(words) == 1 && o.install):
		fmt.Fprintln(env.stderr, setupUsage)
		return mode, 2, false
	case o.install:
		mode = setup.Distro
		if st.isRecorded {
			mode = st.recorded
		}
	case len(words) == 1:
		m, err := setup.ParseMode(words[0])
		if err != nil {
			fmt.Fprintf(env.stderr, "earlyinit setup: %v\n%s\n", err, setupUsage)
			return mode, 2, false
		}
		mode = m
	default:
		if o.noRegen {
			fmt.Fprintln(env.stderr, setupUsage)
			return mode, 2, false
		}
		if !st.isRecorded {
			fmt.Fprintf(env.stderr, "earlyinit setup: %s does not exist: earlyinit is not set up, no hook adds it to the boot\n", st.file)
			fmt.Fprintln(env.stdout, setup.Off)
			return mode, 0, false
		}
		fmt.Fprintln(env.stdout, st.recorded)
		return mode, 0, false
	}
	return mode, 0, true
}

// regenerate regenerates every kernel's initramfs for mode, recorded
// already, and returns the exit code: with --install, a system without a
// generator is only warned about.
func (o *setupOpts) regenerate(mode setup.Mode, env setupEnv) int {
	sys, err := setup.Inspect(o.root, env.self)
	if err == nil {
		fmt.Fprintf(env.stdout, "earlyinit setup: initramfs generator: %s; kernels: %d\n", sys.Generator, len(sys.Kernels))
		err = sys.Regenerate(env.exec, mode, env.stdout)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, setup.ErrNoGenerator) && o.install:
		fmt.Fprintf(env.stderr, "earlyinit setup: warning: %v; earlyinit is not in the boot until one is installed (its hook reads mode %s) or `earlyinit setup own` is run\n", err, mode)
		return 0
	case errors.Is(err, setup.ErrNoGenerator):
		fmt.Fprintf(env.stderr, "earlyinit setup: %v; install initramfs-tools or dracut, or use `earlyinit setup own`\n", err)
		return 1
	}
	fmt.Fprintf(env.stderr, "earlyinit setup: mode %s is recorded, but regenerating the initramfs failed: %v\nearlyinit setup: fix that and run `earlyinit setup %s` again\n", mode, err, mode)
	return 1
}
