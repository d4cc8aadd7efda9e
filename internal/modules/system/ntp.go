package system

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/paths"
)

// LeaseNTPFile is where the boot step records the NTP servers (DHCP
// option 42) of the initramfs's DHCP lease, one address a line, for
// ntp's ntp_use_dhcp_config. Missing: no lease, or none offered.
const LeaseNTPFile = paths.RunDir + "/dhcp-ntp-servers"

// maxLeaseNTP bounds LeaseNTPFile.
const maxLeaseNTP = 4096

// ntpClient is one of cloud-init's NTP_CLIENT_CONFIG entries, with the
// distribution's overrides (DISTRO_CLIENT_CONFIG) applied.
type ntpClient struct {
	Name     string
	CheckExe []string // any of them present means installed
	ConfPath string
	Service  string
	// Template is the template's name: "chrony.conf", "ntp.conf" (with
	// the distribution's suffix) or "timesyncd.conf".
	Template string
}

// ntpClientFor is client name's configuration on family f.
func ntpClientFor(name string, d core.DistroInfo) (ntpClient, bool) {
	switch name {
	case "chrony":
		c := ntpClient{Name: name, CheckExe: []string{"chronyd"}, ConfPath: "/etc/chrony.conf", Service: "chronyd", Template: "chrony.conf"}
		switch d.Family {
		case core.FamilyDebian:
			c.ConfPath, c.Service = "/etc/chrony/chrony.conf", "chrony"
		case core.FamilyAlpine:
			c.ConfPath = "/etc/chrony/chrony.conf"
		}
		return c, true
	case "ntp", "ntpdate":
		c := ntpClient{Name: name, CheckExe: []string{"ntpd"}, ConfPath: "/etc/ntp.conf", Service: "ntpd", Template: "ntp.conf"}
		if d.Family == core.FamilyDebian {
			c.Service = "ntp"
		}
		if name == "ntpdate" {
			c.CheckExe, c.Service = []string{"ntpdate"}, "ntpdate"
		}
		return c, true
	case "systemd-timesyncd":
		return ntpClient{
			Name:     name,
			CheckExe: []string{"/lib/systemd/systemd-timesyncd", "/usr/lib/systemd/systemd-timesyncd"},
			ConfPath: "/etc/systemd/timesyncd.conf.d/cloud-init.conf", Service: name, Template: "timesyncd.conf",
		}, true
	}
	return ntpClient{}, false
}

// preferredNTPClients is the distribution's preferred_ntp_clients.
func preferredNTPClients(d core.DistroInfo) []string {
	if d.Family == core.FamilyAlpine {
		return []string{"chrony", "ntp"}
	}
	if d.Family == core.FamilySUSE {
		return []string{"chrony", "systemd-timesyncd", "ntp"}
	}
	return []string{"chrony", "systemd-timesyncd", "ntp", "ntpdate"}
}

// installed tells whether the client's executable is in the root.
func ntpInstalled(e *core.Env, c ntpClient) bool {
	for _, x := range c.CheckExe {
		if strings.HasPrefix(x, "/") {
			if e.Root.Exists(x) {
				return true
			}
		} else if _, ok := e.Tool(x); ok {
			return true
		}
	}
	return false
}

// NTP is cc_ntp:
//
//   - ntp missing or ntp.enabled false: nothing;
//   - ntp.ntp_client (or system_info.ntp_client; "auto" when neither) picks
//     the client: auto is the first of the distribution's preferred clients
//     (chrony, systemd-timesyncd, ntp, ntpdate; Alpine: chrony, ntp) whose
//     daemon is in the root, else the first of them;
//   - servers and pools (hosts or addresses), and with
//     ntp.ntp_use_dhcp_config (earlyinit's, after cloudbase-init) the
//     NTP servers of the initramfs's DHCP lease (LeaseNTPFile) after the
//     given servers; none at all: the four {0-3}.<distro>.pool.ntp.org
//     pools (servers for Alpine's busybox ntpd);
//   - the client's configuration file is moved to <file>.dist and written
//     as cloud-init's template for the distribution renders it;
//   - the service is reloaded (or started) through the running init:
//     systemctl --no-block reload-or-restart (the boot stage runs before
//     the services, so the job is queued, not waited for), rc-service
//     restart under a running OpenRC; before init runs nothing is needed.
//
// earlyinit installs no package at boot: a client not in the root gets
// its file and a log line (packages: can install it in the final stage).
// ntp.config may change confpath, service_name and check_exe; its
// template (Jinja) is not supported.
func NTP(ctx context.Context, e *core.Env) error {
	nc, ok, err := ccfg.Decode[ccfg.NTP](e.Cfg, "ntp")
	if !ok || err != nil {
		return err
	}
	if !nc.Enabled {
		e.Logf("ntp: disabled by ntp.enabled")
		return nil
	}
	d := e.DistroInfo()
	client, err := selectNTPClient(e, nc, d)
	if err != nil {
		return err
	}
	servers, err := ntpHosts("servers", nc.Servers)
	if err != nil {
		return err
	}
	pools, err := ntpHosts("pools", nc.Pools)
	if err != nil {
		return err
	}
	if nc.UseDHCP {
		lease, err := leaseNTPServers(e)
		if err != nil {
			return err
		}
		if len(lease) == 0 {
			e.Logf("ntp: ntp_use_dhcp_config: the DHCP lease had no NTP servers")
		}
		servers = appendNew(servers, lease...)
	}
	content, err := renderNTP(client, d, servers, pools)
	if err != nil {
		return err
	}
	if err := backupConf(e, client.ConfPath); err != nil {
		return fmt.Errorf("ntp: %w", err)
	}
	if err := e.Root.WriteFile(client.ConfPath, []byte(content), 0o644, 0, 0); err != nil {
		return fmt.Errorf("ntp: %w", err)
	}
	e.Logf("ntp: %s configured in %s (%d servers, %d pools)", client.Name, client.ConfPath, len(servers), len(pools))
	if !ntpInstalled(e, client) {
		e.Logf("ntp: %s is not installed in the image (no %s): earlyinit installs no package at boot; add it to packages", client.Name, strings.Join(client.CheckExe, " or "))
		return nil
	}
	if err := e.ServiceAction(ctx, "reload", client.Service); err != nil {
		return fmt.Errorf("ntp: reload %s: %w", client.Service, err)
	}
	return nil
}

