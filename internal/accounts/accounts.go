// Package accounts changes a root's local accounts as shadow-utils' tools
// do (useradd, groupadd, usermod -a -G, passwd -l), without a process per
// change: the same lines in /etc/passwd, /etc/shadow, /etc/group,
// /etc/gshadow, /etc/subuid and /etc/subgid, under the same locks (glibc's
// lckpwdf on /etc/.pwd.lock, then each file's FILE.lock made by link(2)
// and holding the locker's pid, as commonio_lock), ids allocated from
// login.defs as useradd allocates them, each file's FILE- backup, and a
// new user's home from the skeleton directory.
//
// It does what Debian's shadow 4.13 does (its tests run that useradd as
// the reference); Supported says where that is known to hold. Anything
// else keeps the distribution's tools.
package accounts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// The databases, in the order useradd opens them.
const (
	Passwd  = "/etc/passwd"
	Shadow  = "/etc/shadow"
	Group   = "/etc/group"
	Gshadow = "/etc/gshadow"
	Subuid  = "/etc/subuid"
	Subgid  = "/etc/subgid"
)

// pwdLock is lckpwdf(3)'s lock file.
const pwdLock = "/etc/.pwd.lock"

// maxDB caps a database read.
const maxDB = 16 << 20

// lockWait is how long Begin waits for lckpwdf's lock, as glibc does.
var lockWait = 15 * time.Second

// Supported tells whether r's accounts are changed here rather than by the
// tools: a Debian-family root (os-release's ID or ID_LIKE says debian,
// whose useradd the tests check this against) with regular passwd, shadow
// and group files, and no name service cache running that useradd would
// tell (nscd, sssd). why says what is missing.
func Supported(r *rootfs.Root) (ok bool, why string) {
	osr, err := r.ReadFile("/etc/os-release")
	if err != nil {
		osr, err = r.ReadFile("/usr/lib/os-release")
	}
	if err != nil || !debianFamily(string(osr)) {
		return false, "not a Debian-family root"
	}
	for _, f := range []string{Passwd, Shadow, Group} {
		fi, err := r.Stat(f)
		if err != nil || !fi.Mode().IsRegular() {
			return false, f + " is not a regular file"
		}
	}
	for _, f := range []string{"/run/nscd/socket", "/var/run/nscd/socket", "/var/lib/sss/mc/passwd"} {
		if r.Exists(f) {
			return false, "a name service cache (" + f + ")"
		}
	}
	return true, ""
}

func debianFamily(osr string) bool {
	for _, l := range strings.Split(osr, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(l), "=")
		if !ok || (k != "ID" && k != "ID_LIKE") {
			continue
		}
		for _, w := range strings.Fields(strings.Trim(v, `"'`)) {
			if w == "debian" {
				return true
			}
		}
	}
	return false
}

// db is one database file: its lines (without the trailing newline) and
// what it was.
type db struct {
	name    string
	lines   []string
	old     []byte
	mode    fs.FileMode
	uid     int
	gid     int
	changed bool
}

// find returns the index of the line whose first field is name, or -1.
func (d *db) find(name string) int {
	for i, l := range d.lines {
		if n, _, _ := strings.Cut(l, ":"); n == name {
			return i
		}
	}
	return -1
}

func (d *db) add(line string) {
	d.lines = append(d.lines, line)
	d.changed = true
}

// Tx is a change to the databases under shadow-utils' locks: Begin takes
// them, Commit writes what changed and releases them, Close releases them
// (after Commit, or instead of it).
type Tx struct {
	r     *rootfs.Root
	pwd   *os.File
	locks []string
	dbs   map[string]*db
	defs  Defs
	now   time.Time
	done  bool
}

