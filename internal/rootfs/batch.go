package rootfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"

	"golang.org/x/sys/unix"
)

// A Batch writes several files, in one or more Roots, with one flush of
// each filesystem for all of them instead of an fsync per file, keeping
// WriteFile's rule that a reader sees each file old or new, never torn or
// empty, whatever fails or crashes when.
//
// Stage writes a file's content to a temporary file next to it (through
// the same confined resolution and the same checks as WriteFile: nothing
// is followed out of the root, nothing planted by a user is written
// through, owner, mode and label are set on the open fd). Commit then
//
//  1. flushes each filesystem holding a staged file once (syncfs(2)), so
//     every temporary file's data and metadata are on disk;
//  2. renames every temporary file over its name, in the order staged;
//  3. flushes each filesystem again, for the renames;
//  4. after a Barrier, only if all that succeeded, renames the files
//     staged after it and flushes once more, and so on for each Barrier:
//     a crash or a failure before leaves them old, so a file staged after
//     a Barrier can mark "everything before is in place".
//
// A temporary file is never renamed before it is on disk, so a crash at
// any point leaves each name with its old content or its new. What a
// failure leaves unrenamed is removed; no temporary file is left but by a
// crash. A Batch holds an open directory fd per staged file until Commit
// or Abort; it is not safe for concurrent use.
type Batch struct {
	ops     fileOps
	entries []*staged
	phase   int // Barriers so far
	done    bool
}

// staged is one file of a Batch: its temporary name in dirfd, to be
// renamed to base.
type staged struct {
	root      *Root
	name      string // the cleaned name in the root, for messages
	dirfd     int
	dev       uint64 // the filesystem dirfd is on, to flush each once
	tmp, base string
	phase     int
	renamed   bool
}

// NewBatch returns an empty batch.
func NewBatch() *Batch { return &Batch{ops: sysOps{}} }

// Stage writes data to a temporary file for name in r, with mode and owner
// (uid, gid; -1 keeps the caller's) and r's label, to be renamed over name
// by Commit. Missing parent directories are created as WriteFile creates
// them. An error names the file; nothing of it is left and the batch stays
// usable.
func (b *Batch) Stage(r *Root, name string, data []byte, mode fs.FileMode, uid, gid int) error {
	n := clean(name)
	if b.done {
		return fmt.Errorf("write %s in %s: batch already committed", n, r.dir)
	}
	e, err := r.stage(b.ops, n, bytesOf(b.ops, data), mode, uid, gid, false)
	if err != nil {
		return fmt.Errorf("write %s in %s: %w", n, r.dir, err)
	}
	e.phase = b.phase
	b.entries = append(b.entries, e)
	return nil
}

// StageSymlink makes a temporary symlink to target for name in r, to be
// renamed over whatever file or symlink name is by Commit, as Symlink
// does.
func (b *Batch) StageSymlink(r *Root, target, name string) error {
	n := clean(name)
	if b.done {
		return fmt.Errorf("symlink %s -> %s in %s: batch already committed", n, target, r.dir)
	}
	e, err := r.stageSymlink(b.ops, target, n)
	if err != nil {
		return fmt.Errorf("symlink %s -> %s in %s: %w", n, target, r.dir, err)
	}
	e.phase = b.phase
	b.entries = append(b.entries, e)
	return nil
}

// Barrier makes the files staged after it wait, at Commit, until every
// file staged before it is renamed and flushed, and be renamed only if all
// those renames succeeded: on disk, such a file is new only when all the
// files before the Barrier are. Each Barrier costs one more flush.
func (b *Batch) Barrier() { b.phase++ }