// selectNTPClient is cloud-init's select_ntp_client, with ntp.config's
// overrides.
func selectNTPClient(e *core.Env, nc ccfg.NTP, d core.DistroInfo) (ntpClient, error) {
	name := strings.TrimSpace(nc.NTPClient)
	key := "ntp.ntp_client"
	if name == "" || name == "auto" {
		name, key = "auto", "system_info.ntp_client"
		s, _ := core.DistroSetting(e, "ntp", "ntp_client", func(si *ccfg.SystemInfo) any { return si.NTPClient })
		if s = strings.TrimSpace(s); s != "" {
			name = s
		}
	}
	var client ntpClient
	if name == "auto" {
		prefs := preferredNTPClients(d)
		client, _ = ntpClientFor(prefs[0], d)
		for _, p := range prefs {
			if c, _ := ntpClientFor(p, d); ntpInstalled(e, c) {
				client = c
				break
			}
		}
	} else {
		c, ok := ntpClientFor(name, d)
		if !ok {
			return ntpClient{}, fmt.Errorf("%s %q: earlyinit supports chrony, systemd-timesyncd, ntp and ntpdate", key, name)
		}
		client = c
	}
	oc := nc.Config
	if oc == nil {
		return client, nil
	}
	if oc.ConfPath != nil {
		p, err := core.ConfPath("ntp.config.confpath", *oc.ConfPath)
		if err != nil {
			return ntpClient{}, err
		}
		client.ConfPath = p
	}
	if oc.ServiceName != nil {
		if s := *oc.ServiceName; !core.ValidServiceName(s) {
			return ntpClient{}, fmt.Errorf("ntp.config.service_name %q: not a service name", s)
		}
		client.Service = *oc.ServiceName
	}
	if oc.CheckExe != nil {
		s := *oc.CheckExe
		if s == "" || strings.ContainsAny(s, " \t\n\x00") || strings.Contains(s, "..") {
			return ntpClient{}, fmt.Errorf("ntp.config.check_exe: want a command name or absolute path")
		}
		client.CheckExe = []string{s}
	}
	if oc.Packages != nil {
		e.Logf("ntp.config.packages: earlyinit installs no package at boot: ignored")
	}
	if oc.Template != nil {
		return ntpClient{}, fmt.Errorf("ntp.config.template: earlyinit renders only its built-in templates (Jinja is not supported)")
	}
	return client, nil
}

// ntpHosts checks ntp.servers or ntp.pools: host names or addresses (a
// line of the configuration file comes of each).
func ntpHosts(key string, l []string) ([]string, error) {
	for i, h := range l {
		if !validNTPHost(h) {
			return nil, fmt.Errorf("ntp.%s.%d %q: not a host name or address", key, i, h)
		}
	}
	return l, nil
}

// validNTPHost is a DNS name or an IPv4 or IPv6 address.
func validNTPHost(h string) bool {
	if _, err := netip.ParseAddr(h); err == nil {
		return !strings.Contains(h, "%")
	}
	return h != "" && len(h) <= 253 && h[0] != '-' && h[0] != '.' && core.AlnumOr(h, "-._")
}

func appendNew(l []string, add ...string) []string {
	for _, a := range add {
		dup := false
		for _, x := range l {
			if x == a {
				dup = true
			}
		}
		if !dup {
			l = append(l, a)
		}
	}
	return l
}

