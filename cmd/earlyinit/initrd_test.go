//go:build initrd

package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/provision"
)

// The initramfs build refuses the image-building verbs, and the package's
// the late-stage runner's too, naming the installed binary; the others are
// there. (make unit runs this package with -tags initrd and with -tags
// initrd,nolate.)
func TestInitrdVerbs(t *testing.T) {
	left, kept := []string{"initramfs", "mkseed", "setup", "man", "completion"}, []string{"status", "clean", "query", "net-convert", "analyze", "provision", "version"}
	if provision.LateRunner {
		kept = append(kept, "late", "single", "schema")
	} else { // the package's build, tags initrd,nolate
		left = append(left, "late", "single", "schema")
	}
	for _, n := range left {
		v, ok := verbs[n]
		if !ok {
			t.Fatalf("verb %s missing", n)
		}
		if !strings.Contains(v.help, "/usr/bin/earlyinit") {
			t.Errorf("verb %s: help %q does not name /usr/bin/earlyinit", n, v.help)
		}
	}
	for _, n := range kept {
		if _, ok := verbs[n]; !ok {
			t.Errorf("verb %s missing from the initramfs build", n)
		}
	}
	if os.Getenv("EARLYINIT_INITRD_VERB") != "" {
		os.Exit(verbs[os.Getenv("EARLYINIT_INITRD_VERB")].run(nil))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestInitrdVerbs$")
	cmd.Env = append(os.Environ(), "EARLYINIT_INITRD_VERB=mkseed")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "mkseed is not in this build") {
		t.Errorf("mkseed in the initramfs build: %v, %q; want exit 2 naming the installed binary", err, out)
	}
}
