// Package cache writes an instance into the real root: the instance cache
// (cloud-init's /var/lib/cloud shape, under paths.CacheDir), the
// instance-data files in the run directory, and what a new instance gets
// (host name, /etc/hosts, injected files, the random seed). The model it
// writes, and the rendering of instance-data.json, are pkg/instance's; this
// package holds every write, all of them through pkg/rootfs.
//
// The layout, under paths.CacheDir (/var/lib/earlyinit):
//
//	/var/lib/earlyinit/
//	  instance -> instances/<iid>          relative symlink to this boot's instance
//	  instances/<iid>/                     one per instance ever seen, never deleted;
//	                                       "/" in the id becomes "_"
//	    datasource                         instance.DatasourceString(d) + "\n", 0644
//	    user-data.txt                      raw user-data, byte for byte, 0600
//	    vendor-data.txt                    raw vendor-data, 0600
//	    vendor-data2.txt                   raw vendor-data2, 0600
//	    handlers/ scripts/ sem/            for the late stage, 0755
//	  data/
//	    datasource                         instance.DatasourceString(d) + "\n" of this boot, 0644
//	    instance-id                        this boot's id + "\n", 0644
//	    previous-instance-id               the id cached before this boot + "\n",
//	                                       or NO_PREVIOUS_INSTANCE_ID, 0644
//	    previous-datasource                the instance's datasource line before
//	                                       this boot (this boot's if none), 0644
//
// and in the run directory (paths.RunDir, /run/earlyinit; /run moves into
// the real root at switch_root):
//
//	instance-data.json                     0644, secrets redacted (instance.InstanceData)
//	instance-data-sensitive.json           0600
//	.instance-id                           this boot's id + "\n", 0644
//
// Every file is written atomically through rootfs, so symlinks in the real
// root cannot redirect a write outside it, and in one rootfs.Batch per
// step: one flush for all the files rather than one per file.
package cache

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"

	"github.com/earlyinit/earlyinit/pkg/instance"
	"github.com/earlyinit/earlyinit/pkg/paths"
	"github.com/earlyinit/earlyinit/pkg/rootfs"
)

// NoPreviousInstanceID is what previous-instance-id holds on a first
// boot, as in cloud-init.
const NoPreviousInstanceID = "NO_PREVIOUS_INSTANCE_ID"

// Cache is the cache layout of one real root.
type Cache struct {
	root *rootfs.Root
	// cached is the instance id found before this boot wrote anything,
	// read once so that IsNew and previous-instance-id keep meaning "the
	// id of the previous boot" after Store (cloud-init's _previous_iid).
	cached *string
}

// New returns the cache of real root r.
func New(r *rootfs.Root) *Cache {
	return &Cache{root: r}
}

// CachedID returns the instance id cached by the previous boot, "" if none.
// It is read once: after Store it still returns the previous boot's id.
func (c *Cache) CachedID() (string, error) {
	if c.cached != nil {
		return *c.cached, nil
	}
	b, err := c.root.ReadFile(paths.DataDir + "/instance-id")
	id := strings.TrimSpace(string(b))
	if errors.Is(err, fs.ErrNotExist) {
		id, err = "", nil
	}
	if err != nil {
		return "", err
	}
	c.cached = &id
	return id, nil
}

// IsNew tells whether d is a new instance: no id cached by the previous
// boot, or a different one.
func (c *Cache) IsNew(d *instance.Data) (bool, error) {
	id, err := c.CachedID()
	if err != nil {
		return false, err
	}
	return id == "" || id != d.InstanceID, nil
}

// checkID refuses ids that cannot name a directory or a line of a file.
func checkID(id string) error {
	switch instance.InstanceDirName(id) {
	case "":
		return errors.New("instance-id is empty")
	case ".", "..":
		return fmt.Errorf("instance-id %q cannot name a directory", id)
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("instance-id %q has a control character", id)
		}
	}
	if len(id) > 255 {
		return fmt.Errorf("instance-id %.20q...: longer than 255 bytes", id)
	}
	return nil
}

