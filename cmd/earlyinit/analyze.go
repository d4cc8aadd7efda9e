package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/earlyinit/earlyinit/pkg/boot"
	"github.com/earlyinit/earlyinit/pkg/late"
	"github.com/earlyinit/earlyinit/pkg/paths"
	"github.com/earlyinit/earlyinit/pkg/timeline"
)

func init() {
	verbs["analyze"] = verb{"show how long each initramfs step and each module took; `analyze plot > boot.svg` draws the boot's timeline", analyzeVerb}
}

// analyzeVerb prints the boot record (/run/earlyinit/boot.json) and the
// modules of status.json, like `cloud-init analyze show`.
func analyzeVerb(args []string) int {
	plot := len(args) > 0 && args[0] == "plot"
	if plot {
		args = args[1:]
	}
	fs := flag.NewFlagSet("analyze", flag.ContinueOnError)
	root := fs.String("root", "/", "the root whose state to read")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	run := analyze
	if plot {
		run = analyzePlot
	}
	if err := run(os.Stdout, *root); err != nil {
		fmt.Fprintf(os.Stderr, "analyze: %v\n", err)
		return 1
	}
	return 0
}

func analyze(w io.Writer, root string) error {
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