// Commit flushes, renames and flushes again (see Batch). The renames
// between two Barriers go on past a failed one, each file being on its
// own; the files after a Barrier are renamed only when every rename and
// flush before it succeeded. The error names each file that was not put
// in place, and why. A batch commits once; Commit of an empty batch does
// nothing.
func (b *Batch) Commit() error {
	if b.done {
		return errors.New("batch already committed")
	}
	b.done = true
	defer b.release()
	if err := b.flush(b.entries); err != nil {
		return err
	}
	var errs []error
	for p := 0; p <= b.phase; p++ {
		var step []*staged
		for _, e := range b.entries {
			if e.phase == p {
				step = append(step, e)
			}
		}
		if len(step) == 0 {
			continue
		}
		if len(errs) > 0 {
			for _, e := range step {
				errs = append(errs, fmt.Errorf("write %s in %s: not put in place: the files staged before it were not all written", e.name, e.root.dir))
			}
			continue
		}
		errs = append(errs, b.renameAll(step)...)
		if err := b.flush(step); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Abort removes the temporary files of a batch not committed and releases
// it. It does nothing after Commit, so `defer b.Abort()` is safe.
func (b *Batch) Abort() {
	if b.done {
		return
	}
	b.done = true
	b.release()
}

// Committed tells whether Commit put name (in r) in place.
func (b *Batch) Committed(r *Root, name string) bool {
	n := clean(name)
	for _, e := range b.entries {
		if e.root == r && e.name == n && e.renamed {
			return true
		}
	}
	return false
}

// renameAll renames each entry, going on past failures, which it returns.
func (b *Batch) renameAll(entries []*staged) []error {
	var errs []error
	for _, e := range entries {
		if err := b.ops.rename(e.dirfd, e.tmp, e.base); err != nil {
			errs = append(errs, fmt.Errorf("write %s in %s: rename %s to %s: %w", e.name, e.root.dir, e.tmp, e.base, err))
			continue
		}
		e.renamed = true
	}
	return errs
}

// flush syncs each filesystem holding one of entries once.
func (b *Batch) flush(entries []*staged) error {
	seen := map[uint64]bool{}
	for _, e := range entries {
		if seen[e.dev] {
			continue
		}
		seen[e.dev] = true
		if err := b.ops.syncfs(e.dirfd); err != nil {
			return fmt.Errorf("flush the filesystem of %s in %s: %w", e.name, e.root.dir, err)
		}
	}
	return nil
}

// release removes every temporary file not renamed and closes the
// directories.
func (b *Batch) release() {
	for _, e := range b.entries {
		if !e.renamed {
			b.ops.unlink(e.dirfd, e.tmp)
		}
		unix.Close(e.dirfd)
	}
}

// bytesOf is a stage fill that writes data through ops.
func bytesOf(ops fileOps, data []byte) func(fd int) error {
	return func(fd int) error { return writeAll(ops, fd, data) }
}

// stage writes a new temporary file next to name (clean, in r) through
// ops: the confined lookup, the check of what name is now, an
// O_EXCL|O_NOFOLLOW create, the label, the content (fill writes it to the
// fd), owner and mode on the fd, with sync an fsync, and the close. It
// returns the entry, holding the directory's fd; on failure nothing is
// left.
func (r *Root) stage(ops fileOps, name string, fill func(fd int) error, mode fs.FileMode, uid, gid int, sync bool) (*staged, error) {
	d, base, err := r.lookup(name, true, true)
	if err != nil {
		return nil, err
	}
	e := &staged{root: r, name: name, dirfd: d.fd, base: base}
	ok := false
	defer func() {
		if !ok {
			unix.Close(d.fd)
		}
	}()
	// The rename would replace a planted link, not follow it; refuse it
	// all the same, so the user sees why their file was not replaced.
	if err := checkAt(d.fd, base, join(d.path, base), d.taint); err != nil {
		return nil, err
	}
	if e.dev, err = devOf(d.fd); err != nil {
		return nil, err
	}
	tmp, fd, err := createTemp(ops, d.fd, base)
	if err != nil {
		return nil, err
	}
	e.tmp = tmp
	open := true
	defer func() {
		if !ok {
			if open {
				ops.close(fd)
			}
			ops.unlink(d.fd, tmp)
		}
	}()
	if err := r.labelFd(fd, join(d.path, base), 0); err != nil {
		return nil, err
	}
	if err := fill(fd); err != nil {
		return nil, err
	}
	// Owner first: chown clears the set-id bits chmod sets.
	if err := ops.fchown(fd, uid, gid); err != nil {
		return nil, fmt.Errorf("chown %d:%d: %w", uid, gid, err)
	}
	if err := ops.fchmod(fd, unixMode(mode)); err != nil {
		return nil, fmt.Errorf("chmod %o: %w", unixMode(mode), err)
	}
	if sync {
		if err := ops.fsync(fd); err != nil {
			return nil, err
		}
	}
	open = false
	if err := ops.close(fd); err != nil {
		return nil, err
	}
	ok = true
	return e, nil
}

// stageSymlink makes a temporary symlink to target next to name (clean,
// in r), labelled as name.
func (r *Root) stageSymlink(ops fileOps, target, name string) (*staged, error) {
	d, base, err := r.lookup(name, false, true)
	if err != nil {
		return nil, err
	}
	e := &staged{root: r, name: name, dirfd: d.fd, base: base}
	ok := false
	defer func() {
		if !ok {
			unix.Close(d.fd)
		}
	}()
	if e.dev, err = devOf(d.fd); err != nil {
		return nil, err
	}
	for range 10 {
		e.tmp = tempName(base)
		err = ops.symlink(target, d.fd, e.tmp)
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if err := r.labelAt(d.fd, e.tmp, join(d.path, base), fs.ModeSymlink); err != nil {
		ops.unlink(d.fd, e.tmp)
		return nil, err
	}
	ok = true
	return e, nil
}

// writeAll writes all of data to fd.
func writeAll(ops fileOps, fd int, data []byte) error {
	for len(data) > 0 {
		n, err := ops.write(fd, data)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n <= 0 {
			return io.ErrShortWrite
		}
		data = data[n:]
	}
	return nil
}

// devOf is the device of the filesystem fd is on.
func devOf(fd int) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, err
	}
	return st.Dev, nil
}

// fileOps are the calls that write a staged file and put it in place: the
// layer tests inject faults into. sysOps is the system's.
type fileOps interface {
	// create makes name in dirfd O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW, 0600.
	create(dirfd int, name string) (int, error)
	write(fd int, p []byte) (int, error)
	fchown(fd, uid, gid int) error
	fchmod(fd int, mode uint32) error
	fsync(fd int) error
	close(fd int) error
	// syncfs flushes the filesystem fd is on (Linux 2.6.39). It reports
	// a write-back error only from Linux 5.8 on: before, one goes unseen.
	syncfs(fd int) error
	rename(dirfd int, from, to string) error
	unlink(dirfd int, name string) error
	symlink(target string, dirfd int, name string) error
}

type sysOps struct{}

func (sysOps) create(dirfd int, name string) (int, error) {
	return unix.Openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
}
func (sysOps) write(fd int, p []byte) (int, error) { return unix.Write(fd, p) }
func (sysOps) fchown(fd, uid, gid int) error       { return unix.Fchown(fd, uid, gid) }
func (sysOps) fchmod(fd int, mode uint32) error    { return unix.Fchmod(fd, mode) }
func (sysOps) fsync(fd int) error                  { return unix.Fsync(fd) }
func (sysOps) close(fd int) error                  { return unix.Close(fd) }
func (sysOps) syncfs(fd int) error                 { return unix.Syncfs(fd) }
func (sysOps) rename(dirfd int, from, to string) error {
	return unix.Renameat(dirfd, from, dirfd, to)
}
func (sysOps) unlink(dirfd int, name string) error { return unix.Unlinkat(dirfd, name, 0) }
func (sysOps) symlink(target string, dirfd int, name string) error {
	return unix.Symlinkat(target, dirfd, name)
}
