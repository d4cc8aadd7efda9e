package cache

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/roottest"
)

// TestStageOneBatch: the cache and a new instance's identity in one batch,
// as the instance step writes them. A file of the identity that cannot be
// put in place (an immutable /etc/hostname fails at the rename) is
// reported, and the cache is stored all the same; a cache file that cannot
// be keeps data/instance-id and the identity old, so the next boot is new
// again.
func TestStageOneBatch(t *testing.T) {
	for _, tt := range []struct {
		name       string
		immutable  string // file made immutable before the batch
		stored     bool
		errNames   string
		hostname   string
		instanceID string
	}{
		{name: "clean", stored: true, hostname: "web-1\n", instanceID: testData().InstanceID + "\n"},
		{name: "hostname", immutable: "/etc/hostname", stored: true, errNames: "/etc/hostname", hostname: "old\n", instanceID: testData().InstanceID + "\n"},
		{name: "cache", immutable: paths.DataDir + "/datasource", stored: false, errNames: paths.DataDir + "/datasource", hostname: "old\n", instanceID: "i-old\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			r := openRoot(t, dir)
			for _, f := range []string{"/etc/hostname", paths.DataDir + "/datasource"} {
				if err := r.WriteFile(f, []byte("old\n"), 0o644, 0, 0); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.WriteFile(paths.DataDir+"/instance-id", []byte("i-old\n"), 0o644, 0, 0); err != nil {
				t.Fatal(err)
			}
			if tt.immutable != "" {
				roottest.Immutable(t, r.Path(tt.immutable))
			}
			c := New(r)
			b := rootfs.NewBatch()
			defer b.Abort()
			if err := c.Stage(b, testData(), StoreOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := StageNewInstance(b, r, testData(), NewInstanceOptions{}); err != nil {
				t.Fatal(err)
			}
			err := b.Commit()
			if tt.errNames == "" && err != nil {
				t.Fatal(err)
			}
			if tt.errNames != "" && (err == nil || !strings.Contains(err.Error(), tt.errNames)) {
				t.Errorf("Commit = %v, want an error naming %s", err, tt.errNames)
			}
			if got := c.Stored(b); got != tt.stored {
				t.Errorf("Stored = %v, want %v", got, tt.stored)
			}
			for f, want := range map[string]string{"etc/hostname": tt.hostname, paths.DataDir[1:] + "/instance-id": tt.instanceID} {
				if got := readFile(t, filepath.Join(dir, f)); got != want {
					t.Errorf("%s = %q, want %q", f, got, want)
				}
			}
			var temps []string
			filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err == nil && strings.Contains(d.Name(), ".earlyinit-") {
					temps = append(temps, p)
				}
				return nil
			})
			if len(temps) > 0 {
				t.Errorf("temporary files left: %v", temps)
			}
		})
	}
}
