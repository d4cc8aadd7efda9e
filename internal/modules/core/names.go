package core

import (
	"errors"
	"fmt"
)

// maxNameLen is useradd(8)'s limit: "Usernames may only be up to 32
// characters long" (the utmp ut_user field).
const maxNameLen = 32

// errBadName says what a user or group name may be, without repeating the
// name (a chpasswd.list line typed the wrong way round puts the password
// where the name goes).
var errBadName = errors.New("not a valid name: want 1 to 32 letters, digits, '_', '.' or '-', not starting with '-', not all digits, an optional final '$'")

// CheckName is shadow-utils' is_valid_user_name and is_valid_group_name
// (chkname.c, shadow 4.13 as in Debian 12; BADNAME off):
// [A-Za-z0-9_.][A-Za-z0-9_.-]*[$]?, not "." or "..", not fully numeric,
// at most maxNameLen bytes. Nothing that could be an option ("-r"), a
// field separator (":" ","), a path ("/") or a line break passes, so a name
// is safe as an argument of useradd, usermod, groupadd, passwd and as a
// word of chpasswd's input and of sudoers.
func CheckName(name string) error {
	if name == "" || len(name) > maxNameLen || name == "." || name == ".." || name[0] == '-' {
		return errBadName
	}
	numeric := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '.', c == '-':
			numeric = false
		case c == '$' && i == len(name)-1 && i > 0:
			numeric = false
		default:
			return errBadName
		}
	}
	if numeric {
		return errBadName
	}
	return nil
}

// CheckNamed is checkName with the name quoted in the error, for keys whose
// values are not secret (users, groups).
func CheckNamed(what, name string) error {
	if err := CheckName(name); err != nil {
		return fmt.Errorf("%s %q: %w", what, name, err)
	}
	return nil
}
