package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/earlyinit/earlyinit/pkg/boot"
	"github.com/earlyinit/earlyinit/pkg/late"
	"github.com/earlyinit/earlyinit/pkg/modules"
	"github.com/earlyinit/earlyinit/pkg/paths"
	"github.com/earlyinit/earlyinit/pkg/proc"
	"github.com/earlyinit/earlyinit/pkg/provision"
	"github.com/earlyinit/earlyinit/pkg/selinux"
	"github.com/earlyinit/earlyinit/pkg/userdata"
	"golang.org/x/sys/unix"
)

func init() {
	verbs["status"] = verb{"show the late stages' status, as cloud-init status", statusVerb}
	verbs["clean"] = verb{"remove the instance state, as cloud-init clean", cleanVerb}
	if provision.LateRunner { // a constant: the package's initramfs build links no runner
		verbs["late"] = verb{"run a late stage: --stage boot|final, or --exec INIT for roots without systemd", lateVerb}
		verbs["single"] = verb{"run one module: --name MOD [--frequency always]", singleVerb}
	}
}

// defaultPath is systemd's default PATH, for stages started without one.
const defaultPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// lateStageBound bounds a whole stage; each module has its own bounds.
const lateStageBound = 2 * time.Hour

func lateOptions(rootDir string) (late.Options, error) {
	r, err := selinux.OpenRoot(rootDir, selinux.WriterLog(os.Stderr))
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

func lateVerb(args []string) int {
	fs := flag.NewFlagSet("late", flag.ContinueOnError)
	stage := fs.String("stage", "", "boot or final")
	execInit := fs.String("exec", "", "for roots without systemd: run the boot stage, start the final stage in the background, exec this init")
	root := fs.String("root", "/", "the real root")
	whenWritable := fs.Bool("when-writable", false, "for roots without systemd booted ro: wait until the init system makes the root writable, then run both stages")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if os.Getenv("PATH") == "" {
		// As PID 1 (late --exec) and its children, the kernel gave us no
		// PATH: the modules' tools (hostname, groupadd, shutdown) must be
		// found as under systemd, whose default this is.
		os.Setenv("PATH", defaultPath)
	}
	if *execInit != "" {
		return lateExec(*root, *execInit, fs.Args())
	}
	if *whenWritable {
		return lateWhenWritable(*root)
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
	if _, err := late.Run(ctx, st, opts); err != nil {
		fmt.Fprintf(os.Stderr, "late: stage %s: %v\n", st, err)
		return 1
	}
	return 0
}

// lateExec is PID 1's path on roots without systemd: the boot stage runs in
// the foreground, the final stage in a child of its own session, and then
// the real init replaces us as PID 1 with its arguments. A root still
// read-only (sysvinit and OpenRC remount it read-write themselves, after
// their fsck) gets both stages in a child that waits for that. Nothing
// here may stop the boot: a failed stage is logged and init is exec'd
// anyway.
func lateExec(root, init string, initArgs []string) int {
	self, err := os.Executable()
	if err != nil {
		self = paths.LateBinary
	}
	if readOnly(root) {
		fmt.Fprintf(os.Stderr, "earlyinit: %s is read-only: the late stages run once %s has made it writable\n", root, init)
		startChild(self, "late", "--when-writable", "--root", root)
	} else {
		lateBootAsInit(root)
		startChild(self, "late", "--stage", "final", "--root", root)
	}
	argv := append([]string{init}, initArgs...)
	err = syscall.Exec(init, argv, os.Environ())
	fmt.Fprintf(os.Stderr, "earlyinit: exec %s: %v\n", init, err)
	return 1
}

// startChild starts earlyinit in a session of its own, not waited for:
// the real init, PID 1 after the exec, reaps it. It is the one command
// not run through proc.Run, on purpose: it must outlive us (we exec the
// real init right after), so no context, group kill or wait applies; its
// output goes to our stderr, a file, so nothing of ours holds a pipe of
// it either. The stages it runs start their own commands through proc.
func startChild(self string, args ...string) {
	c := exec.Command(self, args...)
	c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	c.Stdout, c.Stderr = os.Stderr, os.Stderr
	if err := c.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "earlyinit: start %s: %v\n", strings.Join(args, " "), err)
	}
}

// readOnly tells whether the filesystem holding dir is mounted read-only.
func readOnly(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Flags&unix.ST_RDONLY != 0
}

