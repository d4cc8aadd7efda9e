package system

import (
	"context"
	"embed"
	"errors"
	"io/fs"
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// hostsFiles are cloud-init 22.4's /etc/hosts templates, rendered: one
// per family (cloud-init's osfamily: hosts.debian.tmpl, hosts.redhat.tmpl,
// hosts.suse.tmpl, hosts.alpine.tmpl), {{fqdn}} and {{hostname}} standing
// for the names. The comment at the top is earlyinit's: cloud-init's
// names a template file that a root without cloud-init does not have.
// TestHostsAsCloudInit renders cloud-init's own templates beside them.
//
//go:embed templates/hosts
var hostsFiles embed.FS

// hostsFamily is the name of family's /etc/hosts template, and the
// address its localhost mode names the host with (cloud-init's
// _get_localhost_ip: 127.0.1.1 on Debian, Alpine and SUSE, else
// 127.0.0.1).
func hostsFamily(family string) (template, localIP string) {
	switch family {
	case core.FamilyRHEL:
		return "redhat", "127.0.0.1"
	case core.FamilySUSE:
		return "suse", "127.0.1.1"
	case core.FamilyAlpine:
		return "alpine", "127.0.1.1"
	}
	return "debian", "127.0.1.1"
}

// renderHosts is the root's family's /etc/hosts template for the names.
func renderHosts(family, fqdn, short string) ([]byte, error) {
	name, _ := hostsFamily(family)
	b, err := hostsFiles.ReadFile("templates/hosts/" + name)
	if err != nil {
		return nil, err
	}
	return []byte(strings.NewReplacer("{{fqdn}}", fqdn, "{{hostname}}", short).Replace(string(b))), nil
}

// UpdateEtcHosts is cc_update_etc_hosts, at every boot:
// manage_etc_hosts true (or the deprecated "template") rewrites /etc/hosts
// from the root's family's template (hostsFiles); "localhost" makes sure
// the family's localhost address names the host, as cloud-init's
// distro.update_etc_hosts (updateHostsEntry); false leaves it.
func UpdateEtcHosts(_ context.Context, e *core.Env) error {
	mode, _, err := ccfg.Decode[ccfg.EtcHosts](e.Cfg, "manage_etc_hosts")
	if err != nil || mode == "" {
		return err
	}
	short, fqdn, ok, err := e.HostnamePair()
	if err != nil {
		return err
	}
	if !ok {
		e.Logf("manage_etc_hosts: no host name known: /etc/hosts left alone")
		return nil
	}
	family := e.DistroInfo().Family
	if mode == ccfg.EtcHostsTemplate {
		b, err := renderHosts(family, fqdn, short)
		if err != nil {
			return err
		}
		return e.KeepWrite("/etc/hosts", b)
	}
	old, err := e.Root.ReadFileMax("/etc/hosts", maxHostsFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	_, ip := hostsFamily(family)
	if b, changed := updateHostsEntry(old, ip, fqdn, short); changed {
		return e.KeepWrite("/etc/hosts", b)
	}
	return nil
}

// maxHostsFile bounds the /etc/hosts the localhost mode reads.
const maxHostsFile = 1 << 20

// updateHostsEntry is cloud-init's distro.update_etc_hosts over
// parsers.hosts.HostsConf: when no line of ip has fqdn first and short
// among its names, the file is written again: blank and comment lines as
// they were, every other line's fields joined by tabs (its comment kept
// after them), the lines of ip taken out and put at the end, followed by
// "ip fqdn short". changed is false when a line already names the host.
// Unlike cloud-init, a new file gets no header line, and the file does
// not gain an empty line at its end at each change (TestHostsAsCloudInit).
func updateHostsEntry(old []byte, ip, fqdn, short string) (_ []byte, changed bool) {
	var out, entries []string
	text := strings.TrimSuffix(string(old), "\n")
	if text != "" {
		for _, line := range strings.Split(text, "\n") {
			trimmed := strings.TrimSpace(line)
			head, tail := trimmed, ""
			if i := strings.IndexByte(trimmed, '#'); i >= 0 {
				head, tail = trimmed[:i], trimmed[i:]
			}
			f := strings.Fields(head)
			switch {
			case len(f) == 0:
				out = append(out, line)
			case f[0] != ip:
				out = append(out, strings.Join(f, "\t")+tail)
			case len(f) >= 2 && f[1] == fqdn && slices.Contains(f[2:], short):
				return old, false
			case len(f) >= 2:
				entries = append(entries, strings.Join(f, "\t"))
			}
		}
	}
	entries = append(entries, ip+"\t"+fqdn+"\t"+short)
	return []byte(strings.Join(append(out, entries...), "\n") + "\n"), true
}
