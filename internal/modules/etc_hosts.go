package modules

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/earlyinit/earlyinit/internal/instance"
)

// hostsTemplate is cloud-init's hosts.debian.tmpl, rendered.
const hostsTemplate = `# Your system has configured 'manage_etc_hosts' as True.
# As a result, if you wish for changes to this file to persist
# then you will need to change or remove the value of
# 'manage_etc_hosts' in cloud-config from user-data.
#
127.0.1.1 %s %s
127.0.0.1 localhost

# The following lines are desirable for IPv6 capable hosts
::1 localhost ip6-localhost ip6-loopback
ff02::1 ip6-allnodes
ff02::2 ip6-allrouters
`

// updateEtcHosts is cc_update_etc_hosts, at every boot:
// manage_etc_hosts true (or the deprecated "template") rewrites /etc/hosts
// from Debian's template; "localhost" only makes sure a "127.0.1.1 fqdn
// hostname" line is there (internal/instance.UpdateHosts); false leaves it.
func updateEtcHosts(_ context.Context, e *Env) error {
	v := e.Cfg["manage_etc_hosts"]
	mode := ""
	switch t := v.(type) {
	case bool:
		if t {
			mode = "template"
		}
	case string:
		switch {
		case t == "localhost":
			mode = "localhost"
		case t == "template" || isTrue(t):
			mode = "template"
		case isFalse(t):
		default:
			return fmt.Errorf("manage_etc_hosts: %q: want true, false or \"localhost\"", t)
		}
	case nil:
	default:
		return fmt.Errorf("manage_etc_hosts: want a boolean or \"localhost\", got %s", kind(v))
	}
	if mode == "" {
		return nil
	}
	short, fqdn, ok, err := e.hostnamePair()
	if err != nil {
		return err
	}
	if !ok {
		e.logf("manage_etc_hosts: no host name known: /etc/hosts left alone")
		return nil
	}
	if mode == "template" {
		return e.keepWrite("/etc/hosts", []byte(fmt.Sprintf(hostsTemplate, fqdn, short)))
	}
	old, err := e.Root.ReadFile("/etc/hosts")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return e.keepWrite("/etc/hosts", instance.UpdateHosts(old, fqdn, short))
}
