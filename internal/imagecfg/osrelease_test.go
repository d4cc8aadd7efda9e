package imagecfg

import (
	"reflect"
	"testing"
	"testing/fstest"
)

// TestOSDefaultUser: the os-release of real images gives the default user
// cloud-init's cloud.cfg template renders for that distribution.
func TestOSDefaultUser(t *testing.T) {
	wheel := []string{"wheel", "adm", "systemd-journal"}
	rhel := []string{"adm", "systemd-journal"}
	for _, tt := range []struct {
		name, osRelease string
		variant         string
		user, gecos     string
		groups          []string
	}{
		{"rocky 9", "NAME=\"Rocky Linux\"\nID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\nVERSION_ID=\"9.3\"\n", "rocky", "rocky", "rocky Cloud User", rhel},
		{"almalinux 9", "ID=\"almalinux\"\nID_LIKE=\"rhel centos fedora\"\n", "almalinux", "almalinux", "almalinux Cloud User", rhel},
		{"rhel 9", "ID=\"rhel\"\nID_LIKE=\"fedora\"\n", "rhel", "cloud-user", "Cloud User", rhel},
		{"centos stream", "ID=\"centos\"\nID_LIKE=\"rhel fedora\"\n", "centos", "cloud-user", "Cloud User", rhel},
		{"oracle linux", "ID=\"ol\"\nID_LIKE=\"fedora\"\n", "rhel", "cloud-user", "Cloud User", rhel},
		{"fedora", "ID=fedora\n", "fedora", "fedora", "fedora Cloud User", wheel},
		{"openEuler", "NAME=\"openEuler\"\nID=\"openEuler\"\n", "openeuler", "openeuler", "openeuler Cloud User", wheel},
		{"debian", "ID=debian\n", "debian", "debian", "Debian", DebianDefaultUser().Groups},
		{"ubuntu", "ID=ubuntu\nID_LIKE=debian\n", "ubuntu", "ubuntu", "Ubuntu", []string{"adm", "audio", "cdrom", "dialout", "dip", "floppy", "lxd", "netdev", "plugdev", "sudo", "video"}},
		{"a debian derivative", "ID=raspbian\nID_LIKE=debian\n", "debian", "debian", "Debian", DebianDefaultUser().Groups},
		{"a rhel rebuild", "ID=navix\nID_LIKE='rhel centos fedora'\n", "rhel", "cloud-user", "Cloud User", rhel},
		{"unknown", "ID=busybox\n", "", "debian", "Debian", DebianDefaultUser().Groups},
		{"none", "", "", "debian", "Debian", DebianDefaultUser().Groups},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			if tt.osRelease != "" {
				fsys["usr/lib/os-release"] = &fstest.MapFile{Data: []byte(tt.osRelease)}
			}
			c, err := Load(fsys)
			if err != nil {
				t.Fatal(err)
			}
			if v := c.OS.Variant(); v != tt.variant {
				t.Errorf("variant %q, want %q", v, tt.variant)
			}
			u := c.DefaultUser()
			if u.Name != tt.user || u.Gecos != tt.gecos || !reflect.DeepEqual(u.Groups, tt.groups) {
				t.Errorf("default user %q %q %q, want %q %q %q", u.Name, u.Gecos, u.Groups, tt.user, tt.gecos, tt.groups)
			}
			if !u.LockPasswd || u.Shell != "/bin/bash" || !reflect.DeepEqual(u.Sudo, []string{"ALL=(ALL) NOPASSWD:ALL"}) {
				t.Errorf("default user %+v: want a locked password, bash and sudo without password", u)
			}
		})
	}
}

// TestParseOSRelease: quoting, escapes, comments; /etc/os-release before
// /usr/lib/os-release.
func TestParseOSRelease(t *testing.T) {
	got := ParseOSRelease("# c\nID=\"Open\\\"X\"\nID_LIKE='A b'\nVERSION_ID=1.2\nBAD LINE\n")
	want := OSRelease{ID: "open\"x", IDLike: []string{"a", "b"}, VersionID: "1.2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	c, _ := Load(fstest.MapFS{
		"etc/os-release":     {Data: []byte("ID=fedora\n")},
		"usr/lib/os-release": {Data: []byte("ID=debian\n")},
	})
	if c.OS.ID != "fedora" {
		t.Errorf("ID %q, want /etc/os-release's fedora", c.OS.ID)
	}
}
