package imagecfg

import (
	"io/fs"
	"slices"
	"strings"
)

// OSRelease is what the root's os-release says, the fields the defaults
// need.
type OSRelease struct {
	// ID is the distribution's id, lower case ("rocky", "debian").
	ID string
	// IDLike are the ids of the distributions it derives from, closest
	// first ("rhel", "centos", "fedora").
	IDLike []string
	// VersionID is its version ("9.3").
	VersionID string
}

// osReleaseFiles are where os-release is, in the order systemd reads
// them. On most systems /etc/os-release is a link to the second, which a
// file system that follows no link (datasource.DriveFS) refuses: the second
// is then read directly.
var osReleaseFiles = []string{"/etc/os-release", "/usr/lib/os-release"}

// maxOSRelease bounds os-release (a few hundred bytes in practice).
const maxOSRelease = 64 << 10

// readOSRelease reads the first os-release that can be read. None is no
// problem (a busybox root has none): the zero OSRelease.
func readOSRelease(fsys fs.FS) (OSRelease, []string) {
	for _, name := range osReleaseFiles {
		fi, err := fs.Stat(fsys, rel(name))
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxOSRelease {
			continue
		}
		data, err := fs.ReadFile(fsys, rel(name))
		if err != nil || len(data) > maxOSRelease {
			continue
		}
		return ParseOSRelease(string(data)), nil
	}
	return OSRelease{}, nil
}

// ParseOSRelease reads os-release's KEY=value lines (os-release(5)):
// values may be quoted with " or ' and use backslash escapes inside
// double quotes; comments and other lines are ignored. ID and ID_LIKE are
// lower-cased, as cloud-init's variant is.
func ParseOSRelease(text string) OSRelease {
	var o OSRelease
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = unquote(strings.TrimSpace(v))
		switch strings.TrimSpace(k) {
		case "ID":
			o.ID = strings.ToLower(v)
		case "ID_LIKE":
			o.IDLike = strings.Fields(strings.ToLower(v))
		case "VERSION_ID":
			o.VersionID = v
		}
	}
	return o
}

// unquote removes os-release's shell-like quoting from v.
func unquote(v string) string {
	if len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'' {
		return v[1 : len(v)-1]
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
		var b strings.Builder
		for i := 0; i < len(v); i++ {
			if v[i] == '\\' && i+1 < len(v) {
				i++
			}
			b.WriteByte(v[i])
		}
		return b.String()
	}
	return v
}

// knownVariants are the os-release ids cloud-init 22.4's util._get_variant
// takes as they are.
var knownVariants = []string{
	"almalinux", "alpine", "arch", "centos",
	"cloudlinux", "debian", "eurolinux", "fedora",
	"mariner", "miraclelinux", "openeuler",
	"openmandriva", "photon", "rhel", "rocky",
	"suse", "virtuozzo",
}

// variantOf is cloud-init's _get_variant for one id, "" for one it does
// not know.
func variantOf(id string) string {
	switch {
	case slices.Contains(knownVariants, id):
		return id
	case id == "ubuntu" || id == "linuxmint" || id == "mint":
		return "ubuntu"
	case id == "redhat" || id == "ol":
		// ol: Oracle Linux ships Red Hat's cloud-init and cloud.cfg.
		return "rhel"
	case id == "opensuse" || id == "opensuse-tumbleweed" || id == "opensuse-leap" || id == "sles" || id == "sle_hpc":
		return "suse"
	}
	return ""
}

// Variant is the cloud.cfg template variant for the root: cloud-init's
// util._get_variant of ID ("rocky", "ubuntu", "rhel" for redhat, "suse"
// for opensuse-leap...), then, for an ID cloud-init does not know, the
// first ID_LIKE it does (earlyinit's addition: a rebuild such as
// "navix" with ID_LIKE="rhel centos fedora" gets "rhel"), and "ol"
// (Oracle Linux) as "rhel". It is "" when nothing is known: no
// os-release, or an unknown distribution.
func (o OSRelease) Variant() string {
	if v := variantOf(o.ID); v != "" {
		return v
	}
	for _, id := range o.IDLike {
		if v := variantOf(id); v != "" {
			return v
		}
	}
	return ""
}

// rhelVariants are the template's is_rhel.
var rhelVariants = []string{
	"almalinux", "centos", "cloudlinux", "eurolinux",
	"miraclelinux", "rhel", "rocky", "virtuozzo",
}

// DebianDefaultUser is Debian's cloud.cfg default_user, the default for a
// root whose distribution is not known (no os-release), as before
// earlyinit read the image's configuration.
func DebianDefaultUser() User {
	return VariantDefaultUser("debian")
}

// VariantDefaultUser is the default_user cloud-init's config/cloud.cfg.tmpl
// renders for a variant (Variant): the name (cloud-user for rhel and
// centos, ec2-user for amazon, omv for openmandriva, the variant itself
// otherwise: debian, ubuntu, fedora, rocky, almalinux, openeuler...), its
// gecos, its groups (sudo and adm... on Debian and Ubuntu, wheel on
// Fedora-like systems, adm and systemd-journal on the RHEL family), sudo
// without password, a locked password and /bin/bash (/bin/ash on
// Alpine). An unknown variant ("") is Debian's.
func VariantDefaultUser(variant string) User {
	if variant == "" {
		variant = "debian"
	}
	u := User{
		Name:       variant,
		Gecos:      variant + " Cloud User",
		Shell:      "/bin/bash",
		Sudo:       []string{"ALL=(ALL) NOPASSWD:ALL"},
		LockPasswd: true,
	}
	switch variant {
	case "amazon":
		u.Name = "ec2-user"
	case "centos", "rhel":
		u.Name = "cloud-user"
	case "openmandriva":
		u.Name = "omv"
	}
	gecos := map[string]string{
		"amazon": "EC2 Default User", "centos": "Cloud User", "debian": "Debian",
		"mariner": "MarinerOS", "rhel": "Cloud User", "openmandriva": "OpenMandriva admin",
		"photon": "PhotonOS", "ubuntu": "Ubuntu",
	}
	if g, ok := gecos[variant]; ok {
		u.Gecos = g
	}
	groups := map[string][]string{
		"alpine":       {"adm", "wheel"},
		"arch":         {"wheel", "users"},
		"debian":       {"adm", "audio", "cdrom", "dialout", "dip", "floppy", "netdev", "plugdev", "sudo", "video"},
		"gentoo":       {"users", "wheel"},
		"mariner":      {"wheel"},
		"photon":       {"wheel"},
		"openmandriva": {"wheel", "users", "systemd-journal"},
		"suse":         {"cdrom", "users"},
		"ubuntu":       {"adm", "audio", "cdrom", "dialout", "dip", "floppy", "lxd", "netdev", "plugdev", "sudo", "video"},
	}
	switch g, ok := groups[variant]; {
	case ok:
		u.Groups = g
	case slices.Contains(rhelVariants, variant):
		u.Groups = []string{"adm", "systemd-journal"}
	default:
		u.Groups = []string{"wheel", "adm", "systemd-journal"}
	}
	switch variant {
	case "alpine":
		u.Shell = "/bin/ash"
	case "gentoo":
		u.PrimaryGroup = "users"
	}
	return u
}
