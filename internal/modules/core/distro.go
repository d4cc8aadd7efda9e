package core

import (
	"context"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"golang.org/x/sys/unix"
)

// ConfPath checks a configuration file path from cloud-config: absolute,
// clean, no blanks or control characters.
func ConfPath(key string, v any) (string, error) {
	s, _ := v.(string)
	if !strings.HasPrefix(s, "/") || strings.Contains(s, "/../") || strings.HasSuffix(s, "/..") || strings.HasSuffix(s, "/") || HasCtlOrBlank(s) {
		return "", fmt.Errorf("%s %q: want an absolute file path without blanks", key, s)
	}
	return s, nil
}

func HasCtlOrBlank(s string) bool {
	for _, r := range s {
		if r <= ' ' || r == 0x7f {
			return true
		}
	}
	return false
}

// ValidServiceName is a systemd or OpenRC service name: letters, digits
// and ":-_.@\", not starting with "-".
func ValidServiceName(s string) bool {
	return s != "" && s[0] != '-' && len(s) <= 255 && AlnumOr(s, ":-_.@")
}

// Distribution families, as the modules tell them apart.
const (
	FamilyDebian = "debian"
	FamilyRHEL   = "rhel"
	FamilySUSE   = "suse"
	FamilyAlpine = "alpine"
)

// DistroInfo is what a module needs of the root's distribution.
type DistroInfo struct {
	// Name is cloud-init's distribution name: system_info.distro, else
	// the variant of the root's os-release ("debian", "rocky", "suse"...);
	// "" when not known.
	Name string
	// Family is familyDebian, familyRHEL (Fedora, CentOS, Rocky, Alma,
	// Amazon, openEuler...), familySUSE or familyAlpine; familyDebian
	// when not known.
	Family string
}

// DistroInfo reads the root's os-release (through Root) and the merged
// configuration's system_info.distro.
func (e *Env) DistroInfo() DistroInfo {
	var osr imagecfg.OSRelease
	for _, p := range []string{"/etc/os-release", "/usr/lib/os-release"} {
		if fi, err := e.Root.Stat(p); err != nil || !fi.Mode().IsRegular() || fi.Size() > 64<<10 {
			continue
		}
		if b, err := e.Root.ReadFile(p); err == nil {
			osr = imagecfg.ParseOSRelease(string(b))
			break
		}
	}
	name := (&imagecfg.Config{Raw: e.Cfg, OS: osr}).Distro()
	d := DistroInfo{Name: name, Family: familyOf(name)}
	if d.Family == "" {
		d.Family = familyOf(osr.ID)
		for _, id := range osr.IDLike {
			if d.Family == "" {
				d.Family = familyOf(id)
			}
		}
	}
	if d.Family == "" {
		d.Family = FamilyDebian
	}
	return d
}

// familyOf is the family of a distribution name or os-release id, ""
// for one not known.
func familyOf(name string) string {
	switch name {
	case "debian", "ubuntu", "linuxmint", "mint", "raspbian", "devuan":
		return FamilyDebian
	case "rhel", "redhat", "centos", "fedora", "rocky", "almalinux", "cloudlinux", "eurolinux",
		"miraclelinux", "virtuozzo", "amazon", "ol", "openeuler", "openEuler", "mariner", "photon", "openmandriva", "navix":
		return FamilyRHEL
	case "suse", "sles", "sle_hpc", "opensuse", "opensuse-leap", "opensuse-tumbleweed", "sle-micro":
		return FamilySUSE
	case "alpine":
		return FamilyAlpine
	}
	return ""
}

// RunningInit is the init system that runs the root now: "systemd" when
// /run/systemd/system is a directory (cloud-init's uses_systemd),
// "openrc" when OpenRC has booted (/run/openrc/softlevel), "" otherwise
// (the boot stage of a root entered with late --exec, before its init).
func (e *Env) RunningInit() string {
	if fi, err := e.Root.Stat("/run/systemd/system"); err == nil && fi.IsDir() {
		return "systemd"
	}
	if e.Root.Exists("/run/openrc/softlevel") {
		return "openrc"
	}
	return ""
}

// ServiceAction is cloud-init's manage_service for action (reload,
// try-reload, restart) on service, through the running init: systemctl
// --no-block (earlyinit's boot stage runs before the services start: the
// job is queued, not waited for), rc-service under OpenRC. With no init
// running yet it does nothing: the service starts with its new
// configuration when init starts it.
func (e *Env) ServiceAction(ctx context.Context, action, service string) error {
	if !ValidServiceName(service) {
		return fmt.Errorf("service %q: not a service name", service)
	}
	var c Cmd
	switch e.RunningInit() {
	case "systemd":
		verb := map[string]string{"reload": "reload-or-restart", "try-reload": "reload-or-try-restart", "restart": "restart"}[action]
		if verb == "" {
			return fmt.Errorf("service %s: unknown action %q", service, action)
		}
		c = Cmd{Name: "systemctl", Args: []string{"--no-block", verb, service}}
	case "openrc":
		c = Cmd{Name: "rc-service", Args: []string{"--nocolor", service, "restart"}}
		if action == "try-reload" {
			c.Args = []string{"--nocolor", "--ifstarted", service, "restart"}
		}
	default:
		e.Logf("%s: no init running yet: it starts with its new configuration", service)
		return nil
	}
	_, err := e.Run(ctx, c)
	return err
}

// UnameRelease is the running kernel's release ("6.1.0-56-amd64").
func UnameRelease() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// KernelOlder tells whether release is older than major.minor; an
// unreadable release is not.
func KernelOlder(release string, major, minor int) bool {
	var maj, mnr int
	if n, _ := fmt.Sscanf(release, "%d.%d", &maj, &mnr); n != 2 {
		return false
	}
	return maj < major || maj == major && mnr < minor
}

// HostKeyFile is the host key of type t, as cloud-init's KEY_FILE_TPL.
func HostKeyFile(t string) string { return "/etc/ssh/ssh_host_" + t + "_key" }
