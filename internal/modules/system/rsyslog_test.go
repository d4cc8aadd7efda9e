package system

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// rsyslogOracle is cc_rsyslog.remotes_to_rsyslog_cfg for each remotes map
// given as a list of [name, line] pairs (in that order).
const rsyslogOracle = `
from cloudinit.config import cc_rsyslog
out = []
for pairs in json.load(sys.stdin):
    out.append(cc_rsyslog.remotes_to_rsyslog_cfg(dict(pairs), header="# begin remotes", footer="# end remotes"))
json.dump(out, sys.stdout)
`

func TestRsyslogRemotesMatchCloudInit(t *testing.T) {
	cases := [][][2]string{
		{{"maas", "192.168.1.1"}},
		{{"juju", "10.0.4.1"}, {"logs", "*.* @@logs.example.com:514"}},
		{{"a", "@[2001:db8::1]:10514"}, {"b", "kern.* @@192.0.2.9"}, {"c", "syslog.example.org # a comment"}},
		{{"v6", "[2001:db8::2]"}},
	}
	var want []string
	coretest.CloudinitOracle(t, rsyslogOracle, cases, &want)
	for i, c := range cases {
		rem := map[string]ccfg.RsyslogRemote{}
		for _, p := range c {
			rem[p[0]] = ccfg.RsyslogRemote(p[1])
		}
		got, err := remotesConfig(rem)
		if err != nil {
			t.Fatal(err)
		}
		if got != want[i] {
			t.Errorf("%q:\n got %q\nwant %q", c, got, want[i])
		}
	}
}

func TestRsyslog(t *testing.T) {
	for _, tt := range []struct {
		name, cfg string
		files     map[string]string
		calls     []string
	}{
		{
			name: "configs and remotes, default file, systemd",
			cfg:  "rsyslog:\n  configs:\n    - \"*.* @@192.158.1.1\"\n    - content: \"*.*   @@192.0.2.1:10514\"\n      filename: 01-example.conf\n    - content: |\n        *.*   @@syslogd.example.com\n  remotes:\n    maas: 192.168.1.1\n",
			files: map[string]string{
				"/etc/rsyslog.d/20-cloud-config.conf": "*.* @@192.158.1.1\n*.*   @@syslogd.example.com\n# begin remotes\n*.* @192.168.1.1 # maas\n# end remotes\n",
				"/etc/rsyslog.d/01-example.conf":      "*.*   @@192.0.2.1:10514\n",
			},
			calls: []string{"systemctl --no-block reload-or-try-restart rsyslog"},
		},
		{
			name:  "legacy list with rsyslog_dir and rsyslog_filename, custom reload",
			cfg:   "rsyslog:\n  - \"*.* @10.0.0.1\"\nrsyslog_dir: /etc/syslog.d\nrsyslog_filename: 50-x.conf\n",
			files: map[string]string{"/etc/syslog.d/50-x.conf": "*.* @10.0.0.1\n"},
			calls: []string{"systemctl --no-block reload-or-try-restart rsyslog"},
		},
		{
			name:  "service_reload_command as a list",
			cfg:   "rsyslog:\n  configs: [\"*.* @10.0.0.1\"]\n  service_reload_command: [systemctl, restart, rsyslog.service]\n",
			files: map[string]string{"/etc/rsyslog.d/20-cloud-config.conf": "*.* @10.0.0.1\n"},
			calls: []string{"systemctl restart rsyslog.service"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			te := coretest.DistroEnv(t, "debian", tt.cfg, "/run/systemd/system/")
			if err := te.RunFunc(Rsyslog); err != nil {
				t.Fatal(err)
			}
			for f, want := range tt.files {
				te.WantFile(f, want, 0o644, 0, 0)
			}
			te.WantCalls(tt.calls...)
		})
	}
}

func TestRsyslogRejects(t *testing.T) {
	for _, tt := range []struct{ cfg, want string }{
		{"rsyslog:\n  remotes:\n    x: \"10.0.0.1\\n*.* @evil\"\n", "rsyslog.remotes.x"},
		{"rsyslog:\n  remotes:\n    x: \"*.* @host;rm:514\"\n", "rsyslog.remotes.x: address"},
		{"rsyslog:\n  remotes:\n    x: \"a b c\"\n", "rsyslog.remotes.x"},
		{"rsyslog:\n  remotes:\n    x: \"@@h:99999\"\n", "rsyslog.remotes.x: port"},
		{"rsyslog:\n  configs:\n    - content: x\n      filename: ../../etc/passwd\n", "rsyslog.configs.0.filename"},
		{"rsyslog:\n  configs:\n    - content: x\n      filename: \"a b.conf\"\n", "rsyslog.configs.0.filename"},
		{"rsyslog:\n  config_dir: \"rsyslog.d\"\n  configs: [x]\n", "rsyslog.config_dir"},
		{"rsyslog:\n  configs: x\n", "rsyslog.configs: want a list"},
	} {
		te := coretest.DistroEnv(t, "debian", tt.cfg, "/run/systemd/system/")
		err := te.RunFunc(Rsyslog)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err %v, want %q", tt.cfg, err, tt.want)
		}
		if te.Root.Exists("/etc/rsyslog.d") || te.Root.Exists("/etc/passwd.conf") || len(te.Calls()) > 0 {
			t.Errorf("%q: wrote or ran something", tt.cfg)
		}
	}
}