// StoreOptions says where Store writes what is not in the cache directory.
type StoreOptions struct {
	// Run is the tree holding RunDir: the initramfs "/" at boot (its /run
	// moves into the real root). Nil means the cache's own root.
	Run *rootfs.Root
	// RunDir is earlyinit's run directory in Run; "" means paths.RunDir.
	RunDir string
	// Sys goes into instance-data.json's v1 keys.
	Sys instance.SysInfo
}

// Store writes the cache for d: its instance directory and payloads, the
// instance symlink, data/ and the instance-data files (the layout in the
// package comment). It never deletes an old instance's directory. Every
// file goes through one rootfs.Batch (Stage): one flush for all, and
// data/instance-id is put in place after all the others are, so a boot
// interrupted half-way is seen as new again.
func (c *Cache) Store(d *instance.Data, opts StoreOptions) error {
	b := rootfs.NewBatch()
	defer b.Abort()
	if err := c.Stage(b, d, opts); err != nil {
		return err
	}
	return b.Commit()
}

// Stage stages into b what Store writes: every file and the instance
// symlink, then, after a Barrier, data/instance-id. Files the caller
// stages after it (StageNewInstance) are put in place after
// data/instance-id, as the boot did before it had batches, and cannot
// keep the cache from being stored. A failure is returned at once; the
// caller then aborts b. After b.Commit, Stored tells whether the cache was
// stored.
func (c *Cache) Stage(b *rootfs.Batch, d *instance.Data, opts StoreOptions) error {
	if err := checkID(d.InstanceID); err != nil {
		return fmt.Errorf("store instance cache: %w", err)
	}
	run := opts.Run
	if run == nil {
		run = c.root
	}
	runDir := opts.RunDir
	if runDir == "" {
		runDir = paths.RunDir
	}
	prev, err := c.CachedID()
	if err != nil {
		return err
	}
	if prev == "" {
		prev = NoPreviousInstanceID
	}
	redacted, sensitive, err := instance.InstanceData(d, opts.Sys)
	if err != nil {
		return err
	}

	r := c.root
	name := instance.InstanceDirName(d.InstanceID)
	idir := paths.InstancesDir + "/" + name
	ds := instance.DatasourceString(d) + "\n"
	prevDS := ds
	if b, err := r.ReadFile(idir + "/datasource"); err == nil && strings.TrimSpace(string(b)) != "" {
		prevDS = string(b)
	}
	for _, dir := range []string{"handlers", "scripts", "sem"} {
		if err := r.MkdirAll(idir+"/"+dir, 0o755, 0, 0); err != nil {
			return err
		}
	}
	for _, f := range []struct {
		root *rootfs.Root
		name string
		data []byte
		mode fs.FileMode
	}{
		{r, idir + "/user-data.txt", d.UserData, 0o600},
		{r, idir + "/vendor-data.txt", d.VendorData, 0o600},
		{r, idir + "/vendor-data2.txt", d.VendorData2, 0o600},
		{r, idir + "/datasource", []byte(ds), 0o644},
		{r, paths.DataDir + "/datasource", []byte(ds), 0o644},
		{r, paths.DataDir + "/previous-datasource", []byte(prevDS), 0o644},
		{run, runDir + "/" + instance.InstanceDataSensitiveFile, sensitive, 0o600},
		{run, runDir + "/" + instance.InstanceDataFile, redacted, 0o644},
		{run, runDir + "/.instance-id", []byte(d.InstanceID + "\n"), 0o644},
		{r, paths.DataDir + "/previous-instance-id", []byte(prev + "\n"), 0o644},
	} {
		if err := b.Stage(f.root, f.name, f.data, f.mode, 0, 0); err != nil {
			return err
		}
	}
	if err := b.StageSymlink(r, "instances/"+name, paths.InstanceLink); err != nil {
		return err
	}
	b.Barrier()
	return b.Stage(r, idFile, []byte(d.InstanceID+"\n"), 0o644, 0, 0)
}

