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
	root, noRegen, install := &o.root, &o.noRegen, &o.install
	if fi, err := os.Stat(*root); err != nil || !fi.IsDir() {
		fmt.Fprintf(env.stderr, "earlyinit setup: --root %s: not a directory\n", *root)
		return 2
	}
	stateFile := filepath.Join(*root, setup.StateFile)
	recorded, isRecorded, err := setup.ReadMode(*root)
	if err != nil && (len(words) == 0 || *install) {
		// Switching modes overwrites a bad state file; printing the mode
		// or keeping it cannot.
		fmt.Fprintf(env.stderr, "earlyinit setup: %v\n", err)
		return 1
	}

	var mode setup.Mode
	switch {
	case len(words) > 1 || (len(words) == 1 && *install):
		fmt.Fprintln(env.stderr, setupUsage)
		return 2
	case *install:
		mode = setup.Distro
		if isRecorded {
			mode = recorded
		}
	case len(words) == 1:
		m, err := setup.ParseMode(words[0])
		if err != nil {
			fmt.Fprintf(env.stderr, "earlyinit setup: %v\n%s\n", err, setupUsage)
			return 2
		}
		mode = m
	default:
		if *noRegen {
			fmt.Fprintln(env.stderr, setupUsage)
			return 2
		}
		if !isRecorded {
			fmt.Fprintf(env.stderr, "earlyinit setup: %s does not exist: earlyinit is not set up, no hook adds it to the boot\n", stateFile)
			fmt.Fprintln(env.stdout, setup.Off)
			return 0
		}
		fmt.Fprintln(env.stdout, recorded)
		return 0
	}

	if !isRecorded || recorded != mode {
		if err := setup.WriteMode(*root, mode); err != nil {
			fmt.Fprintf(env.stderr, "earlyinit setup: recording mode %s: %v\n", mode, err)
			return 1
		}
	}
	fmt.Fprintf(env.stdout, "earlyinit setup: mode %s (recorded in %s)\n", mode, stateFile)
	if *noRegen {
		return 0
	}
	sys, err := setup.Inspect(*root, env.self)
	if err == nil {
		fmt.Fprintf(env.stdout, "earlyinit setup: initramfs generator: %s; kernels: %d\n", sys.Generator, len(sys.Kernels))
		err = sys.Regenerate(env.exec, mode, env.stdout)
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, setup.ErrNoGenerator) && *install:
		fmt.Fprintf(env.stderr, "earlyinit setup: warning: %v; earlyinit is not in the boot until one is installed (its hook reads mode %s) or `earlyinit setup own` is run\n", err, mode)
		return 0
	case errors.Is(err, setup.ErrNoGenerator):
		fmt.Fprintf(env.stderr, "earlyinit setup: %v; install initramfs-tools or dracut, or use `earlyinit setup own`\n", err)
		return 1
	}
	fmt.Fprintf(env.stderr, "earlyinit setup: mode %s is recorded, but regenerating the initramfs failed: %v\nearlyinit setup: fix that and run `earlyinit setup %s` again\n", mode, err, mode)
	return 1
}