// leaseNTPServers reads LeaseNTPFile: nothing when it is missing, an
// error naming the file for a line that is not an address.
func leaseNTPServers(e *core.Env) ([]string, error) {
	fi, err := e.Root.Stat(LeaseNTPFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("ntp: ntp_use_dhcp_config: %w", err)
	}
	if fi.Size() > maxLeaseNTP {
		return nil, fmt.Errorf("ntp: ntp_use_dhcp_config: %s: larger than %d bytes", LeaseNTPFile, maxLeaseNTP)
	}
	b, err := e.Root.ReadFile(LeaseNTPFile)
	if err != nil {
		return nil, fmt.Errorf("ntp: ntp_use_dhcp_config: %w", err)
	}
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		a, err := netip.ParseAddr(line)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("ntp: ntp_use_dhcp_config: %s line %d: not an address", LeaseNTPFile, i+1)
		}
		out = appendNew(out, a.String())
	}
	return out, nil
}

// ntpPoolNames is cloud-init's generate_server_names: the four
// {0-3}.<distro>.pool.ntp.org (sles using opensuse's, Alpine, EuroLinux
// and an unknown distribution the global pool).
func ntpPoolNames(d core.DistroInfo) []string {
	zone := d.Name
	switch zone {
	case "sles", "suse":
		zone = "opensuse"
	case "alpine", "eurolinux":
		zone = ""
	}
	var out []string
	for i := 0; i < 4; i++ {
		parts := []string{fmt.Sprint(i)}
		if zone != "" {
			parts = append(parts, zone)
		}
		out = append(out, strings.Join(append(parts, "pool.ntp.org"), "."))
	}
	return out
}

// ntpTemplateDistro is the suffix of the template for d: cloud-init's
// distribution name where it has a template of its own (debian, ubuntu,
// fedora, alpine), rhel for the rest of the RHEL family (centos' is the
// same text), opensuse for SUSE, debian for an unknown distribution.
func ntpTemplateDistro(d core.DistroInfo) string {
	switch d.Name {
	case "ubuntu", "fedora":
		return d.Name
	}
	switch d.Family {
	case core.FamilyRHEL:
		return "rhel"
	case core.FamilySUSE:
		return "opensuse"
	case core.FamilyAlpine:
		return "alpine"
	}
	return "debian"
}

// renderNTP is write_ntp_config_template: the defaults for no servers
// and pools, then the template.
func renderNTP(c ntpClient, d core.DistroInfo, servers, pools []string) (string, error) {
	tdistro := ntpTemplateDistro(d)
	busybox := c.Template == "ntp.conf" && tdistro == "alpine"
	switch {
	case len(servers) == 0 && busybox:
		servers = ntpPoolNames(d)
	case len(servers) == 0 && len(pools) == 0:
		pools = ntpPoolNames(d)
	}
	var b strings.Builder
	switch {
	case c.Template == "timesyncd.conf":
		b.WriteString("# cloud-init generated file\n# See timesyncd.conf(5) for details.\n\n[Time]\n")
		if len(servers)+len(pools) > 0 {
			b.WriteString("NTP=")
			for _, h := range append(append([]string{}, servers...), pools...) {
				b.WriteString(h + " ")
			}
			b.WriteString("\n")
		}
	case busybox:
		b.WriteString("# /etc/ntp.conf\n#\n# Configuration for Busybox ntpd - it only supports \"server\" lines.\n\n")
		if len(servers) > 0 {
			b.WriteString("# Servers\n")
		}
		for _, s := range servers {
			b.WriteString("server " + s + "\n")
		}
		b.WriteString("\n")
	default:
		head, tail, ok := ntpTemplate(c.Template + "." + tdistro)
		if !ok {
			return "", fmt.Errorf("ntp: no template %s.%s", c.Template, tdistro)
		}
		b.WriteString(head)
		if len(pools) > 0 {
			b.WriteString("# pools\n")
		}
		for _, p := range pools {
			b.WriteString("pool " + p + " iburst\n")
		}
		if len(servers) > 0 {
			b.WriteString("# servers\n")
		}
		for _, s := range servers {
			b.WriteString("server " + s + " iburst\n")
		}
		b.WriteString(tail)
	}
	return b.String(), nil
}

// backupConf is cloud-init's rename_ntp_conf: an existing file becomes
// <name>.dist (same mode), replacing an older one.
func backupConf(e *core.Env, name string) error {
	fi, err := e.Root.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", name)
	}
	b, err := e.Root.ReadFile(name)
	if err != nil {
		return err
	}
	return e.Root.WriteFile(name+".dist", b, fi.Mode().Perm(), 0, 0)
}

// ntpFiles are cloud-init 22.4.2's templates (/etc/cloud/templates/
// <client>.<distro>.tmpl), each as the text before its servers and pools
// block (templates/ntp/<client>.<distro>.head) and after it (.tail);
// ntpBlock renders the block as their Jinja does.
//
//go:embed templates/ntp
var ntpFiles embed.FS

// ntpTemplate is the template named client.distro ("chrony.conf.rhel"):
// its text before and after the servers and pools block.
func ntpTemplate(name string) (head, tail string, ok bool) {
	h, err := ntpFiles.ReadFile("templates/ntp/" + name + ".head")
	if err != nil {
		return "", "", false
	}
	t, err := ntpFiles.ReadFile("templates/ntp/" + name + ".tail")
	if err != nil {
		return "", "", false
	}
	return string(h), string(t), true
}
