package network

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/logs"
	"github.com/earlyinit/earlyinit/internal/netcfg"
	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// DigestFile records, in the real root, the digest of the network files last
// written, so they are rewritten on a new instance and whenever they change,
// and left alone otherwise.
const DigestFile = paths.DataDir + "/network-config.sha256"

// Env is the system Apply works on.
type Env struct {
	// Netlink lists and renames the links (nic.System()).
	Netlink nic.Netlinker
	// Root is the real root the files go into.
	Root *rootfs.Root
	Log  logs.Logger
	// Wait bounds the wait for the NICs to rename (earlyinit.timeout); 0
	// means one look.
	Wait time.Duration
	// Scan runs a coldplug round between polls for NICs, so late NIC
	// drivers load; LoadTime is the time spent loading modules so far, so
	// that time is not counted as waiting. Either may be nil.
	Scan     func()
	LoadTime func() time.Duration
	// IsNew is set on a new instance: the files are written even when
	// their digest is the one last written.
	IsNew bool
}

// Apply carries out res on the system: it waits (up to env.Wait) for the
// NICs res renames, renames them by MAC (nic.Apply), and writes the files
// for the names that took (Result.FilesFor) into env.Root, with their
// digest in DigestFile (which is put in place only when every file is),
// unless the instance is the same and the digest unchanged. It logs each
// rename, each problem and each file written.
// deviceWait is the time spent waiting for NICs, less module loading.
//
// A Disabled Result is logged and nothing done; a Result whose rendering
// failed (no Renderer) has its NICs renamed but nothing written. Failures
// are joined in err; none stops the others.
func Apply(ctx context.Context, env Env, res *Result) (deviceWait time.Duration, err error) {
	if res.Disabled {
		env.Log.Printf("network: config disabled by the datasource; nothing renamed or written")
		return 0, nil
	}
	want := maps.Clone(res.Renames)
	var errs []error
	if len(want) > 0 {
		macs := make([]string, 0, len(want))
		for m := range want {
			macs = append(macs, m)
		}
		sort.Strings(macs)
		wctx, cancel := context.WithTimeout(ctx, env.Wait)
		t0, loaded := time.Now(), loadTime(env)
		env.Log.Debugf("network: waiting for NICs %s", strings.Join(macs, " "))
		missing, err := waitLinks(wctx, env.Netlink, macs, env.Scan)
		cancel()
		deviceWait = time.Since(t0) - (loadTime(env) - loaded)
		if err != nil && len(missing) > 0 {
			env.Log.Errorf("network: NICs not found within %s: %s", env.Wait, strings.Join(missing, " "))
		}
		applied, problems, err := nic.Apply(env.Netlink, want)
		for _, p := range problems {
			env.Log.Errorf("network: %s", p)
		}
		for _, s := range applied {
			env.Log.Printf("network: renamed %s", s)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rename NICs: %w", err))
		}
		// Persist only what is in place: entries Plan refused stay out.
		for _, p := range problems {
			delete(want, strings.ToLower(p.MAC))
		}
	}
	if res.Renderer == "" {
		return deviceWait, errors.Join(errs...)
	}
	env.Log.Printf("network: renderer %s", res.Renderer)
	files := res.FilesFor(want)
	digest := digestFiles(files)
	if old, err := env.Root.ReadFile(DigestFile); err == nil && !env.IsNew && strings.TrimSpace(string(old)) == digest {
		env.Log.Printf("network: config unchanged since last written; left as is")
		return deviceWait, errors.Join(errs...)
	}
	if err := res.moveAside(env); err != nil {
		// Nothing of cloud-init's is replaced without its copy.
		errs = append(errs, fmt.Errorf("%w: the network files are not written", err))
		return deviceWait, errors.Join(errs...)
	}
	return deviceWait, errors.Join(append(errs, writeFiles(env, files, digest))...)
}

// writeFiles writes files into env.Root in one batch (three flushes of
// the filesystem, not two fsyncs per file), then their digest, which is
// put in place only when every file is: a file that failed is written
// again next boot, the digest not matching.
func writeFiles(env Env, files []netcfg.File, digest string) error {
	b := rootfs.NewBatch()
	defer b.Abort()
	var errs []error
	for _, f := range files {
		if err := b.Stage(env.Root, f.Path, f.Data, f.Mode, 0, 0); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		b.Barrier()
		if err := b.Stage(env.Root, DigestFile, []byte(digest+"\n"), 0o644, 0, 0); err != nil {
			errs = append(errs, err)
		}
	}
	if err := b.Commit(); err != nil {
		errs = append(errs, err)
	}
	for _, f := range files {
		if b.Committed(env.Root, f.Path) {
			env.Log.Printf("network: wrote %s", f.Path)
		}
	}
	return errors.Join(errs...)
}

func loadTime(env Env) time.Duration {
	if env.LoadTime == nil {
		return 0
	}
	return env.LoadTime()
}

// waitLinks waits for NICs with the given MACs, running scan between short
// polls so late NIC drivers load.
func waitLinks(ctx context.Context, nl nic.Netlinker, macs []string, scan func()) ([]string, error) {
	for {
		sub, cancel := context.WithTimeout(ctx, 250*time.Millisecond)
		missing, err := nic.WaitFor(sub, nl, macs, 50*time.Millisecond)
		cancel()
		if err == nil || ctx.Err() != nil {
			return missing, err
		}
		if scan != nil {
			scan()
		}
	}
}

// digestFiles is the SHA-256 of files, sorted by path: each one's path,
// mode and size, then its content.
func digestFiles(files []netcfg.File) string {
	sorted := append([]netcfg.File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	h := sha256.New()
	for _, f := range sorted {
		fmt.Fprintf(h, "%s %o %d\n", f.Path, f.Mode, len(f.Data))
		h.Write(f.Data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// moveAside keeps a copy (0600) of each of cloud-init's files the config
// replaces under BackupDir, unless it is earlyinit's own already; only
// when every copy is kept does it remove those after the first (the first
// is overwritten by the config) and earlyinit's file of an earlier boot
// that the config no longer uses. An error means nothing may be written.
func (r *Result) moveAside(env Env) error {
	for _, p := range r.replaced {
		old, err := env.Root.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("keep a copy of %s: %w", p, err)
		}
		if strings.HasPrefix(string(old), ownHeader) {
			continue
		}
		if err := env.Root.WriteFile(BackupDir+p, old, 0o600, 0, 0); err != nil {
			return fmt.Errorf("keep a copy of %s: %w", p, err)
		}
		env.Log.Printf("network: %s was cloud-init's: earlyinit's config replaces it (a copy is in %s)", p, BackupDir+p)
	}
	var errs []error
	for _, p := range r.replaced[min(1, len(r.replaced)):] {
		if err := env.Root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	if r.stale != "" {
		if err := env.Root.Remove(r.stale); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		} else {
			env.Log.Printf("network: removed %s: the config is in %s", r.stale, r.replaced[0])
		}
	}
	if len(errs) > 0 {
		env.Log.Errorf("network: %v", errors.Join(errs...))
	}
	return nil
}