// Begin locks r's databases as useradd does: lckpwdf (waiting up to 15
// s), then each of the databases the root has, FILE.lock, failing when
// another live process holds one.
func Begin(r *rootfs.Root, now time.Time) (*Tx, error) {
	tx := &Tx{r: r, dbs: map[string]*db{}, now: now}
	f, err := os.OpenFile(r.Path(pwdLock), os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", pwdLock, err)
	}
	tx.pwd = f
	if err := lockWithin(f, lockWait); err != nil {
		tx.Close()
		return nil, fmt.Errorf("lock %s: %w", pwdLock, err)
	}
	for _, name := range []string{Passwd, Shadow, Group, Gshadow, Subuid, Subgid} {
		fi, err := r.Stat(name)
		if errors.Is(err, fs.ErrNotExist) && (name == Gshadow || name == Subuid || name == Subgid) {
			continue
		}
		if err != nil {
			tx.Close()
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			tx.Close()
			return nil, fmt.Errorf("%s: not a regular file", name)
		}
		if err := tx.lock(name); err != nil {
			tx.Close()
			return nil, err
		}
		b, err := r.ReadFile(name)
		if err != nil {
			tx.Close()
			return nil, err
		}
		if len(b) > maxDB {
			tx.Close()
			return nil, fmt.Errorf("%s: over %d bytes", name, maxDB)
		}
		st := fi.Sys().(*syscall.Stat_t)
		d := &db{name: name, old: b, mode: fi.Mode().Perm(), uid: int(st.Uid), gid: int(st.Gid)}
		if t := strings.TrimSuffix(string(b), "\n"); t != "" {
			d.lines = strings.Split(t, "\n")
		}
		tx.dbs[name] = d
	}
	defs, err := readDefs(r)
	if err != nil {
		tx.Close()
		return nil, err
	}
	tx.defs = defs
	return tx, nil
}

