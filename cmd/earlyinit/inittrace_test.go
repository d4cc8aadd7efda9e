package main

import (
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/inittrace"
)

// maxInitBytes bounds what one of our packages may allocate before main
// runs (issue 18: every process, PID 1 and each CLI verb, pays it). A
// package's errors.New values, a few sync.OnceValue wrappers and a small
// table fit; one compiled regular expression (2.2 KB and more, even for
// `^[0-9]+$`), a schema or a map of more than a dozen entries does not:
// build those on first use (sync.OnceValue), or make a small set a switch
// or a slice.
const maxInitBytes = 2048

// initWorkPending are packages whose init-time work is being removed by
// work in progress (issue 18's were modules, instance and netcfg): each is
// reported, not failed, while over the bound, and fails once it is under
// it, so that its entry is removed then. None is pending now.
var initWorkPending []string

// TestNoInitWork runs this test binary, which links every package the
// earlyinit binary does, with GODEBUG=inittrace=1 and checks what each
// of our packages allocated while it was initialised. It checks
// allocations, not times: those do not depend on the machine or its load.
func TestNoInitWork(t *testing.T) {
	if os.Getenv("EARLYINIT_INITTRACE_CHILD") != "" {
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	godebug := "inittrace=1"
	if g := os.Getenv("GODEBUG"); g != "" {
		godebug = g + "," + godebug
	}
	cmd.Env = append(os.Environ(), "GODEBUG="+godebug, "EARLYINIT_INITTRACE_CHILD=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s with GODEBUG=%s: %v\n%s", os.Args[0], godebug, err, stderr.String())
	}
	inits, err := inittrace.Parse(stderr.String())
	if err != nil {
		t.Fatal(err)
	}
	const ours = "github.com/earlyinit/earlyinit/"
	seen := map[string]bool{}
	for _, in := range inits {
		if !strings.HasPrefix(in.Package, ours) {
			continue
		}
		name := strings.TrimPrefix(in.Package, ours)
		seen[name] = true
		if slices.Contains(initWorkPending, name) {
			if in.Bytes <= maxInitBytes {
				t.Errorf("%s allocates %d bytes at initialisation, within %d: remove it from initWorkPending", in.Package, in.Bytes, maxInitBytes)
			} else {
				t.Logf("pending: %s allocates %d bytes (%d allocations) at initialisation", in.Package, in.Bytes, in.Allocs)
			}
			continue
		}
		if in.Bytes > maxInitBytes {
			t.Errorf("%s allocates %d bytes (%d allocations) at initialisation, more than %d: build its tables and regular expressions on first use (sync.OnceValue)",
				in.Package, in.Bytes, in.Allocs, maxInitBytes)
		}
	}
	// The trace must have covered the binary: this package registers its
	// verbs in init functions, so it has a line; packages with nothing to
	// initialise have none.
	if !seen["cmd/earlyinit"] {
		t.Errorf("no inittrace line for %scmd/earlyinit in:\n%s", ours, stderr.String())
	}
}
