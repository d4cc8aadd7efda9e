package core

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/paths"
)

// Hostnames is cloud-init's util.get_hostname_fqdn: fqdn wins, then a
// dotted hostname, then the datasource's local-hostname, overridden by a
// plain hostname. name is the short name, or the fqdn with
// prefer_fqdn_over_hostname. ok is false when nothing names the host.
func (e *Env) Hostnames() (name, fqdn string, ok bool, err error) {
	short, fqdn, ok, err := e.HostnamePair()
	if !ok || err != nil {
		return "", "", ok, err
	}
	prefer, _, err := ccfg.Decode[bool](e.Cfg, "prefer_fqdn_over_hostname")
	if prefer {
		return fqdn, fqdn, true, err
	}
	return short, fqdn, true, err
}

// HostnamePair is the short name and fqdn, see hostnames.
func (e *Env) HostnamePair() (short, fqdn string, ok bool, err error) {
	f, _, err := ccfg.Decode[string](e.Cfg, "fqdn")
	if err != nil {
		return "", "", false, err
	}
	h, hasHostname, err := ccfg.Decode[string](e.Cfg, "hostname")
	if err != nil {
		return "", "", false, err
	}
	if f != "" {
		fqdn, short = f, h
		if !hasHostname {
			short = strings.SplitN(f, ".", 2)[0]
		}
	} else if strings.Index(h, ".") > 0 {
		fqdn, short = h, h[:strings.Index(h, ".")]
	} else {
		if e.Data != nil && e.Data.LocalHostname != "" {
			var err error
			if short, fqdn, err = e.DatasourceHostnames(); err != nil {
				return "", "", false, err
			}
		}
		if h != "" {
			short = h
			if fqdn == "" {
				fqdn = h
			}
		}
	}
	if short == "" {
		return "", "", false, nil
	}
	if _, _, err := instance.Hostnames(fqdn); err != nil {
		return "", "", false, fmt.Errorf("fqdn: %w", err)
	}
	if _, _, err := instance.Hostnames(short); err != nil || strings.Contains(short, ".") && short != fqdn {
		return "", "", false, fmt.Errorf("hostname %q: not a valid host name", short)
	}
	return short, strings.TrimSuffix(fqdn, "."), true, nil
}

// DatasourceHostnames is cloud-init's DataSource.get_hostname, short and
// fqdn: the datasource's local-hostname (instance.Hostnames), the domain
// "localdomain", its default, being no domain; without one, the running
// system's name. (cloud-init also looks the name up in /etc/hosts for a
// domain; earlyinit does not.)
func (e *Env) DatasourceHostnames() (short, fqdn string, err error) {
	if e.Data == nil || e.Data.LocalHostname == "" {
		cur, err := OsHostname()
		if err != nil || cur == "" {
			return "", "", fmt.Errorf("no local-hostname, and the system's name is not known: %v", err)
		}
		short, _, _ = strings.Cut(cur, ".")
		return short, strings.TrimSuffix(cur, ".localdomain"), nil
	}
	fqdn, short, err = instance.Hostnames(e.Data.LocalHostname)
	if err != nil {
		return "", "", err
	}
	if fqdn == short+".localdomain" {
		fqdn = short
	}
	return short, fqdn, nil
}

func ReadTrim(e *Env, name string) string {
	b, err := e.Root.ReadFile(name)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// KeepWrite writes name keeping an existing file's mode and owner (0644
// root for a new one).
func (e *Env) KeepWrite(name string, data []byte) error {
	mode, uid, gid := fs.FileMode(0o644), 0, 0
	fi, err := e.Root.Stat(name)
	switch {
	case err == nil && fi.Mode().IsRegular():
		mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			uid, gid = int(st.Uid), int(st.Gid)
		}
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return e.Root.WriteFile(name, data, mode, uid, gid)
}

// OsHostname is the running kernel's host name (a variable for tests).
var OsHostname = os.Hostname

// PreviousHostnameFile remembers the host name earlyinit last wrote, so a
// name the admin changed since is left alone (cloud-init's
// data/previous-hostname).
const PreviousHostnameFile = paths.DataDir + "/previous-hostname"
