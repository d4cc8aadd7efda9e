package modules

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// passwdEntry is one line of /etc/passwd.
type passwdEntry struct {
	Name     string
	UID, GID int
	Gecos    string
	Home     string
	Shell    string
}

// groupEntry is one line of /etc/group.
type groupEntry struct {
	Name    string
	GID     int
	Members []string
}

// parsePasswd parses passwd(5) content. Blank lines, comments and NIS
// "+"/"-" lines are skipped; a malformed line is an error naming it.
func parsePasswd(data []byte) ([]passwdEntry, error) {
	var out []passwdEntry
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
		out = append(out, passwdEntry{Name: f[0], UID: uid, GID: gid, Gecos: f[4], Home: f[5], Shell: f[6]})
	}
	return out, nil
}

// parseGroup parses group(5) content, as parsePasswd.
func parseGroup(data []byte) ([]groupEntry, error) {
	var out []groupEntry
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
		g := groupEntry{Name: f[0], GID: gid}
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

// userDB is the root's users and groups, read when needed (useradd
// changes them between reads).
type userDB struct {
	users  []passwdEntry
	groups []groupEntry
}

func readAccounts(r *rootfs.Root) (*userDB, error) {
	a := &userDB{}
	if b, err := r.ReadFile("/etc/passwd"); err == nil {
		if a.users, err = parsePasswd(b); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if b, err := r.ReadFile("/etc/group"); err == nil {
		if a.groups, err = parseGroup(b); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return a, nil
}

func (a *userDB) user(name string) (passwdEntry, bool) {
	for _, u := range a.users {
		if u.Name == name {
			return u, true
		}
	}
	return passwdEntry{}, false
}

func (a *userDB) group(name string) (groupEntry, bool) {
	for _, g := range a.groups {
		if g.Name == name {
			return g, true
		}
	}
	return groupEntry{}, false
}

// resolveOwner resolves a write_files owner, "user", "user:group" or
// ":group", to ids through the root's /etc/passwd and /etc/group, as
// cloud-init's extract_usergroup and chownbyname: an empty, "-1" or "none"
// part keeps root (0). Numeric ids are taken as they are. An unknown name
// is an error.
func resolveOwner(r *rootfs.Root, owner string) (uid, gid int, err error) {
	u, g, _ := strings.Cut(owner, ":")
	u, g = strings.TrimSpace(u), strings.TrimSpace(g)
	none := func(s string) bool { return s == "" || s == "-1" || strings.EqualFold(s, "none") }
	if none(u) && none(g) {
		return 0, 0, nil
	}
	a, err := readAccounts(r)
	if err != nil {
		return 0, 0, err
	}
	if !none(u) {
		if n, err := strconv.Atoi(u); err == nil && n >= 0 {
			uid = n
		} else if e, ok := a.user(u); ok {
			uid = e.UID
		} else {
			return 0, 0, fmt.Errorf("owner %q: no user %q in /etc/passwd", owner, u)
		}
	}
	if !none(g) {
		if n, err := strconv.Atoi(g); err == nil && n >= 0 {
			gid = n
		} else if e, ok := a.group(g); ok {
			gid = e.GID
		} else {
			return 0, 0, fmt.Errorf("owner %q: no group %q in /etc/group", owner, g)
		}
	}
	return uid, gid, nil
}
