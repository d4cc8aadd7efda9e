package provision

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/roottest"
)

// TestRunImmutableHostname: the instance step writes in one batch; an
// /etc/hostname that cannot be replaced (chattr +i: the rename fails at
// Commit) is that file's error only: the cache is stored, /etc/hosts is
// written, the network step runs.
func TestRunImmutableHostname(t *testing.T) {
	log := &testLog{}
	env := testEnv(t, log)
	p := filepath.Join(env.Root, "etc/hostname")
	if err := os.WriteFile(p, []byte("image\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	roottest.Immutable(t, p)
	if res := Run(env); !res.Instance {
		t.Fatalf("no instance:\n%s", log.String())
	}
	if got := strings.Join(log.steps, " "); got != "datasource:<nil> grow:<nil> instance:<nil> network:<nil>" {
		t.Errorf("steps %s\n%s", got, log.String())
	}
	if !strings.Contains(log.String(), "/etc/hostname") || !strings.Contains(log.String(), "the rest of the instance is applied") {
		t.Errorf("the hostname's failure is not logged:\n%s", log.String())
	}
	for f, want := range map[string]string{
		"etc/hostname":                     "image\n",
		paths.DataDir[1:] + "/instance-id": driveIID + "\n",
	} {
		if b, _ := os.ReadFile(filepath.Join(env.Root, f)); string(b) != want {
			t.Errorf("%s = %q, want %q", f, b, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(env.Root, "etc/hosts")); !strings.Contains(string(b), "web-1") {
		t.Errorf("/etc/hosts = %q", b)
	}
	var temps []string
	filepath.WalkDir(env.Root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".earlyinit-") {
			temps = append(temps, p)
		}
		return nil
	})
	if len(temps) > 0 {
		t.Errorf("temporary files left: %v", temps)
	}
}
