package system

import (
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// ntpOracle renders with cc_ntp.write_ntp_config_template (the defaults
// for no servers and pools included) from /etc/cloud/templates.
const ntpOracle = `
import os, tempfile
from cloudinit.config import cc_ntp
out = []
for c in json.load(sys.stdin):
    fd, p = tempfile.mkstemp()
    os.close(fd)
    cc_ntp.write_ntp_config_template(c["distro"], service_name=c["service"], servers=c["servers"], pools=c["pools"], path=p, template_fn="/etc/cloud/templates/%s.tmpl" % c["template"])
    out.append(open(p).read())
    os.unlink(p)
json.dump(out, sys.stdout)
`

func TestNTPTemplatesMatchCloudInit(t *testing.T) {
	type tc struct {
		Distro   string   `json:"distro"` // cloud-init's distro name
		Service  string   `json:"service"`
		Template string   `json:"template"`
		Servers  []string `json:"servers"`
		Pools    []string `json:"pools"`
		client   string
		family   string
	}
	var cases []tc
	hosts := [][2][]string{
		{nil, nil},
		{{"ntp.example.com", "192.0.2.1", "2001:db8::1"}, nil},
		{nil, {"0.int.pool.ntp.org", "pool.example.org"}},
		{{"s1.example"}, {"p1.example", "p2.example"}},
	}
	for _, d := range []struct{ name, family, tdistro string }{
		{"debian", core.FamilyDebian, "debian"}, {"ubuntu", core.FamilyDebian, "ubuntu"},
		{"rhel", core.FamilyRHEL, "rhel"}, {"centos", core.FamilyRHEL, "rhel"}, {"rocky", core.FamilyRHEL, "rhel"}, {"fedora", core.FamilyRHEL, "fedora"},
		{"opensuse", core.FamilySUSE, "opensuse"}, {"sles", core.FamilySUSE, "opensuse"}, {"alpine", core.FamilyAlpine, "alpine"},
	} {
		for _, h := range hosts {
			for _, client := range []string{"chrony", "ntp", "systemd-timesyncd"} {
				c, _ := ntpClientFor(client, core.DistroInfo{Name: d.name, Family: d.family})
				tmpl := c.Template
				if tmpl != "timesyncd.conf" {
					tmpl += "." + d.tdistro
				}
				cases = append(cases, tc{d.name, c.Service, tmpl, h[0], h[1], client, d.family})
			}
		}
	}
	var want []string
	coretest.CloudinitOracle(t, ntpOracle, cases, &want)
	if len(want) != len(cases) {
		t.Fatalf("oracle gave %d results for %d cases", len(want), len(cases))
	}
	for i, c := range cases {
		cl, _ := ntpClientFor(c.client, core.DistroInfo{Name: c.Distro, Family: c.family})
		got, err := renderNTP(cl, core.DistroInfo{Name: c.Distro, Family: c.family}, c.Servers, c.Pools)
		if err != nil {
			t.Errorf("%s %s: %v", c.Distro, c.Template, err)
			continue
		}
		if got != want[i] {
			t.Errorf("%s %s servers %q pools %q:\n got %q\nwant %q", c.Distro, c.Template, c.Servers, c.Pools, got, want[i])
		}
	}
}

func TestNTP(t *testing.T) {
	chrony := func(conf string) string {
		got, err := renderNTP(ntpClient{Template: "chrony.conf"}, core.DistroInfo{Name: "debian", Family: core.FamilyDebian}, []string{"ntp.example.com"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	for _, tt := range []struct {
		name, distro, cfg string
		files             []string
		wantFile          string
		wantIn            []string // lines the file must have
		wantCalls         []string
		wantLog           string
	}{
		{
			name: "debian chrony installed, systemd running", distro: "debian",
			cfg:      "ntp:\n  servers: [ntp.example.com]\n",
			files:    []string{"/usr/sbin/chronyd", "/usr/lib/systemd/systemd-timesyncd", "/run/systemd/system/"},
			wantFile: "/etc/chrony/chrony.conf", wantIn: []string{"server ntp.example.com iburst"},
			wantCalls: []string{"systemctl --no-block reload-or-restart chrony"},
		},
		{
			name: "debian timesyncd only", distro: "debian",
			cfg:      "ntp:\n  pools: [pool.example.org]\n",
			files:    []string{"/lib/systemd/systemd-timesyncd", "/run/systemd/system/"},
			wantFile: "/etc/systemd/timesyncd.conf.d/cloud-init.conf", wantIn: []string{"NTP=pool.example.org "},
			wantCalls: []string{"systemctl --no-block reload-or-restart systemd-timesyncd"},
		},
		{
			name: "rocky chronyd, default pools of the distribution", distro: "rocky",
			cfg:      "ntp: {}\n",
			files:    []string{"/usr/sbin/chronyd", "/run/systemd/system/"},
			wantFile: "/etc/chrony.conf", wantIn: []string{"pool 0.rocky.pool.ntp.org iburst", "pool 3.rocky.pool.ntp.org iburst", "driftfile /var/lib/chrony/drift"},
			wantCalls: []string{"systemctl --no-block reload-or-restart chronyd"},
		},
		{
			name: "opensuse timesyncd under /usr/lib", distro: "opensuse",
			cfg:      "ntp:\n  servers: [192.0.2.7]\n",
			files:    []string{"/usr/lib/systemd/systemd-timesyncd", "/run/systemd/system/"},
			wantFile: "/etc/systemd/timesyncd.conf.d/cloud-init.conf", wantIn: []string{"NTP=192.0.2.7 "},
			wantCalls: []string{"systemctl --no-block reload-or-restart systemd-timesyncd"},
		},
		{
			name: "alpine busybox ntpd before init: servers from the global pool, no command", distro: "alpine",
			cfg:      "ntp:\n  enabled: true\n",
			files:    []string{"/usr/sbin/ntpd"},
			wantFile: "/etc/ntp.conf", wantIn: []string{"server 0.pool.ntp.org", "server 3.pool.ntp.org"},
			wantLog: "no init running",
		},
		{
			name: "alpine chrony under OpenRC", distro: "alpine",
			cfg:      "ntp:\n  servers: [ntp.example.com]\n",
			files:    []string{"/usr/sbin/chronyd", "/run/openrc/softlevel"},
			wantFile: "/etc/chrony/chrony.conf", wantIn: []string{"server ntp.example.com iburst"},
			wantCalls: []string{"rc-service --nocolor chronyd restart"},
		},
		{
			name: "nothing installed: the first preferred client's file, no command", distro: "debian",
			cfg:      "ntp:\n  servers: [ntp.example.com]\n",
			files:    []string{"/run/systemd/system/"},
			wantFile: "/etc/chrony/chrony.conf", wantIn: []string{chrony("")},
			wantLog: "chrony is not installed",
		},
		{
			name: "ntp_client chosen, ntp.config overrides", distro: "debian",
			cfg:      "ntp:\n  ntp_client: ntp\n  servers: [ntp.example.com]\n  config:\n    confpath: /etc/ntpsec/ntp.conf\n    service_name: ntpsec\n    check_exe: ntpd\n",
			files:    []string{"/usr/sbin/ntpd", "/usr/sbin/chronyd", "/run/systemd/system/"},
			wantFile: "/etc/ntpsec/ntp.conf", wantIn: []string{"server ntp.example.com iburst", "restrict -4 default kod notrap nomodify nopeer noquery limited"},
			wantCalls: []string{"systemctl --no-block reload-or-restart ntpsec"},
		},
		{
			name: "system_info.ntp_client", distro: "debian",
			cfg:      "system_info:\n  ntp_client: systemd-timesyncd\nntp:\n  servers: [ntp.example.com]\n",
			files:    []string{"/usr/sbin/chronyd", "/lib/systemd/systemd-timesyncd"},
			wantFile: "/etc/systemd/timesyncd.conf.d/cloud-init.conf", wantIn: []string{"NTP=ntp.example.com "},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			te := coretest.DistroEnv(t, tt.distro, tt.cfg, tt.files...)
			if err := te.RunFunc(NTP); err != nil {
				t.Fatal(err)
			}
			got := te.Read(tt.wantFile)
			for _, w := range tt.wantIn {
				if !strings.Contains(got, w) {
					t.Errorf("%s lacks %q:\n%s", tt.wantFile, w, got)
				}
			}
			te.WantMode(tt.wantFile, 0o644, 0, 0)
			te.WantCalls(tt.wantCalls...)
			if !strings.Contains(te.LogBuf.String(), tt.wantLog) {
				t.Errorf("log lacks %q:\n%s", tt.wantLog, te.LogBuf.String())
			}
		})
	}
}

func TestNTPKeepsDist(t *testing.T) {
	te := coretest.DistroEnv(t, "debian", "ntp:\n  servers: [ntp.example.com]\n", "/usr/sbin/chronyd")
	te.Write("/etc/chrony/chrony.conf", "pool 2.debian.pool.ntp.org iburst\n", 0o640)
	if err := te.RunFunc(NTP); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/etc/chrony/chrony.conf.dist", "pool 2.debian.pool.ntp.org iburst\n", 0o640, 0, 0)
	if !strings.Contains(te.Read("/etc/chrony/chrony.conf"), "server ntp.example.com iburst\n") {
		t.Error("chrony.conf not written")
	}
}

func TestNTPDHCPServers(t *testing.T) {
	for _, tt := range []struct {
		name, cfg, lease string
		wantNTP          string
		wantErr          string
	}{
		{"lease servers after the given ones", "ntp:\n  ntp_use_dhcp_config: true\n  servers: [ntp.example.com, 192.0.2.5]\n", "192.0.2.5\n192.0.2.6\n", "NTP=ntp.example.com 192.0.2.5 192.0.2.6 \n", ""},
		{"lease servers alone: no default pools", "ntp:\n  ntp_use_dhcp_config: true\n", "192.0.2.6\n", "NTP=192.0.2.6 \n", ""},
		{"no lease file: default pools", "ntp:\n  ntp_use_dhcp_config: true\n", "", "NTP=0.debian.pool.ntp.org 1.debian.pool.ntp.org 2.debian.pool.ntp.org 3.debian.pool.ntp.org \n", ""},
		{"opt-in off: lease ignored", "ntp:\n  servers: [ntp.example.com]\n", "192.0.2.6\n", "NTP=ntp.example.com \n", ""},
		{"bad lease line", "ntp:\n  ntp_use_dhcp_config: true\n", "192.0.2.6\nserver evil\n", "", LeaseNTPFile + " line 2: not an address"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			te := coretest.DistroEnv(t, "debian", tt.cfg, "/lib/systemd/systemd-timesyncd")
			if tt.lease != "" {
				te.Write(LeaseNTPFile, tt.lease, 0o644)
			}
			err := te.RunFunc(NTP)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err %v, want %q", err, tt.wantErr)
				}
				if te.Root.Exists("/etc/systemd/timesyncd.conf.d/cloud-init.conf") {
					t.Error("a file was written despite the error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := te.Read("/etc/systemd/timesyncd.conf.d/cloud-init.conf"); !strings.HasSuffix(got, "[Time]\n"+tt.wantNTP) {
				t.Errorf("got %q, want NTP line %q", got, tt.wantNTP)
			}
		})
	}
}

func TestNTPRejects(t *testing.T) {
	for _, tt := range []struct{ cfg, want string }{
		{"ntp:\n  servers: [\"ntp.example.com\\nserver evil.example\"]\n", "ntp.servers.0"},
		{"ntp:\n  pools: [ok.example, \"$(reboot)\"]\n", "ntp.pools.1"},
		{"ntp:\n  servers: [\"-x\"]\n", "ntp.servers.0"},
		{"ntp:\n  servers: [\"a b\"]\n", "ntp.servers.0"},
		{"ntp:\n  ntp_client: openntpd\n", "ntp.ntp_client \"openntpd\""},
		{"ntp:\n  config:\n    confpath: etc/x.conf\n", "ntp.config.confpath"},
		{"ntp:\n  config:\n    confpath: \"/etc/x\\n.conf\"\n", "ntp.config.confpath"},
		{"ntp:\n  config:\n    service_name: \"x; reboot\"\n", "ntp.config.service_name"},
		{"ntp:\n  config:\n    template: \"{{servers}}\"\n", "ntp.config.template"},
		{"ntp: [a]\n", "ntp: want a map"},
	} {
		te := coretest.DistroEnv(t, "debian", tt.cfg, "/usr/sbin/chronyd", "/run/systemd/system/")
		err := te.RunFunc(NTP)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err %v, want %q", tt.cfg, err, tt.want)
		}
		if te.Root.Exists("/etc/chrony/chrony.conf") || len(te.Calls()) > 0 {
			t.Errorf("%q: wrote or ran something: %v", tt.cfg, te.Calls())
		}
	}
}

func TestNTPDisabled(t *testing.T) {
	te := coretest.DistroEnv(t, "debian", "ntp:\n  enabled: false\n  servers: [ntp.example.com]\n", "/usr/sbin/chronyd", "/run/systemd/system/")
	if err := te.RunFunc(NTP); err != nil {
		t.Fatal(err)
	}
	if te.Root.Exists("/etc/chrony/chrony.conf") {
		t.Error("chrony.conf written with enabled: false")
	}
	te.WantCalls()
}

func TestDistroInfo(t *testing.T) {
	for _, tt := range []struct {
		osrel, cfg string
		want       core.DistroInfo
	}{
		{"debian", "", core.DistroInfo{Name: "debian", Family: core.FamilyDebian}},
		{"ubuntu", "", core.DistroInfo{Name: "ubuntu", Family: core.FamilyDebian}},
		{"rocky", "", core.DistroInfo{Name: "rocky", Family: core.FamilyRHEL}},
		{"fedora", "", core.DistroInfo{Name: "fedora", Family: core.FamilyRHEL}},
		{"opensuse", "", core.DistroInfo{Name: "suse", Family: core.FamilySUSE}},
		{"alpine", "", core.DistroInfo{Name: "alpine", Family: core.FamilyAlpine}},
		{"", "", core.DistroInfo{Name: "", Family: core.FamilyDebian}},
		{"debian", "system_info:\n  distro: rhel\n", core.DistroInfo{Name: "rhel", Family: core.FamilyRHEL}},
	} {
		te := coretest.DistroEnv(t, tt.osrel, tt.cfg)
		if got := te.DistroInfo(); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %q: got %+v, want %+v", tt.osrel, tt.cfg, got, tt.want)
		}
	}
}
