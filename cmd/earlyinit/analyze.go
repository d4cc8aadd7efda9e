package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/timeline"
)

func init() {
	verbs["analyze"] = &verbAnalyze
}

// verbAnalyze is the analyze verb.
var verbAnalyze = verb{help: "how long each initramfs step and each module took: alone, earlyinit's summary; blame, show and dump as cloud-init analyze's; plot draws the boot's timeline as SVG (`analyze plot > boot.svg`)",
	operands: "[blame|show|dump|plot]", words: func() []string { return analyzeSubverbs },
	flags: func() *pflag.FlagSet { return new(analyzeOpts).flags() }, run: analyzeVerb}

// analyzeSubverbs are analyze's operands: cloud-init's three, and plot.
var analyzeSubverbs = []string{"blame", "show", "dump", "plot"}

// analyzeOpts are cloud-init analyze's flags, and --root.
type analyzeOpts struct {
	root, infile, outfile, format string
}

func (o *analyzeOpts) flags() *pflag.FlagSet {
	fs := newFlags("analyze")
	rootFlag(fs, &o.root, "/", "the root whose state to read: "+paths.BootRecordFile+" and "+late.StatusFile)
	fs.StringVarP(&o.infile, "infile", "i", "", "blame, show, dump: read the events from `FILE` (JSON, as dump prints them, cloud-init's too; - is stdin) instead of this boot's record")
	fs.StringVarP(&o.outfile, "outfile", "o", "-", "write the output to `FILE`")
	fs.StringVarP(&o.format, "format", "f", analyzeShowFormat, "show: each event's line, a `FORMAT`, with %d (its time), %D (description), %E (time since the boot's first event), %e (event type), %I (indent), %l (level), %n (name), %o (origin), %r (result), %t (timestamp)")
	fileFlag(fs, "infile", "outfile")
	return fs
}

// analyzeVerb is `earlyinit analyze [blame|show|dump|plot]`: alone, the
// boot record (/run/earlyinit/boot.json) and the modules of status.json
// in earlyinit's own words; blame, show and dump in cloud-init analyze's,
// from the same data as events; plot as SVG.
func analyzeVerb(args []string) int {
	var o analyzeOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	sub := ""
	switch fs.NArg() {
	case 0:
	case 1:
		sub = fs.Arg(0)
		if !slices.Contains(analyzeSubverbs, sub) {
			return usageError("analyze", "unknown subcommand %q: want one of %s", sub, strings.Join(analyzeSubverbs, ", "))
		}
	default:
		return usageError("analyze", "one subcommand at most, got %q", fs.Args())
	}
	if fs.Changed("format") && sub != "show" {
		return usageError("analyze", "--format goes with show")
	}
	if o.infile != "" && (sub == "" || sub == "plot") {
		return usageError("analyze", "--infile goes with blame, show and dump")
	}
	var buf bytes.Buffer
	var err error
	switch sub {
	case "":
		err = analyzeSummary(&buf, o.root)
	case "plot":
		err = analyzePlot(&buf, o.root)
	default:
		err = analyzeEvents(&buf, sub, o)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "analyze: %v\n", err)
		return 1
	}
	if o.outfile == "-" {
		_, err = os.Stdout.Write(buf.Bytes())
	} else {
		err = os.WriteFile(o.outfile, buf.Bytes(), 0o644)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "analyze: %v\n", err)
		return 1
	}
	return 0
}

func analyzeSummary(w io.Writer, root string) error {
	var rec boot.Record
	if err := readJSON(filepath.Join(root, paths.BootRecordFile), &rec); err != nil {
		return err
	}
	fmt.Fprintf(w, "initramfs (earlyinit %s), switch_root to %s after %s:\n", rec.Version, rec.Init, rec.Total.Round(time.Millisecond))
	for _, s := range rec.Steps {
		status := "ok"
		if s.Error != "" {
			status = "error: " + s.Error
		}
		fmt.Fprintf(w, "  %-12s %10s  (at %s) %s\n", s.Name, s.Duration.Round(time.Microsecond*10), s.Start.Round(time.Millisecond), status)
	}
	own := rec.Total - rec.ModuleLoad - rec.DeviceWait - rec.NetworkWait
	fmt.Fprintf(w, "  module loading %s, device waits %s, metadata service %s, earlyinit's own %s\n",
		rec.ModuleLoad.Round(time.Millisecond), rec.DeviceWait.Round(time.Millisecond), rec.NetworkWait.Round(time.Millisecond), own.Round(time.Millisecond))
	bootStage, finalStage, err := lateStages(root)
	if err != nil {
		if os.IsNotExist(err) {
			fmt.Fprintln(w, "late stages: not run")
			return nil
		}
		return err
	}
	for _, stage := range []struct {
		name string
		s    *late.StageStatus
	}{{"boot", bootStage}, {"final", finalStage}} {
		s := stage.s
		if s == nil || s.Start == nil {
			fmt.Fprintf(w, "stage %s: not run\n", stage.name)
			continue
		}
		took := "running"
		if s.Finished != nil {
			took = fmt.Sprintf("%.3fs", *s.Finished-*s.Start)
		}
		fmt.Fprintf(w, "stage %s: %s\n", stage.name, took)
		for _, m := range s.Modules {
			fmt.Fprintf(w, "  %-22s %8.3fs  %s\n", m.Name, m.Duration, m.Status)
		}
	}
	return nil
}

// lateStages reads the late stages from status.json.
func lateStages(root string) (bootStage, finalStage *late.StageStatus, err error) {
	var st struct {
		V1 struct {
			Boot  *late.StageStatus `json:"boot"`
			Final *late.StageStatus `json:"final"`
		} `json:"v1"`
	}
	if err := readJSON(filepath.Join(root, late.StatusFile), &st); err != nil {
		return nil, nil, err
	}
	return st.V1.Boot, st.V1.Final, nil
}

// analyzePlot writes the boot's timeline as SVG (timeline.Build): the
// initramfs steps, the late stages and their modules, from the kernel's
// start. Without status.json (late stages not run yet) it draws the
// initramfs alone.
func analyzePlot(w io.Writer, root string) error {
	var rec boot.Record
	if err := readJSON(filepath.Join(root, paths.BootRecordFile), &rec); err != nil {
		return err
	}
	bootStage, finalStage, err := lateStages(root)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return timeline.Build(rec, bootStage, finalStage).SVG(w)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