// writableWait bounds lateWhenWritable's wait: the init system's fsck of a
// big root may take minutes.
const writableWait = 15 * time.Minute

// lateWhenWritable waits until root is writable, then runs the boot stage
// and the final stage, one after the other.
func lateWhenWritable(root string) int {
	t0 := time.Now()
	for readOnly(root) {
		if time.Since(t0) > writableWait {
			fmt.Fprintf(os.Stderr, "earlyinit: %s still read-only after %s: the late stages do not run this boot\n", root, writableWait)
			return 1
		}
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Fprintf(os.Stderr, "earlyinit: %s is writable after %s: running the late stages\n", root, time.Since(t0).Round(time.Millisecond))
	opts, err := lateOptions(root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "earlyinit: late stages: %v\n", err)
		return 1
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*lateStageBound)
	defer cancel()
	rc := 0
	for _, st := range []modules.Stage{modules.StageBoot, modules.StageFinal} {
		if _, err := late.Run(ctx, st, opts); err != nil {
			fmt.Fprintf(os.Stderr, "earlyinit: late stage %s: %v\n", st, err)
			rc = 1
		}
	}
	return rc
}

// lateBootAsInit runs the boot stage for lateExec. We are PID 1: whatever
// happens in it (late.Run contains its own panics; this is the last net),
// init is exec'd afterwards.
func lateBootAsInit(root string) {
	defer func() {
		if p := recover(); p != nil {
			fmt.Fprintf(os.Stderr, "earlyinit: late boot stage: panic: %v\n", p)
		}
	}()
	opts, err := lateOptions(root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "earlyinit: late boot stage: %v\n", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), lateStageBound)
	defer cancel()
	if _, err := late.Run(ctx, modules.StageBoot, opts); err != nil {
		fmt.Fprintf(os.Stderr, "earlyinit: late boot stage: %v\n", err)
	}
}

func statusVerb(args []string) int {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	root := fs.String("root", "/", "the root whose state to read")
	wait := fs.Bool("wait", false, "wait until the late stages are done")
	long := fs.Bool("long", false, "more detail")
	format := fs.String("format", "tabular", "tabular or json")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rep, err := late.Status(*root)
	for *wait && err == nil && (rep.Status == late.StatusNotRun || rep.Status == late.StatusRunning) {
		time.Sleep(250 * time.Millisecond)
		rep, err = late.Status(*root)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "status: %v\n", err)
		return 1
	}
	switch *format {
	case "json":
		if !*long {
			rep.Stages = nil
		}
		b, _ := json.MarshalIndent(rep, "", " ")
		fmt.Println(string(b))
	case "tabular", "":
		fmt.Printf("status: %s\n", rep.ExtendedStatus)
		if *long {
			fmt.Printf("boot_status_code: %s\nlast_update: %s\ndetail:\n%s\n", rep.BootStatusCode, rep.LastUpdate, rep.Detail)
		}
		for _, e := range rep.Errors {
			fmt.Printf("error: %s\n", e)
		}
	default:
		fmt.Fprintf(os.Stderr, "status: --format %q: want tabular or json\n", *format)
		return 2
	}
	return rep.ExitCode()
}

func cleanVerb(args []string) int {
	fs := flag.NewFlagSet("clean", flag.ContinueOnError)
	root := fs.String("root", "/", "the root whose state to remove")
	logs := fs.Bool("logs", false, "remove the logs too")
	reboot := fs.Bool("reboot", false, "reboot afterwards")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := late.Clean(*root, *logs); err != nil {
		fmt.Fprintf(os.Stderr, "clean: %v\n", err)
		return 1
	}
	if *reboot {
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

func singleVerb(args []string) int {
	fs := flag.NewFlagSet("single", flag.ContinueOnError)
	root := fs.String("root", "/", "the real root")
	name := fs.String("name", "", "module to run")
	freq := fs.String("frequency", "", "always, once-per-instance or once (default: the module's own)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *name == "" {
		fmt.Fprintln(os.Stderr, "single: --name is required")
		return 2
	}
	var f modules.Frequency
	if *freq != "" {
		var err error
		if f, err = modules.ParseFrequency(*freq); err != nil {
			fmt.Fprintf(os.Stderr, "single: %v\n", err)
			return 2
		}
	}
	opts, err := lateOptions(*root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "single: %v\n", err)
		return 1
	}
	res, err := late.RunSingle(context.Background(), *name, f, opts)
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
