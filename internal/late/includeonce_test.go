package late

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules"
)

// TestIncludeOnce: as cloud-init's _do_include, a URL after an
// #include-once line is fetched once per instance and read from
// instances/<iid>/data/urlcache/<md5 of the URL> (0600) afterwards; a
// plain #include URL is fetched at every boot; a new instance fetches
// again; a cache entry that is not a plain file is not followed.
// cloud-init's cache of the instance gets a copy and is read when
// earlyinit's has none.
func TestIncludeOnce(t *testing.T) {
	f := newFixture(t)
	ud := "#include-once\nhttp://h.example/once?token=SECRET\n#include http://h.example/always\n"
	f.store("iid-1", ud)
	fetched := map[string]int{}
	opts := f.opts(nil)
	opts.Include = func(_ context.Context, u string, once bool) ([]byte, error) {
		fetched[u]++
		return []byte("#cloud-config\nfinal_message: from " + u + "\n"), nil
	}
	boot := func() {
		t.Helper()
		for _, st := range []modules.Stage{modules.StageBoot, modules.StageFinal} {
			if _, err := Run(context.Background(), st, opts); err != nil {
				t.Fatal(err)
			}
		}
	}
	once, always := "http://h.example/once?token=SECRET", "http://h.example/always"
	sum := md5.Sum([]byte(once))
	cached := urlCacheDir("iid-1") + "/" + hex.EncodeToString(sum[:])

	boot()
	boot()
	if fetched[once] != 1 || fetched[always] != 2 {
		t.Fatalf("after two boots: fetched %v; want the include-once URL once, the other twice", fetched)
	}
	fi, err := f.root.Stat(cached)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file %s: %v %v; want mode 0600", cached, fi, err)
	}
	if got := f.read(cached); got != "#cloud-config\nfinal_message: from "+once+"\n" {
		t.Errorf("cached body %q", got)
	}
	if log := f.read(LogFile); strings.Contains(log, "SECRET") || !strings.Contains(log, "#include-once http://h.example/once?REDACTED: read from") {
		t.Errorf("log:\n%s", log)
	}

	// cloud-init's cache of the instance has the same body, 0600.
	cloudCached := cloudURLCacheDir("iid-1") + "/" + hex.EncodeToString(sum[:])
	if fi, err := f.root.Stat(cloudCached); err != nil || fi.Mode().Perm() != 0o600 || f.read(cloudCached) != f.read(cached) {
		t.Errorf("cloud-init's cache file %s: %v %v", cloudCached, fi, err)
	}

	// Only cloud-init's cache (an instance cloud-init provisioned): read
	// from there, not fetched.
	if err := os.Remove(filepath.Join(f.dir, cached)); err != nil {
		t.Fatal(err)
	}
	boot()
	if fetched[once] != 1 {
		t.Errorf("cloud-init's cache not used: fetched %v", fetched)
	}

	// A link planted where the cache file is: not followed, fetched again.
	for _, c := range []string{cached, cloudCached} {
		if err := os.Remove(filepath.Join(f.dir, c)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/shadow", filepath.Join(f.dir, cached)); err != nil {
		t.Fatal(err)
	}
	boot()
	if fetched[once] != 2 {
		t.Errorf("a link in the cache was used: fetched %v", fetched)
	}

	// Another instance: fetched again.
	f.store("iid-2", ud)
	boot()
	if fetched[once] != 3 {
		t.Errorf("a new instance did not fetch the include-once URL: fetched %v", fetched)
	}
}
