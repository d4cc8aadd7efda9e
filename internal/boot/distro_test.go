package boot

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/roottest"
	"golang.org/x/sys/unix"
)

// TestRemountWritable: a root the distro mounted read-only (and nosuid)
// is made writable with its other flags kept, and goes back read-only at
// the handoff; a writable root is left alone.
func TestRemountWritable(t *testing.T) {
	roottest.Require(t)
	dir := roottest.Tmpfs(t, "1M")
	if err := unix.Mount("", dir, "", unix.MS_REMOUNT|unix.MS_RDONLY|unix.MS_NOSUID, ""); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	b := &Boot{root: dir, start: time.Now(), Log: newLog(&out, nil, time.Now())}
	wasRO, err := b.remountWritable()
	if err != nil || !wasRO {
		t.Fatalf("remountWritable = %v, %v; want true, nil", wasRO, err)
	}
	var st unix.Statfs_t
	unix.Statfs(dir, &st)
	if st.Flags&unix.ST_RDONLY != 0 || st.Flags&unix.ST_NOSUID == 0 {
		t.Errorf("after remount: flags %#x, want writable and still nosuid", st.Flags)
	}
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Errorf("root not writable: %v", err)
	}
	b.Cmd.ReadOnly = wasRO
	b.prepareHandoff(Record{})
	unix.Statfs(dir, &st)
	if st.Flags&unix.ST_RDONLY == 0 {
		t.Errorf("after the handoff the root is writable; the distro mounted it read-only")
	}
	if !strings.Contains(out.String(), "remounted "+dir+" read-write") {
		t.Errorf("log lacks the remount line:\n%s", out.String())
	}
	// Writable already: nothing to do.
	rw := roottest.Tmpfs(t, "1M")
	b.root = rw
	if wasRO, err := b.remountWritable(); err != nil || wasRO {
		t.Errorf("writable root: remountWritable = %v, %v; want false, nil", wasRO, err)
	}
}

// TestProvisionNoRoot: a root that is not there is an error and a log
// line, not a panic.
func TestProvisionNoRoot(t *testing.T) {
	var out bytes.Buffer
	err := Provision(filepath.Join(t.TempDir(), "missing"), &out)
	if err == nil || !strings.Contains(out.String(), "is not a mounted directory") {
		t.Errorf("Provision(missing) = %v, log:\n%s", err, out.String())
	}
}

// TestProvisionDisabledFile: the image's disabled file stops the work
// before anything is written into the root.
func TestProvisionDisabledFile(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "etc/earlyinit"), 0o755)
	os.WriteFile(filepath.Join(root, "etc/earlyinit/disabled"), nil, 0o644)
	var out bytes.Buffer
	b := &Boot{root: root, start: time.Now(), Log: newLog(&out, nil, time.Now())}
	b.provisionMounted()
	if !strings.Contains(out.String(), "exists in the real root: nothing to do") {
		t.Errorf("log:\n%s", out.String())
	}
	ents, _ := os.ReadDir(root)
	if len(ents) != 1 {
		t.Errorf("root has %d entries, want only etc: earlyinit wrote into a disabled root", len(ents))
	}
}
