//go:build !initrd

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/earlyinit/earlyinit/internal/analyze"
	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/paths"
)

// `earlyinit analyze blame|show|dump`: internal/analyze over the events
// of this boot, or of an `analyze dump` file.

// analyzeShowFormat is show's default --format (initrdcli.go's in the
// initramfs builds, which leave internal/analyze out).
const analyzeShowFormat = analyze.ShowFormat

// loadEvents reads the events: from o.infile (JSON, "-" for stdin), or
// this boot's under o.root.
func loadEvents(o analyzeOpts) ([]analyze.Event, error) {
	if o.infile == "" {
		var rec boot.Record
		if err := readJSON(filepath.Join(o.root, paths.BootRecordFile), &rec); err != nil {
			return nil, err
		}
		bootStage, finalStage, err := lateStages(o.root)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		events, left := analyze.Events(rec, bootStage, finalStage)
		if left {
			fmt.Fprintf(os.Stderr, "analyze: %s has no start time (an older earlyinit wrote it): the late stages are left out\n", paths.BootRecordFile)
		}
		return events, nil
	}
	var b []byte
	var err error
	if o.infile == "-" {
		b, err = io.ReadAll(io.LimitReader(os.Stdin, 64<<20))
	} else {
		b, err = os.ReadFile(o.infile)
	}
	if err != nil {
		return nil, err
	}
	return analyze.ParseDump(o.infile, b)
}

// analyzeEvents writes blame, show or dump.
func analyzeEvents(w io.Writer, sub string, o analyzeOpts) error {
	events, err := loadEvents(o)
	if err != nil {
		return err
	}
	switch sub {
	case "dump":
		return analyze.Dump(w, events)
	case "blame":
		analyze.Blame(w, events)
	case "show":
		analyze.Show(w, events, o.format)
	}
	return nil
}
