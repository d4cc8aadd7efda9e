package late

import (
	"context"
	"crypto/md5"
	"encoding/hex"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// urlCacheDir is where #include-once bodies of instance iid are kept:
// instances/<iid>/data/urlcache, as cloud-init's
// paths.get_ipath_cur("data")/urlcache.
func urlCacheDir(iid string) string {
	return paths.InstancesDir + "/" + instance.InstanceDirName(iid) + "/data/urlcache"
}

// cloudURLCacheDir is cloud-init's urlCacheDir for instance iid, where a
// cloud-init that provisioned the instance kept its #include-once bodies.
func cloudURLCacheDir(iid string) string {
	return paths.CloudInstancesDir + "/" + instance.InstanceDirName(iid) + "/data/urlcache"
}

// includeOnce wraps get for the URLs of an #include-once line as
// cloud-init's UserDataProcessor._do_include does: the first fetch that
// succeeds is kept, 0600, under urlCacheDir(iid) in a file named by the
// URL's MD5 (cloud-init's name for it), and every later boot of the
// instance reads the body from there instead of fetching it. A URL after
// a plain #include is fetched every time. A cache file that cannot be
// read (too big, a link planted under the cache) is not used: the URL is
// fetched and the file rewritten. cloud-init's cache of the instance
// (cloudURLCacheDir) is read when earlyinit's has no body (an instance
// cloud-init provisioned: a URL valid once is not fetched again), and
// gets a copy of what is fetched (for a cloud-init booted later).
func includeOnce(r *rootfs.Root, iid string, get userdata.Getter, logf func(string, ...any)) userdata.Getter {
	if get == nil {
		return nil
	}
	return func(ctx context.Context, url string, once bool) ([]byte, error) {
		if !once {
			return get(ctx, url, false)
		}
		sum := md5.Sum([]byte(url))
		file := hex.EncodeToString(sum[:])
		name := urlCacheDir(iid) + "/" + file
		for _, n := range []string{name, cloudURLCacheDir(iid) + "/" + file} {
			b, err := readCapped(r, n, maxUserData)
			switch {
			case err != nil:
				logf("WARNING: #include-once %s: cached body not used: %v", userdata.RedactURL(url), err)
			case b != nil:
				logf("#include-once %s: read from %s", userdata.RedactURL(url), n)
				return b, nil
			}
		}
		b, err := get(ctx, url, true)
		if err != nil {
			return nil, err
		}
		err = r.MkdirAll(urlCacheDir(iid), 0o700, 0, 0)
		if err == nil {
			err = r.WriteFile(name, b, 0o600, 0, 0)
		}
		if err != nil {
			logf("WARNING: #include-once %s: not kept (it is fetched again next boot): %v", userdata.RedactURL(url), err)
		}
		if err := r.WriteFile(cloudURLCacheDir(iid)+"/"+file, b, 0o600, 0, 0); err != nil {
			logf("WARNING: #include-once %s: not kept for cloud-init: %v", userdata.RedactURL(url), err)
		}
		return b, nil
	}
}