// lockWithin takes f's fcntl write lock, giving up after d.
func lockWithin(f *os.File, d time.Duration) error {
	deadline := time.Now().Add(d)
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
	for {
		err := unix.FcntlFlock(f.Fd(), unix.F_SETLK, &lk)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EACCES) {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("held by another process for %s", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lock is commonio_lock_nowait: FILE.PID holding the pid, linked to
// FILE.lock; a lock file whose pid is not running is stale and removed.
func (tx *Tx) lock(name string) error {
	pid := strconv.Itoa(os.Getpid())
	tmp, lk := name+"."+pid, name+".lock"
	// Created and removed here (O_EXCL, no link followed; /etc is
	// root's), never synced: a lock lives as long as the process, as
	// shadow's does.
	f, err := os.OpenFile(tx.r.Path(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if errors.Is(err, fs.ErrExist) {
		os.Remove(tx.r.Path(tmp)) // left by an earlier process with this pid
		f, err = os.OpenFile(tx.r.Path(tmp), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	}
	if err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	_, err = f.WriteString(pid)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	defer os.Remove(tx.r.Path(tmp))
	if err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	for try := 0; try < 2; try++ {
		err := os.Link(tx.r.Path(tmp), tx.r.Path(lk))
		if err == nil {
			tx.locks = append(tx.locks, lk)
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("lock %s: %w", name, err)
		}
		b, rerr := tx.r.ReadFile(lk)
		other, perr := strconv.Atoi(strings.TrimRight(string(b), "\x00\n"))
		if rerr != nil || perr != nil || other <= 0 {
			return fmt.Errorf("lock %s: %s holds no pid", name, lk)
		}
		if unix.Kill(other, 0) == nil || other == os.Getpid() {
			return fmt.Errorf("cannot lock %s: process %d holds %s; try again later", name, other, lk)
		}
		if err := os.Remove(tx.r.Path(lk)); err != nil {
			return fmt.Errorf("lock %s: stale %s: %w", name, lk, err)
		}
	}
	return fmt.Errorf("cannot lock %s", name)
}

// Close releases the locks; without Commit nothing is written.
func (tx *Tx) Close() {
	for _, lk := range tx.locks {
		os.Remove(tx.r.Path(lk)) // unlinked, not synced: a lock is the process's
	}
	tx.locks = nil
	if tx.pwd != nil {
		tx.pwd.Close() // closing releases the fcntl lock
		tx.pwd = nil
	}
}

// Commit writes the changed databases as commonio_close does: FILE- (the
// old content, FILE's mode and owner), then FILE replaced atomically with
// its mode and owner; all in one batch, then the locks released.
func (tx *Tx) Commit() error {
	defer tx.Close()
	b := rootfs.NewBatch()
	var changed []*db
	for _, name := range []string{Passwd, Shadow, Group, Gshadow, Subuid, Subgid} {
		if d := tx.dbs[name]; d != nil && d.changed {
			changed = append(changed, d)
			if err := b.Stage(tx.r, name+"-", d.old, d.mode, d.uid, d.gid); err != nil {
				b.Abort()
				return err
			}
		}
	}
	if len(changed) == 0 {
		b.Abort()
		return nil
	}
	b.Barrier()
	for _, d := range changed {
		data := strings.Join(d.lines, "\n")
		if len(d.lines) > 0 {
			data += "\n"
		}
		if err := b.Stage(tx.r, d.name, []byte(data), d.mode, d.uid, d.gid); err != nil {
			b.Abort()
			return err
		}
	}
	return b.Commit()
}

// has reports whether the database is there.
func (tx *Tx) has(name string) bool { return tx.dbs[name] != nil }

// ids are the numeric ids in field i (2 for passwd and group) of a
// database's lines.
func (tx *Tx) ids(name string) map[int]bool {
	out := map[int]bool{}
	if d := tx.dbs[name]; d != nil {
		for _, l := range d.lines {
			f := strings.Split(l, ":")
			if len(f) > 2 {
				if n, err := strconv.Atoi(f[2]); err == nil {
					out[n] = true
				}
			}
		}
	}
	return out
}

// GroupID is the gid of group name (a name or a number that is a group's),
// ok false when there is none.
func (tx *Tx) GroupID(name string) (int, bool) {
	d := tx.dbs[Group]
	if i := d.find(name); i >= 0 {
		f := strings.Split(d.lines[i], ":")
		if len(f) > 2 {
			if n, err := strconv.Atoi(f[2]); err == nil {
				return n, true
			}
		}
	}
	if n, err := strconv.Atoi(name); err == nil && tx.ids(Group)[n] {
		return n, true
	}
	return 0, false
}

// HasUser tells whether passwd has name.
func (tx *Tx) HasUser(name string) bool { return tx.dbs[Passwd].find(name) >= 0 }

// today is the days since the epoch shadow's dates count.
func (tx *Tx) today() int64 { return tx.now.Unix() / 86400 }

// GroupAdd is groupadd name (-r with system): a new gid from GID_MIN..
// GID_MAX (SYS_GID_MIN..SYS_GID_MAX), the group and gshadow lines.
func (tx *Tx) GroupAdd(name string, system bool) (int, error) {
	if tx.dbs[Group].find(name) >= 0 {
		return 0, fmt.Errorf("group '%s' already exists", name)
	}
	gid, err := tx.newGID(system, -1)
	if err != nil {
		return 0, err
	}
	tx.addGroup(name, gid)
	return gid, nil
}

func (tx *Tx) addGroup(name string, gid int) {
	tx.dbs[Group].add(name + ":x:" + strconv.Itoa(gid) + ":")
	if tx.has(Gshadow) {
		tx.dbs[Gshadow].add(name + ":!::")
	}
}

// AddMember is usermod -a -G group user: user appended to the group's
// member list in group and gshadow, unless there already. As usermod,
// passwd and shadow are written again (and backed up) either way.
func (tx *Tx) AddMember(group, user string) error {
	if !tx.HasUser(user) {
		return fmt.Errorf("user '%s' does not exist", user)
	}
	tx.dbs[Passwd].changed = true
	tx.dbs[Shadow].changed = true
	gd := tx.dbs[Group]
	i := gd.find(group)
	if i < 0 {
		return fmt.Errorf("group '%s' does not exist", group)
	}
	gd.lines[i], gd.changed = addToList(gd.lines[i], 3, user, gd.changed)
	if sd := tx.dbs[Gshadow]; sd != nil {
		if j := sd.find(group); j >= 0 {
			sd.lines[j], sd.changed = addToList(sd.lines[j], 3, user, sd.changed)
		}
	}
	return nil
}

// addToList adds user to the comma list in field i of line.
func addToList(line string, i int, user string, changed bool) (string, bool) {
	f := strings.Split(line, ":")
	if len(f) <= i {
		return line, changed
	}
	var m []string
	if f[i] != "" {
		m = strings.Split(f[i], ",")
	}
	if slices.Contains(m, user) {
		return line, changed
	}
	f[i] = strings.Join(append(m, user), ",")
	return strings.Join(f, ":"), true
}

// Lock is passwd -l: shadow's password field gets a leading "!" unless it
// has one; shadow is written again (and backed up) either way.
func (tx *Tx) Lock(user string) error {
	d := tx.dbs[Shadow]
	i := d.find(user)
	if i < 0 {
		return fmt.Errorf("user '%s' does not exist in %s", user, Shadow)
	}
	f := strings.Split(d.lines[i], ":")
	if len(f) < 2 {
		return fmt.Errorf("%s: %s's line is malformed", Shadow, user)
	}
	if !strings.HasPrefix(f[1], "!") {
		f[1] = "!" + f[1]
		d.lines[i] = strings.Join(f, ":")
	}
	d.changed = true
	return nil
}
