package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/late/handoff"
	"github.com/earlyinit/earlyinit/internal/logs"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/proc"
	"github.com/earlyinit/earlyinit/internal/provision"
	"github.com/earlyinit/earlyinit/internal/selinux"
	"github.com/earlyinit/earlyinit/internal/userdata"
	"github.com/spf13/pflag"
)

func init() {
	verbs["status"] = &verbStatus
	verbs["clean"] = &verbClean
	if provision.LateRunner { // a constant: the package's initramfs build links no runner
		verbs["late"] = &verbLate
		verbs["single"] = &verbSingle
	}
}

// verbStatus is the status verb.
var verbStatus = verb{help: "show the late stages' status, as cloud-init status; exit 0 ok, 1 error, 2 degraded (recoverable errors)",
	flags: func() *pflag.FlagSet { return new(statusOpts).flags() }, run: statusVerb}

// verbClean is the clean verb.
var verbClean = verb{help: "remove the instance state so the next boot is a first boot, as cloud-init clean",
	flags: func() *pflag.FlagSet { return new(cleanOpts).flags() }, run: cleanVerb}

// verbLate is the late verb.
var verbLate = verb{help: "run a late stage: --stage boot|final, or --exec INIT for roots without systemd", operands: "[-- INIT-ARGS]",
	flags: func() *pflag.FlagSet { return new(lateOpts).flags() }, run: lateVerb}

// verbSingle is the single verb.
var verbSingle = verb{help: "run one module, as cloud-init single", flags: func() *pflag.FlagSet { return new(singleOpts).flags() }, run: singleVerb}

// defaultPath is systemd's default PATH, for stages started without one.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// lateStageBound bounds a whole stage; each module has its own bounds.
const lateStageBound = handoff.StageBound

// lateHandoff is late --exec and --when-writable (roots without systemd)
// with the CLI's stage options; the rest is the real thing.
func lateHandoff() handoff.Config {
	return handoff.Config{Options: lateOptions}
}

func lateOptions(rootDir string) (late.Options, error) {
	r, err := selinux.OpenRoot(rootDir, logs.Writer(os.Stderr))
	if err != nil {
		return late.Options{}, err
	}
	return late.Options{Root: r, Version: boot.Version, Console: os.Stderr, Include: includeGetter()}, nil
}

// includeGetter fetches #include URLs in the final stage, bounded.
func includeGetter() userdata.Getter {
	return func(ctx context.Context, url string, once bool) ([]byte, error) {
		return fetchURL(ctx, url)
	}
}

// lateOpts are late's flags.
type lateOpts struct {
	stage, execInit, root string
	whenWritable          bool
}

func (o *lateOpts) flags() *pflag.FlagSet {
	fs := newFlags("late")
	fs.StringVar(&o.stage, "stage", "", "the stage to run")
	oneOf(fs, "stage", "boot", "final")
	fs.StringVar(&o.execInit, "exec", "", "for roots without systemd: run the boot stage, start the final stage in the background, exec `INIT` with the arguments after --")
	fileFlag(fs, "exec")
	rootFlag(fs, &o.root, "/", "the real root")
	fs.BoolVar(&o.whenWritable, "when-writable", false, "for roots without systemd booted ro: wait until the init system makes the root writable, then run both stages")
	// INIT's own arguments follow "--"; the first operand ends the flags.
	fs.SetInterspersed(false)
	return fs
}

