// Package inittrace reads the Go runtime's package initialisation trace,
// the lines GODEBUG=inittrace=1 writes to standard error before main runs:
//
//	init internal/bytealg @0.008 ms, 0 ms clock, 0 bytes, 0 allocs
//
// bench/startup prints them; a test uses them to check that earlyinit's
// own packages do (almost) no work at initialisation.
package inittrace

import (
	"bufio"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Init is one package's initialisation.
type Init struct {
	Package string
	// Start is when it began, from the process's start.
	Start time.Duration
	// Clock is the wall time it took.
	Clock time.Duration
	// Bytes and Allocs are its heap allocations.
	Bytes, Allocs int64
}

// Parse returns the init lines of a GODEBUG=inittrace=1 standard error, in
// order; other lines are skipped. A line that starts "init " but does not
// read as a trace line is an error naming it.
func Parse(stderr string) ([]Init, error) {
	var inits []Init
	sc := bufio.NewScanner(strings.NewReader(stderr))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if !strings.HasPrefix(line, "init ") {
			continue
		}
		in, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("inittrace line %d %q: %w", n, line, err)
		}
		inits = append(inits, in)
	}
	return inits, sc.Err()
}

// parseLine reads "init PKG @S ms, C ms clock, B bytes, A allocs".
func parseLine(line string) (Init, error) {
	f := strings.Fields(line)
	if len(f) != 11 || f[0] != "init" || !strings.HasPrefix(f[2], "@") || f[3] != "ms," ||
		f[5] != "ms" || f[6] != "clock," || f[8] != "bytes," || f[10] != "allocs" {
		return Init{}, fmt.Errorf("not \"init PKG @S ms, C ms clock, B bytes, A allocs\"")
	}
	in := Init{Package: f[1]}
	var err error
	if in.Start, err = millis(strings.TrimPrefix(f[2], "@")); err != nil {
		return Init{}, fmt.Errorf("start: %w", err)
	}
	if in.Clock, err = millis(f[4]); err != nil {
		return Init{}, fmt.Errorf("clock: %w", err)
	}
	if in.Bytes, err = strconv.ParseInt(f[7], 10, 64); err != nil {
		return Init{}, fmt.Errorf("bytes: %w", err)
	}
	if in.Allocs, err = strconv.ParseInt(strings.TrimSuffix(f[9], ","), 10, 64); err != nil {
		return Init{}, fmt.Errorf("allocs: %w", err)
	}
	return in, nil
}

func millis(s string) (time.Duration, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	if v < 0 {
		return 0, fmt.Errorf("negative time %s", s)
	}
	return time.Duration(math.Round(v * float64(time.Millisecond))), nil
}
