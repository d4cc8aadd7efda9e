package core

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// PasswdEntry is one line of /etc/passwd.
type PasswdEntry struct {
	Name     string
	UID, GID int
	Gecos    string
	Home     string
	Shell    string
}

// GroupEntry is one line of /etc/group.
type GroupEntry struct {
	Name    string
	GID     int
	Members []string
}

// ParsePasswd parses passwd(5) content. Blank lines, comments and NIS
// "+"/"-" lines are skipped; a malformed line is an error naming it.
func ParsePasswd(data []byte) ([]PasswdEntry, error) {
	var out []PasswdEntry
	for i, line := range strings.Split(string(data), "\n") {
		if skipDBLine(line) {
			continue
		}
		f := strings.Split(line, ":")
		if len(f) != 7 {
			return nil, fmt.Errorf("/etc/passwd line %d: %d fields, want 7", i+1, len(f))
		}
		uid, err1 := strconv.Atoi(f[2])
		gid, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil || uid < 0 || gid < 0 {
			return nil, fmt.Errorf("/etc/passwd line %d: bad uid %q or gid %q", i+1, f[2], f[3])
		}
		out = append(out, PasswdEntry{Name: f[0], UID: uid, GID: gid, Gecos: f[4], Home: f[5], Shell: f[6]})
	}
	return out, nil
}

// ParseGroup parses group(5) content, as parsePasswd.
func ParseGroup(data []byte) ([]GroupEntry, error) {
	var out []GroupEntry
	for i, line := range strings.Split(string(data), "\n") {
		if skipDBLine(line) {
			continue
		}
		f := strings.Split(line, ":")
		if len(f) != 4 {
			return nil, fmt.Errorf("/etc/group line %d: %d fields, want 4", i+1, len(f))
		}
		gid, err := strconv.Atoi(f[2])
		if err != nil || gid < 0 {
			return nil, fmt.Errorf("/etc/group line %d: bad gid %q", i+1, f[2])
		}
		g := GroupEntry{Name: f[0], GID: gid}
		for _, m := range strings.Split(f[3], ",") {
			if m != "" {
				g.Members = append(g.Members, m)
			}
		}
		out = append(out, g)
	}
	return out, nil
}

func skipDBLine(line string) bool {
	t := strings.TrimSpace(line)
	return t == "" || t[0] == '#' || t[0] == '+' || t[0] == '-'
}

// UserDB is the root's users and groups, read when needed (useradd
// changes them between reads).
type UserDB struct {
	users  []PasswdEntry
	groups []GroupEntry
}

func ReadAccounts(r *rootfs.Root) (*UserDB, error) {
	a := &UserDB{}
	if b, err := r.ReadFile("/etc/passwd"); err == nil {
		if a.users, err = ParsePasswd(b); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if b, err := r.ReadFile("/etc/group"); err == nil {
		if a.groups, err = ParseGroup(b); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return a, nil
}

func (a *UserDB) User(name string) (PasswdEntry, bool) {
	for _, u := range a.users {
		if u.Name == name {
			return u, true
		}
	}
	return PasswdEntry{}, false
}

func (a *UserDB) Group(name string) (GroupEntry, bool) {
	for _, g := range a.groups {
		if g.Name == name {
			return g, true
		}
	}
	return GroupEntry{}, false
}

// ResolveOwner resolves a write_files owner, "user", "user:group" or
// ":group", to ids through the root's /etc/passwd and /etc/group, as
// cloud-init's extract_usergroup and chownbyname: an empty, "-1" or "none"
// part keeps root (0). Numeric ids are taken as they are. An unknown name
// is an error.
func ResolveOwner(r *rootfs.Root, owner string) (uid, gid int, err error) {
	u, g, _ := strings.Cut(owner, ":")
	u, g = strings.TrimSpace(u), strings.TrimSpace(g)
	none := func(s string) bool { return s == "" || s == "-1" || strings.EqualFold(s, "none") }
	if none(u) && none(g) {
		return 0, 0, nil
	}
	a, err := ReadAccounts(r)
	if err != nil {
		return 0, 0, err
	}
	if !none(u) {
		if n, err := strconv.Atoi(u); err == nil && n >= 0 {
			uid = n
		} else if e, ok := a.User(u); ok {
			uid = e.UID
		} else {
			return 0, 0, fmt.Errorf("owner %q: no user %q in /etc/passwd", owner, u)
		}
	}
	if !none(g) {
		if n, err := strconv.Atoi(g); err == nil && n >= 0 {
			gid = n
		} else if e, ok := a.Group(g); ok {
			gid = e.GID
		} else {
			return 0, 0, fmt.Errorf("owner %q: no group %q in /etc/group", owner, g)
		}
	}
	return uid, gid, nil
}