func lateVerb(args []string) int {
	var o lateOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	stage, execInit, root, whenWritable := &o.stage, &o.execInit, &o.root, &o.whenWritable
	if os.Getenv("PATH") == "" {
		// As PID 1 (late --exec) and its children, the kernel gave us no
		// PATH: the modules' tools (hostname, groupadd, shutdown) must be
		// found as under systemd, whose default this is.
		os.Setenv("PATH", defaultPath)
	}
	if *execInit != "" {
		return lateHandoff().ExecInit(*root, *execInit, fs.Args())
	}
	if *whenWritable {
		return lateHandoff().WhenWritable(*root)
	}
	st, err := modules.ParseStage(*stage)
	if err != nil {
		fmt.Fprintf(os.Stderr, "late: %v\n", err)
		return 2
	}
	opts, err := lateOptions(*root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "late: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), lateStageBound)
	defer cancel()
	if !boot.AwaitCustomization(ctx, *root) {
		fmt.Fprintf(os.Stderr, "late: stage %s: no instance this boot (no VMware guest customization came, nothing else was found)\n", st)
		return 0
	}
	if _, err := late.Run(ctx, st, opts); err != nil {
		fmt.Fprintf(os.Stderr, "late: stage %s: %v\n", st, err)
		return 1
	}
	return 0
}

// statusOpts are cloud-init status's flags, and --root.
type statusOpts struct {
	root, format string
	wait, long   bool
}

func (o *statusOpts) flags() *pflag.FlagSet {
	fs := newFlags("status")
	rootFlag(fs, &o.root, "/", "the root whose state to read")
	fs.BoolVarP(&o.wait, "wait", "w", false, "wait until the late stages are done (tabular: a dot per poll)")
	fs.BoolVarP(&o.long, "long", "l", false, "more detail: boot status code, last update, detail (json and yaml: each stage)")
	fs.StringVar(&o.format, "format", "tabular", "the output `FORMAT`")
	oneOf(fs, "format", "json", "tabular", "yaml")
	return fs
}

func statusVerb(args []string) int {
	var o statusOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError("status", "takes no operands, got %q", fs.Args())
	}
	switch o.format {
	case "json", "yaml", "tabular":
	default:
		return usageError("status", "--format %q: want json, tabular or yaml", o.format)
	}
	rep, err := late.WaitStatus(o.root, o.wait, o.format, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "status: %v\n", err)
		return 1
	}
	if !o.long {
		rep.Stages = nil
	}
	switch o.format {
	case "json":
		b, _ := json.MarshalIndent(rep, "", " ")
		fmt.Println(string(b))
	case "yaml":
		// cloud-init prints safeyaml.dumps(...) with print(): the
		// document ends "...\n", and print adds a newline.
		v, err := statusTree(rep)
		if err == nil {
			err = pyYAML(os.Stdout, v)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "status: %v\n", err)
			return 1
		}
		fmt.Println()
	default:
		fmt.Printf("status: %s\n", rep.ExtendedStatus)
		if o.long {
			fmt.Printf("boot_status_code: %s\nlast_update: %s\ndetail:\n%s\n", rep.BootStatusCode, rep.LastUpdate, rep.Detail)
		}
		for _, e := range rep.Errors {
			fmt.Printf("error: %s\n", e)
		}
	}
	return rep.ExitCode()
}

// statusTree is the status report as the JSON output has it, as maps,
// lists and scalars for pyYAML. Its numbers are all seconds, floats.
func statusTree(rep late.StatusReport) (any, error) {
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	var floats func(any) (any, error)
	floats = func(v any) (any, error) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				f, err := floats(e)
				if err != nil {
					return nil, err
				}
				x[k] = f
			}
		case []any:
			for i, e := range x {
				f, err := floats(e)
				if err != nil {
					return nil, err
				}
				x[i] = f
			}
		case json.Number:
			return x.Float64()
		}
		return v, nil
	}
	return floats(v)
}

// cleanOpts are cloud-init clean's flags, and --root.
type cleanOpts struct {
	root                          string
	logs, reboot, seed, machineID bool
}

func (o *cleanOpts) flags() *pflag.FlagSet {
	fs := newFlags("clean")
	rootFlag(fs, &o.root, "/", "the root whose state to remove")
	fs.BoolVarP(&o.logs, "logs", "l", false, "remove the logs too ("+late.LogFile+", "+late.OutputLogFile+")")
	fs.BoolVarP(&o.reboot, "reboot", "r", false, "reboot afterwards (shutdown -r now), when the cleaning succeeded")
	fs.BoolVarP(&o.seed, "seed", "s", false, "remove the seed directory "+seedDir+" too")
	fs.BoolVar(&o.machineID, "machine-id", false, "remove "+machineIDFile+" for golden image creation: the next boot makes a new machine id")
	return fs
}

