// Package cache writes an instance into the real root: the instance cache
// (cloud-init's /var/lib/cloud shape, under paths.CacheDir), the
// instance-data files in the run directory, and what a new instance gets
// (host name, /etc/hosts, injected files, the random seed). The model it
// writes, and the rendering of instance-data.json, are internal/instance's; this
// package holds every write, all of them through internal/rootfs.
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
//	    instance-data.json                 the run directory's, secrets redacted, 0644:
//	                                       put back there by Restore
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
// cloud-init's record of the same instance, from the same data, as
// cloud-init 22.4 leaves it (stages.Init._reflect_cur_instance and
// update, helpers.Paths), so that cloud-init's CLI and a cloud-init booted
// later (earlyinit=disabled, or the package removed) know the instance:
//
//	/var/lib/cloud/
//	  instance -> /var/lib/cloud/instances/<iid>   absolute, as cloud-init links it
//	  instances/<iid>/
//	    datasource                         as earlyinit's, 0644
//	    user-data.txt vendor-data.txt      the same bytes as earlyinit's, 0600
//	    vendor-data2.txt                   (`cloud-init query` as root reads them)
//	    handlers/ scripts/ sem/            0755; sem/ gets config_<module> (internal/late)
//	  data/
//	    instance-id                        written last, 0644
//	    previous-instance-id               as earlyinit's, 0644
//	    previous-datasource                cloud-init's instance's datasource line
//	                                       before this boot (this boot's if none), 0644
//
// and in cloud-init's run directory (paths.CloudRunDir, in the same tree
// as earlyinit's): instance-data.json and instance-data-sensitive.json
// (the same bytes, 0644 and 0600), .instance-id, and ds-identify's cached
// answer (dsIdentifyConfig, dsIdentifyResult). These are staged after
// earlyinit's data/instance-id: a failure to write them is reported
// (CloudInitErr, or the batch's Commit) and never keeps the cache from
// being stored.
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

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// noPreviousInstanceID is what previous-instance-id holds on a first
// boot, as in cloud-init.
const noPreviousInstanceID = "NO_PREVIOUS_INSTANCE_ID"

// Cache is the cache layout of one real root.
type Cache struct {
	root *rootfs.Root
	// cached is the instance id found before this boot wrote anything,
	// read once so that IsNew and previous-instance-id keep meaning "the
	// id of the previous boot" after Store (cloud-init's _previous_iid);
	// cloudCached is cloud-init's record, read with it.
	cached, cloudCached *string
	// cloudErr is what the last Stage could not stage of cloud-init's
	// record.
	cloudErr error
}

// New returns the cache of real root r.
func New(r *rootfs.Root) *Cache {
	return &Cache{root: r}
}

// CachedID returns the instance id cached by the previous boot, "" if none:
// earlyinit's record (data/instance-id), else cloud-init's
// (paths.CloudDataDir/instance-id: an instance cloud-init provisioned
// before earlyinit's first boot). It is read once: after Store it still
// returns the previous boot's id.
func (c *Cache) CachedID() (string, error) {
	if c.cached != nil {
		return *c.cached, nil
	}
	own, err := readID(c.root, idFile)
	if err != nil {
		return "", err
	}
	// cloud-init's record is a second opinion: one that cannot be read
	// (/var/lib/cloud not a directory) is none.
	ci, _ := readID(c.root, cloudIDFile)
	id := own
	if id == "" {
		id = ci
	}
	c.cached, c.cloudCached = &id, &ci
	return id, nil
}