// idFile is the cache's data/instance-id.
const idFile = paths.DataDir + "/instance-id"

// Stored tells whether b, staged by Stage and committed, stored the cache:
// data/instance-id, put in place last, was.
func (c *Cache) Stored(b *rootfs.Batch) bool {
	return b.Committed(c.root, idFile)
}

// ApplyNewInstance does what a new instance needs in the real root before
// its init runs: /etc/hostname gets the short host name
// (instance.Hostnames of local-hostname), /etc/hosts gets a "127.0.1.1
// <fqdn> <short>" line (instance.UpdateHosts), and OpenStack injected files
// are written, mode 0644, owned by root, confined to the root. It goes on
// after a failure and returns all errors joined. Existing /etc/hostname and
// /etc/hosts keep their mode and owner.
func ApplyNewInstance(r *rootfs.Root, d *instance.Data) error {
	return ApplyNewInstanceWith(r, d, NewInstanceOptions{})
}

// NewInstanceOptions says what ApplyNewInstanceWith leaves alone: the
// image's (or user-data's) wishes.
type NewInstanceOptions struct {
	// PreserveHostname is preserve_hostname: true: /etc/hostname and
	// /etc/hosts are left as they are.
	PreserveHostname bool
}

// ApplyNewInstanceWith is ApplyNewInstance with opts: StageNewInstance
// into a batch of its own, committed.
func ApplyNewInstanceWith(r *rootfs.Root, d *instance.Data, opts NewInstanceOptions) error {
	b := rootfs.NewBatch()
	defer b.Abort()
	err := StageNewInstance(b, r, d, opts)
	return errors.Join(err, b.Commit())
}

// StageNewInstance stages into b what a new instance needs
// (ApplyNewInstance). It goes on after a failure and returns all errors
// joined; what it staged is written by b.Commit.
func StageNewInstance(b *rootfs.Batch, r *rootfs.Root, d *instance.Data, opts NewInstanceOptions) error {
	var errs []error
	if d.LocalHostname != "" && !opts.PreserveHostname {
		errs = append(errs, setHostname(b, r, d.LocalHostname))
	}
	for _, f := range d.Files {
		if err := b.Stage(r, f.Path, f.Content, 0o644, 0, 0); err != nil {
			errs = append(errs, fmt.Errorf("injected file: %w", err))
		}
	}
	return errors.Join(errs...)
}

func setHostname(b *rootfs.Batch, r *rootfs.Root, name string) error {
	fqdn, short, err := instance.Hostnames(name)
	if err != nil {
		return err
	}
	if err := stageKeep(b, r, "/etc/hostname", []byte(short+"\n")); err != nil {
		return err
	}
	old, err := r.ReadFile("/etc/hosts")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return stageKeep(b, r, "/etc/hosts", instance.UpdateHosts(old, fqdn, short))
}

// stageKeep stages name keeping an existing file's mode and owner (0644,
// root for a new file).
func stageKeep(b *rootfs.Batch, r *rootfs.Root, name string, data []byte) error {
	mode, uid, gid := fs.FileMode(0o644), 0, 0
	if fi, err := r.Stat(name); err == nil && fi.Mode().IsRegular() {
		mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(st.Uid), int(st.Gid)
		}
	}
	return b.Stage(r, name, data, mode, uid, gid)
}

// SeedRandom mixes seed (the datasource's random_seed) into the kernel's
// entropy pool by writing it to w, which the boot step opens on
// /dev/urandom. Writing to /dev/urandom mixes without crediting entropy, as
// cloud-init's seed_random does. An empty seed writes nothing.
func SeedRandom(w io.Writer, seed []byte) error {
	if len(seed) == 0 {
		return nil
	}
	if _, err := w.Write(seed); err != nil {
		return fmt.Errorf("seed random pool with %d bytes: %w", len(seed), err)
	}
	return nil
}