// seedDir is cloud-init's /var/lib/cloud/seed in earlyinit's cache: the
// seed clean keeps unless --seed is given.
const seedDir = paths.CacheDir + "/seed"

// machineIDFile is what clean --machine-id removes, as cloud-init 22.4's
// (later versions write "uninitialized" into it on systemd roots).
const machineIDFile = "/etc/machine-id"

// cleanVerb is cloud-init clean: the instance state (and with its flags
// the logs, the seed, the machine id) removed, then a reboot if asked and
// all went well. The machine id goes even when the rest failed, as in
// cloud-init.
func cleanVerb(args []string) int {
	var o cleanOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError("clean", "takes no operands, got %q", fs.Args())
	}
	code := 0
	if err := late.Clean(o.root, o.logs); err != nil {
		fmt.Fprintf(os.Stderr, "clean: %v\n", err)
		code = 1
	}
	if o.seed && code == 0 {
		if err := removeTree(o.root, seedDir); err != nil {
			fmt.Fprintf(os.Stderr, "clean: %v\n", err)
			code = 1
		}
	}
	if o.machineID {
		if err := removeFile(o.root, machineIDFile); err != nil {
			fmt.Fprintf(os.Stderr, "clean: %v\n", err)
			code = 1
		}
	}
	if code != 0 {
		return code
	}
	if o.reboot {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownBound)
		defer cancel()
		var out bytes.Buffer
		cmd := exec.CommandContext(ctx, "shutdown", "-r", "now")
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := proc.Run(cmd); err != nil {
			fmt.Fprintf(os.Stderr, "clean: reboot: %v: %s\n", err, strings.TrimSpace(out.String()))
			return 1
		}
	}
	return 0
}

// shutdownBound bounds `shutdown -r now`, which only asks the init system
// for the reboot.
const shutdownBound = 2 * time.Minute

// singleOpts are cloud-init single's flags, and --root.
type singleOpts struct {
	root, name, freq string
	report           bool
}

func (o *singleOpts) flags() *pflag.FlagSet {
	fs := newFlags("single")
	rootFlag(fs, &o.root, "/", "the real root")
	fs.StringVarP(&o.name, "name", "n", "", "the `MODULE` to run (required)")
	fs.StringVar(&o.freq, "frequency", "", "run it at this frequency instead of the module's own")
	oneOf(fs, "frequency", "instance", "always", "once")
	fs.BoolVar(&o.report, "report", false, "accepted for cloud-init's sake; no effect")
	return fs
}

func singleVerb(args []string) int {
	var o singleOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError("single", "module arguments are not supported: %q", fs.Args())
	}
	if o.name == "" {
		return usageError("single", "--name is required")
	}
	var f modules.Frequency
	if o.freq != "" {
		var err error
		if f, err = modules.ParseFrequency(o.freq); err != nil {
			return usageError("single", "--frequency: %v", err)
		}
	}
	opts, err := lateOptions(o.root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "single: %v\n", err)
		return 1
	}
	res, err := late.RunSingle(context.Background(), o.name, f, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "single: %v\n", err)
		return 1
	}
	fmt.Printf("%s: %s\n", res.Name, res.Status)
	if res.Status == late.ModuleError {
		return 1
	}
	return 0
}

// readConfigFile reads a cloud-config for schema, at most
// userdata.MaxSize bytes (what a datasource may carry).
func readConfigFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, userdata.MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if len(data) > userdata.MaxSize {
		return nil, fmt.Errorf("%s: more than %d bytes, the user-data limit", name, userdata.MaxSize)
	}
	return data, nil
}
