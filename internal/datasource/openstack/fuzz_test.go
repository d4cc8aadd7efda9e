package openstack

import (
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/datasource/configdrive"
)

// FuzzPickVersion: whatever the list, the choice is a known version that
// the list names, or "latest".
func FuzzPickVersion(f *testing.F) {
	for _, s := range []string{"2012-08-10\n2018-08-27\nlatest", "", "latest\r\n2016-10-06\r\n", "\x00\n2099-01-01"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		v := PickVersion(list)
		if v == "latest" {
			return
		}
		if !slices.Contains(configdrive.Versions(), v) || !strings.Contains(list, v) {
			t.Fatalf("PickVersion(%q) = %q", list, v)
		}
	})
}

// FuzzContentName: a content path either is refused or names a valid file
// under openstack/, never outside it.
func FuzzContentName(f *testing.F) {
	for _, s := range []string{"/content/0000", "content//0001", "/../etc/shadow", "/", "./a/./b", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		name, ok := contentName(p)
		if !ok {
			return
		}
		if !fs.ValidPath(name) || !strings.HasPrefix(name, "openstack/") || slices.Contains(strings.Split(name, "/"), "..") {
			t.Fatalf("contentName(%q) = %q", p, name)
		}
	})
}
