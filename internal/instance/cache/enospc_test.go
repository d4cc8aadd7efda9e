package cache

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/roottest"
)

// TestStoreENOSPC: a root that fills up while the cache of a new instance
// is written (a 256 KiB tmpfs, 1 MiB of user-data) fails with ENOSPC
// naming the file; every file of the old cache is intact, data/instance-id
// still names the old instance (the next boot retries), the new
// user-data.txt is not there half-written, and no temporary file is left.
func TestStoreENOSPC(t *testing.T) {
	dir := roottest.Tmpfs(t, "256k")
	old := testData()
	storeBoot(t, dir, old)
	snapshot := func() map[string]string {
		m := map[string]string{}
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				b, _ := os.ReadFile(p)
				m[strings.TrimPrefix(p, dir)] = string(b)
			}
			return nil
		})
		return m
	}
	before := snapshot()

	d := testData()
	d.InstanceID = "i-new"
	d.UserData = bytes.Repeat([]byte("#"), 1<<20)
	err := New(openRoot(t, dir)).Store(d, StoreOptions{})
	if !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("Store = %v, want ENOSPC", err)
	}
	if !strings.Contains(err.Error(), "/var/lib/earlyinit/instances/i-new/user-data.txt") {
		t.Errorf("error %q does not name the file", err)
	}
	after := snapshot()
	for p, content := range before {
		if after[p] != content {
			t.Errorf("%s changed: %d bytes -> %d", p, len(content), len(after[p]))
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("new file %s left (half-written or temporary)", p)
		}
	}
	if id, err := New(openRoot(t, dir)).CachedID(); err != nil || id != old.InstanceID {
		t.Errorf("cached id = %q, %v; want the old %q", id, err, old.InstanceID)
	}
}
