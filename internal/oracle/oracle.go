// Package oracle runs cloud-init 22.4 itself, installed on the test
// machine (make deps installs Debian's cloud-init, its services kept
// off), as the reference earlyinit's compatibility tests compare with:
// a Python script that imports cloudinit gets the test's input as JSON on
// stdin and prints its answer as JSON. A machine without it fails the
// test, never skips it: a compatibility claim without its oracle is not
// checked.
package oracle

import (
	"encoding/json"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

var (
	once   sync.Once
	python string
)

// Python is a python3 that imports cloudinit, or the test fails.
func Python(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		for _, py := range []string{"/usr/bin/python3", "python3"} {
			if exec.Command(py, "-c", "import cloudinit.util").Run() == nil {
				python = py
				return
			}
		}
	})
	if python == "" {
		t.Fatal("no python3 that imports cloudinit (cloud-init 22.4, the oracle of this test): make deps installs it")
	}
	return python
}

// Run runs script with cloud-init's Python, the JSON of in on its stdin
// (json, logging and sys imported; cloud-init's logging off), and decodes
// the JSON it prints into out.
func Run(t testing.TB, script string, in, out any) {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(Python(t), "-c", "import json, logging, sys\nlogging.disable(logging.CRITICAL)\n"+script)
	cmd.Stdin = strings.NewReader(string(b))
	o, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("cloud-init oracle: %v: %s", err, ee.Stderr)
		}
		t.Fatalf("cloud-init oracle: %v", err)
	}
	if err := json.Unmarshal(o, out); err != nil {
		t.Fatalf("cloud-init oracle output %q: %v", o, err)
	}
}