// readID reads an instance-id file, "" if there is none.
func readID(r *rootfs.Root, name string) (string, error) {
	b, err := r.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// IsNew tells whether d is a new instance: neither earlyinit's record nor
// cloud-init's names it. Each program keeps both records current on the
// boots it provisions (earlyinit writes cloud-init's, cloud-init only its
// own), so the two differ only when cloud-init provisioned the last boot
// (earlyinit=disabled), or before earlyinit kept cloud-init's record: the
// instance either one last provisioned is not new.
func (c *Cache) IsNew(d *instance.Data) (bool, error) {
	id, err := c.CachedID()
	if err != nil {
		return false, err
	}
	if id == "" {
		return true, nil
	}
	return id != d.InstanceID && *c.cloudCached != d.InstanceID, nil
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
// interrupted half-way is seen as new again. cloud-init's record is
// written too; its error, if any, is joined to Store's.
func (c *Cache) Store(d *instance.Data, opts StoreOptions) error {
	b := rootfs.NewBatch()
	defer b.Abort()
	if err := c.Stage(b, d, opts); err != nil {
		return err
	}
	return errors.Join(c.cloudErr, b.Commit())
}

// Stage stages into b what Store writes: every file and the instance
// symlink, then, after a Barrier, data/instance-id, then cloud-init's
// record (its data/instance-id last). Files the caller stages after it
// (StageNewInstance) are put in place after data/instance-id, as the boot
// did before it had batches, and cannot keep the cache from being stored.
// A failure of the cache is returned at once; the caller then aborts b. A
// failure to stage cloud-init's record is not returned: CloudInitErr has
// it, and the cache is staged all the same. After b.Commit, Stored tells
// whether the cache was stored.
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
		prev = noPreviousInstanceID
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
		{r, idir + "/" + instance.InstanceDataFile, redacted, 0o644},
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
	if err := b.Stage(r, idFile, []byte(d.InstanceID+"\n"), 0o644, 0, 0); err != nil {
		return err
	}
	c.cloudErr = c.stageCloudInit(b, run, d, cloudFiles{ds: ds, prev: prev, redacted: redacted, sensitive: sensitive})
	return nil
}

// Restore puts the cached instance's record back in the run directory
// (runDir in run, paths.RunDir if ""), for a boot that keeps the cached
// instance because no source answered: instance-data.json as it was
// stored (secrets redacted: the sensitive file is not kept on disk) and
// .instance-id, in earlyinit's run directory and cloud-init's. It returns
// the instance id; "" and nothing written when there is no cached
// instance.
func (c *Cache) Restore(run *rootfs.Root, runDir string) (string, error) {
	if runDir == "" {
		runDir = paths.RunDir
	}
	id, err := c.CachedID()
	if err != nil || id == "" {
		return "", err
	}
	idir := paths.InstancesDir + "/" + instance.InstanceDirName(id)
	data, err := c.root.ReadFile(idir + "/" + instance.InstanceDataFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return id, err
	}
	for _, dir := range []string{runDir, paths.CloudRunDir} {
		if err := run.MkdirAll(dir, 0o755, 0, 0); err != nil {
			return id, err
		}
		if data != nil {
			if err := run.WriteFile(dir+"/"+instance.InstanceDataFile, data, 0o644, 0, 0); err != nil {
				return id, err
			}
		}
		if err := run.WriteFile(dir+"/.instance-id", []byte(id+"\n"), 0o644, 0, 0); err != nil {
			return id, err
		}
	}
	return id, nil
}

// cloudFiles is what stageCloudInit writes that Stage has already made.
type cloudFiles struct {
	ds, prev            string
	redacted, sensitive []byte
}

// stageCloudInit stages cloud-init's record of d, from the same data as
// the cache (see the package comment): staged after earlyinit's
// data/instance-id, so that a failure here never keeps the cache from
// being stored, with cloud-init's data/instance-id last.
func (c *Cache) stageCloudInit(b *rootfs.Batch, run *rootfs.Root, d *instance.Data, f cloudFiles) error {
	r := c.root
	name := instance.InstanceDirName(d.InstanceID)
	idir := paths.CloudInstancesDir + "/" + name
	prevDS := f.ds
	if b, err := r.ReadFile(idir + "/datasource"); err == nil && strings.TrimSpace(string(b)) != "" {
		prevDS = string(b)
	}
	for _, dir := range []string{"handlers", "scripts", "sem"} {
		if err := r.MkdirAll(idir+"/"+dir, 0o755, 0, 0); err != nil {
			return fmt.Errorf("cloud-init's record: %w", err)
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
		{r, idir + "/datasource", []byte(f.ds), 0o644},
		{r, paths.CloudDataDir + "/previous-datasource", []byte(prevDS), 0o644},
		{r, paths.CloudDataDir + "/previous-instance-id", []byte(f.prev + "\n"), 0o644},
		{run, paths.CloudRunDir + "/" + instance.InstanceDataSensitiveFile, f.sensitive, 0o600},
		{run, paths.CloudRunDir + "/" + instance.InstanceDataFile, f.redacted, 0o644},
		{run, paths.CloudRunDir + "/.instance-id", []byte(d.InstanceID + "\n"), 0o644},
		{run, dsIdentifyConfig, dsIdentifyAnswer(d), 0o644},
		{run, dsIdentifyResult, []byte("0\n"), 0o644},
	} {
		if err := b.Stage(f.root, f.name, f.data, f.mode, 0, 0); err != nil {
			return fmt.Errorf("cloud-init's record: %w", err)
		}
	}
	// cloud-init links its instance with the absolute path.
	if err := b.StageSymlink(r, idir, paths.CloudInstanceLink); err != nil {
		return fmt.Errorf("cloud-init's record: %w", err)
	}
	if err := b.Stage(r, cloudIDFile, []byte(d.InstanceID+"\n"), 0o644, 0, 0); err != nil {
		return fmt.Errorf("cloud-init's record: %w", err)
	}
	return nil
}

// ds-identify's cached answer in cloud-init's run directory. cloud-init's
// systemd generator runs ds-identify on every boot; ds-identify answers
// from these two files, without probing, when both exist (its main: "used
// cached result"). earlyinit, which found the datasource, writes them so
// that the generator enables cloud-init.target (cloud-init's units are
// masked or stood in for: see internal/late's MaskCloudInit) and `cloud-init
// status` says enabled-by-generator rather than "disabled" on a platform
// ds-identify would not have recognised.
const (
	dsIdentifyConfig = paths.CloudRunDir + "/cloud.cfg"
	dsIdentifyResult = paths.CloudRunDir + "/.ds-identify.result"
)

// dsIdentifyAnswer is the cloud.cfg ds-identify writes when it found d's
// datasource: "datasource_list: [ <Class>, None ]".
func dsIdentifyAnswer(d *instance.Data) []byte {
	class := d.DatasourceClass
	if class == "" && d.Datasource != "" {
		class = strings.ToUpper(d.Datasource[:1]) + d.Datasource[1:]
	}
	list := "None"
	if class != "" && class != "None" {
		list = class + ", None"
	}
	return []byte("datasource_list: [ " + list + " ]\n# written by earlyinit, which found this datasource in the initramfs\n")
}

// CloudInitErr is what Stage could not stage of cloud-init's record (the
// cache itself was staged): the caller reports it, the boot goes on.
func (c *Cache) CloudInitErr() error {
	return c.cloudErr
}

// idFile is the cache's data/instance-id; cloudIDFile cloud-init's.
const (
	idFile      = paths.DataDir + "/instance-id"
	cloudIDFile = paths.CloudDataDir + "/instance-id"
)

// Stored tells whether b, staged by Stage and committed, stored the cache:
// data/instance-id, put in place last, was.
func (c *Cache) Stored(b *rootfs.Batch) bool {
	return b.Committed(c.root, idFile)
}

// applyNewInstance does what a new instance needs in the real root before
// its init runs: /etc/hostname gets the short host name
// (instance.Hostnames of local-hostname), /etc/hosts gets a "127.0.1.1
// <fqdn> <short>" line (instance.UpdateHosts), and OpenStack injected files
// are written, mode 0644, owned by root, confined to the root. It goes on
// after a failure and returns all errors joined. Existing /etc/hostname and
// /etc/hosts keep their mode and owner.
func applyNewInstance(r *rootfs.Root, d *instance.Data) error {
	return applyNewInstanceWith(r, d, NewInstanceOptions{})
}

// NewInstanceOptions says what applyNewInstanceWith leaves alone: the
// image's (or user-data's) wishes.
type NewInstanceOptions struct {
	// PreserveHostname is preserve_hostname: true: /etc/hostname and
	// /etc/hosts are left as they are.
	PreserveHostname bool
}

// applyNewInstanceWith is applyNewInstance with opts: StageNewInstance
// into a batch of its own, committed.
func applyNewInstanceWith(r *rootfs.Root, d *instance.Data, opts NewInstanceOptions) error {
	b := rootfs.NewBatch()
	defer b.Abort()
	err := StageNewInstance(b, r, d, opts)
	return errors.Join(err, b.Commit())
}

// StageNewInstance stages into b what a new instance needs
// (applyNewInstance). It goes on after a failure and returns all errors
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
