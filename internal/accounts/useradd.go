package accounts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// ErrUnsupported is what UserAdd returns, before any change, for a user
// whose making useradd does in a way this package does not: the caller
// runs useradd.
var ErrUnsupported = errors.New("not done by earlyinit: useradd's")

// Defs are useradd's settings: /etc/login.defs and /etc/default/useradd.
type Defs struct {
	login   map[string]string
	useradd map[string]string
}

// readDefs reads r's login.defs and default/useradd (either may be
// missing: useradd's built-in defaults then).
func readDefs(r *rootfs.Root) (Defs, error) {
	d := Defs{login: map[string]string{}, useradd: map[string]string{}}
	if b, err := r.ReadFile("/etc/login.defs"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			f := strings.Fields(l)
			if len(f) >= 2 && !strings.HasPrefix(f[0], "#") {
				d.login[f[0]] = strings.Trim(f[1], `"`)
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return d, err
	}
	if b, err := r.ReadFile("/etc/default/useradd"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			l = strings.TrimSpace(l)
			if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(l, "#") {
				d.useradd[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"`)
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return d, err
	}
	return d, nil
}

// num is getdef_num: the key's value as strtol(…, 0) reads it (0 octal,
// 0x hex), def when missing or not a number.
func (d Defs) num(key string, def int64) int64 {
	if v, ok := d.login[key]; ok {
		if n, err := strconv.ParseInt(v, 0, 64); err == nil {
			return n
		}
	}
	return def
}

func (d Defs) yes(key string) bool { return strings.EqualFold(d.login[key], "yes") }

// ranges are get_ranges' id ranges: UID_MIN..UID_MAX, or for system
// accounts SYS_UID_MIN..SYS_UID_MAX (default UID_MIN-1).
func (d Defs) ranges(kind string, system bool) (lo, hi int) {
	if system {
		return int(d.num("SYS_"+kind+"_MIN", 101)), int(d.num("SYS_"+kind+"_MAX", d.num(kind+"_MIN", 1000)-1))
	}
	return int(d.num(kind+"_MIN", 1000)), int(d.num(kind+"_MAX", 60000))
}

// newID is find_new_uid/find_new_gid over used: preferred when it is in
// range (from 1 for system ids) and free; else for system ids one below
// the lowest in range, or the highest free going down; else one above the
// highest in range, or the lowest free going up.
func newID(used map[int]bool, lo, hi int, system bool, preferred int) (int, error) {
	pmin := lo
	if system {
		pmin = 1
	}
	if preferred >= pmin && preferred <= hi && !used[preferred] {
		return preferred, nil
	}
	if system {
		lowest := hi + 1
		for id := range used {
			if id >= lo && id <= hi && id < lowest {
				lowest = id
			}
		}
		if lowest > lo {
			return lowest - 1, nil
		}
		for id := hi; id >= lo; id-- {
			if !used[id] {
				return id, nil
			}
		}
	} else {
		highest := lo - 1
		for id := range used {
			if id >= lo && id <= hi && id > highest {
				highest = id
			}
		}
		if highest < hi {
			return highest + 1, nil
		}
		for id := lo; id <= hi; id++ {
			if !used[id] {
				return id, nil
			}
		}
	}
	return 0, fmt.Errorf("no free id in %d..%d", lo, hi)
}

func (tx *Tx) newGID(system bool, preferred int) (int, error) {
	lo, hi := tx.defs.ranges("GID", system)
	id, err := newID(tx.ids(Group), lo, hi, system, preferred)
	if err != nil {
		return 0, fmt.Errorf("can't create group: %w", err)
	}
	return id, nil
}

// User is what useradd is asked for: cloud-init's add_user options that
// are done here.
type User struct {
	Name  string
	Gecos string
	// Home "" is HOME (default /home) and the name.
	Home string
	// Shell "" is SHELL of /etc/default/useradd.
	Shell string
	// UID < 0 is a new one.
	UID int
	// Groups are -G: supplementary groups, which must exist.
	Groups []string
	// PrimaryGroup is -g: a group's name or number; "" makes the user's
	// own group (USERGROUPS_ENAB).
	PrimaryGroup string
	System       bool
	// CreateHome is -m (else -M).
	CreateHome bool
}

// Made is what UserAdd decided, for the home it makes after Commit.
type Made struct {
	UID, GID int
	Home     string
	// Skel and HomeMode are where the home's files come from and its mode.
	Skel     string
	HomeMode fs.FileMode
}

// UserAdd is useradd: the passwd and shadow lines, the user's own group
// (unless PrimaryGroup), its membership of Groups, and subordinate ids
// for a non-system user when the root has /etc/subuid, /etc/subgid. The
// home is made after Commit (MakeHome). ErrUnsupported, before any change,
// for what only useradd does here (a mail spool).
func (tx *Tx) UserAdd(u User) (Made, error) {
	var m Made
	if err := tx.userAddCheck(u); err != nil {
		return m, err
	}
	ownGroup := u.PrimaryGroup == ""
	gid, err := tx.primaryGroup(u, ownGroup)
	if err != nil {
		return m, err
	}
	m.GID = gid
	if m.UID, err = tx.userUID(u); err != nil {
		return m, err
	}
	if ownGroup {
		gid, err := tx.newGID(u.System, m.UID)
		if err != nil {
			return m, err
		}
		m.GID = gid
	}
	m.Home = tx.userHome(u)
	shell := u.Shell
	if shell == "" {
		shell = tx.defs.useradd["SHELL"]
	}
	for _, f := range []string{u.Gecos, m.Home, shell} {
		if strings.ContainsAny(f, ":\n") {
			return m, fmt.Errorf("user %s: a field has a ':' or a line break", u.Name)
		}
	}
	tx.dbs[Passwd].add(fmt.Sprintf("%s:x:%d:%d:%s:%s:%s", u.Name, m.UID, m.GID, u.Gecos, m.Home, shell))
	sp, err := tx.shadowFields(u)
	if err != nil {
		return m, err
	}
	tx.dbs[Shadow].add(strings.Join(sp, ":"))
	if ownGroup {
		tx.addGroup(u.Name, m.GID)
	}
	if err := tx.userGroups(u, m.UID); err != nil {
		return m, err
	}
	m.Skel = tx.skel()
	m.HomeMode = fs.FileMode(tx.defs.num("HOME_MODE", 0o777&^tx.defs.num("UMASK", 0o22))) & 0o7777
	return m, nil
}

// userAddCheck refuses, before any change, a user UserAdd cannot make:
// what only useradd does, a name taken, a -G group missing.
func (tx *Tx) userAddCheck(u User) error {
	if strings.EqualFold(tx.defs.useradd["CREATE_MAIL_SPOOL"], "yes") {
		return fmt.Errorf("CREATE_MAIL_SPOOL=yes: %w", ErrUnsupported)
	}
	if tx.HasUser(u.Name) {
		return fmt.Errorf("user '%s' already exists", u.Name)
	}
	if u.CreateHome {
		if err := plainSkel(tx.r, tx.skel(), 0); err != nil {
			return fmt.Errorf("%v: %w", err, ErrUnsupported)
		}
	}
	for _, g := range u.Groups {
		if _, ok := tx.GroupID(g); !ok {
			return fmt.Errorf("group '%s' does not exist", g)
		}
	}
	return nil
}

// primaryGroup is -g's gid, or 0 for the user's own group (ownGroup) once
// USERGROUPS_ENAB allows it and no group has the user's name.
func (tx *Tx) primaryGroup(u User, ownGroup bool) (int, error) {
	if !ownGroup {
		gid, ok := tx.GroupID(u.PrimaryGroup)
		if !ok {
			return 0, fmt.Errorf("group '%s' does not exist", u.PrimaryGroup)
		}
		return gid, nil
	}
	if !tx.defs.yes("USERGROUPS_ENAB") {
		return 0, fmt.Errorf("USERGROUPS_ENAB is not yes: %w", ErrUnsupported)
	}
	if tx.dbs[Group].find(u.Name) >= 0 {
		return 0, fmt.Errorf("group %s exists - if you want to add this user to that group, use -g", u.Name)
	}
	return 0, nil
}

// userUID is u.UID when it is free, else a new one in the user's range.
func (tx *Tx) userUID(u User) (int, error) {
	used := tx.ids(Passwd)
	if u.UID >= 0 {
		if used[u.UID] {
			return 0, fmt.Errorf("UID %d is not unique", u.UID)
		}
		return u.UID, nil
	}
	lo, hi := tx.defs.ranges("UID", u.System)
	id, err := newID(used, lo, hi, u.System, -1)
	if err != nil {
		return 0, fmt.Errorf("can't get unique UID: %w", err)
	}
	return id, nil
}

// userHome is u.Home, or HOME of /etc/default/useradd (default /home)
// and the name.
func (tx *Tx) userHome(u User) string {
	if u.Home != "" {
		return u.Home
	}
	base := tx.defs.useradd["HOME"]
	if base == "" {
		base = "/home"
	}
	return path.Join(base, u.Name)
}

// shadowFields are u's shadow line's fields: password locked, changed
// today, and for a non-system user login.defs' ages and INACTIVE.
func (tx *Tx) shadowFields(u User) ([]string, error) {
	sp := []string{u.Name, "!", strconv.FormatInt(tx.today(), 10), "", "", "", "", "", ""}
	if !u.System {
		sp[3], sp[4], sp[5] = age(tx.defs.num("PASS_MIN_DAYS", -1)), age(tx.defs.num("PASS_MAX_DAYS", -1)), age(tx.defs.num("PASS_WARN_AGE", -1))
		if v, err := strconv.Atoi(tx.defs.useradd["INACTIVE"]); err == nil && v >= 0 {
			sp[6] = strconv.Itoa(v)
		}
		if e := tx.defs.useradd["EXPIRE"]; e != "" {
			return nil, fmt.Errorf("EXPIRE=%s: %w", e, ErrUnsupported)
		}
	}
	return sp, nil
}

// userGroups adds u to its -G groups, then gives a non-system user in
// UID_MIN..UID_MAX subordinate ids where the root keeps them.
func (tx *Tx) userGroups(u User, uid int) error {
	for _, g := range u.Groups {
		gname := g
		if tx.dbs[Group].find(g) < 0 {
			gname = tx.groupName(g)
		}
		if err := tx.AddMember(gname, u.Name); err != nil {
			return err
		}
	}
	lo, hi := tx.defs.ranges("UID", false)
	if !u.System && uid >= lo && uid <= hi {
		for _, s := range []struct{ db, kind string }{{Subuid, "UID"}, {Subgid, "GID"}} {
			if !tx.has(s.db) {
				continue
			}
			if err := tx.subAdd(s.db, s.kind, u.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// skel is SKEL of /etc/default/useradd, default /etc/skel.
func (tx *Tx) skel() string {
	if s := tx.defs.useradd["SKEL"]; s != "" {
		return s
	}
	return "/etc/skel"
}

// plainSkel checks that dir holds directories and regular files only
// (copyTree copies no links, devices or sockets: useradd's, then).
func plainSkel(r *rootfs.Root, dir string, depth int) error {
	if depth > 32 {
		return fmt.Errorf("skeleton %s: nested too deep", dir)
	}
	ents, err := os.ReadDir(r.Path(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := path.Join(dir, e.Name())
		switch {
		case e.IsDir():
			if err := plainSkel(r, p, depth+1); err != nil {
				return err
			}
		case !e.Type().IsRegular():
			return fmt.Errorf("skeleton %s is a %s", p, e.Type())
		}
	}
	return nil
}

// groupName is the name of the group whose gid is the number s.
func (tx *Tx) groupName(s string) string {
	for _, l := range tx.dbs[Group].lines {
		f := strings.Split(l, ":")
		if len(f) > 2 && f[2] == s {
			return f[0]
		}
	}
	return s
}

// age is a shadow age field: -1 is empty.
func age(n int64) string {
	if n < 0 {
		return ""
	}
	return strconv.FormatInt(n, 10)
}

// subAdd gives name SUB_kind_COUNT subordinate ids from the first free
// range in SUB_kind_MIN..SUB_kind_MAX (find_free_range over the ranges
// sorted by start).
func (tx *Tx) subAdd(db, kind, name string) error {
	lo := tx.defs.num("SUB_"+kind+"_MIN", 100000)
	hi := tx.defs.num("SUB_"+kind+"_MAX", 600100000)
	count := tx.defs.num("SUB_"+kind+"_COUNT", 65536)
	if count == 0 {
		return nil
	}
	if lo > hi || count >= hi || lo+count-1 > hi {
		return fmt.Errorf("%s: SUB_%s_MIN, _MAX and _COUNT make no range", db, kind)
	}
	type rng struct{ start, end int64 }
	var rs []rng
	for _, l := range tx.dbs[db].lines {
		f := strings.Split(l, ":")
		if len(f) != 3 {
			continue
		}
		s, err1 := strconv.ParseInt(f[1], 10, 64)
		c, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 == nil && err2 == nil && c > 0 {
			rs = append(rs, rng{s, s + c - 1})
		}
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].start < rs[j].start })
	low := lo
	for _, r := range rs {
		if low+count-1 < r.start {
			break
		}
		if r.end >= low {
			low = r.end + 1
		}
	}
	if low+count-1 > hi {
		return fmt.Errorf("%s: no free range of %d for %s", db, count, name)
	}
	// shadow sorts the ranges by start to search them, and appends the
	// new one to the sorted list it then writes.
	d := tx.dbs[db]
	start := func(l string) int64 {
		f := strings.Split(l, ":")
		if len(f) == 3 {
			if n, err := strconv.ParseInt(f[1], 10, 64); err == nil {
				return n
			}
		}
		return -1
	}
	sort.SliceStable(d.lines, func(i, j int) bool { return start(d.lines[i]) < start(d.lines[j]) })
	d.add(fmt.Sprintf("%s:%d:%d", name, low, count))
	return nil
}

// MakeHome is useradd -m's create_home and copy_tree, after Commit: the
// home (missing parents 0755 root's) with mode m.HomeMode, owned by the
// user, then the skeleton's directories and files with their modes and
// times, the user's. A home that exists is left as it is (useradd warns
// and copies nothing): exists says so. A skeleton entry that is neither
// a directory nor a regular file is not copied, and named in the error.
func MakeHome(r *rootfs.Root, m Made) (exists bool, err error) {
	if _, err := r.Stat(m.Home); err == nil {
		return true, nil
	}
	if err := r.MkdirAll(path.Dir(m.Home), 0o755, 0, 0); err != nil {
		return false, err
	}
	if err := r.MkdirAll(m.Home, m.HomeMode, m.UID, m.GID); err != nil {
		return false, err
	}
	return false, copyTree(r, m.Skel, m.Home, m.UID, m.GID, 0)
}

// copyTree copies directory src's entries into dst (both in r), owned by
// uid:gid.
func copyTree(r *rootfs.Root, src, dst string, uid, gid, depth int) error {
	if depth > 32 {
		return fmt.Errorf("%s: nested too deep", src)
	}
	ents, err := os.ReadDir(r.Path(src))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range ents {
		s, d := path.Join(src, e.Name()), path.Join(dst, e.Name())
		fi, err := r.Stat(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		switch {
		case fi.IsDir():
			if err := r.MkdirAll(d, fi.Mode().Perm()|fi.Mode()&(fs.ModeSetgid|fs.ModeSticky), uid, gid); err != nil {
				errs = append(errs, err)
				continue
			}
			errs = append(errs, copyTree(r, s, d, uid, gid, depth+1))
		case fi.Mode().IsRegular():
			b, err := r.ReadFile(s)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			mt := fi.ModTime()
			at := mt
			if st, ok := fi.Sys().(*syscall.Stat_t); ok {
				at = time.Unix(st.Atim.Unix())
			}
			errs = append(errs, r.WriteFileFrom(d, func(f *os.File) error {
				if _, err := f.Write(b); err != nil {
					return err
				}
				return unix.Futimes(int(f.Fd()), []unix.Timeval{unix.NsecToTimeval(at.UnixNano()), unix.NsecToTimeval(mt.UnixNano())})
			}, fi.Mode().Perm(), uid, gid))
		default:
			errs = append(errs, fmt.Errorf("skeleton %s: %s not copied", s, fi.Mode().Type()))
		}
	}
	return errors.Join(errs...)
}
