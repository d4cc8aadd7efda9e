package repos

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

func aptEnv(t *testing.T, cfg string) *coretest.Env {
	te := coretest.NewEnv(t, cfg)
	te.Write("/usr/bin/apt-get", "", 0o755)
	te.Write("/etc/os-release", "ID=debian\nVERSION_CODENAME=bookworm\n", 0o644)
	te.Fake.Handlers["dpkg"] = func(core.Cmd) ([]byte, error) { return []byte("amd64\n"), nil }
	return te
}

// TestAptConfigure: proxy, conf, a source with its key for signed-by,
// sources.list from Debian's template with a suite disabled, against
// cloud-init 22.4.2's functions for the same input; then apt-get update.
func TestAptConfigure(t *testing.T) {
	key, err := os.ReadFile("testdata/apt/key.asc")
	if err != nil {
		t.Fatal(err)
	}
	te := aptEnv(t, `apt:
  preserve_sources_list: false
  primary: [{arches: [default], uri: "http://mirror.corp/debian"}]
  security: [{arches: [amd64], uri: "http://mirror.corp/debian-security"}]
  disable_suites: [backports]
  proxy: http://proxy.corp:3128
  https_proxy: http://proxy.corp:3129
  conf: |
    APT::Install-Recommends "false";
  sources:
    corp:
      source: deb [signed-by=$KEY_FILE] $MIRROR $RELEASE main
      key: |
`+indent(string(key), "        ")+`
    plain:
      source: deb http://other.corp/x $RELEASE-updates main
`)
	if err := AptConfigure(context.Background(), te.Env); err != nil {
		t.Fatal(err)
	}
	te.WantCalls("dpkg --print-architecture", aptGet+" update")
	var want map[string]string
	coretest.CiOracle(t, `from cloudinit.config import cc_apt_configure as a
from cloudinit import util, templater
cfg = json.load(sys.stdin)
out = {}
import tempfile, os
d = tempfile.mkdtemp()
a.apply_apt_config(cfg, d + "/proxy", d + "/conf")
out["proxy"] = open(d + "/proxy").read()
out["conf"] = open(d + "/conf").read()
mirrors = {"PRIMARY": "http://mirror.corp/debian", "SECURITY": "http://mirror.corp/debian-security", "MIRROR": "http://mirror.corp/debian"}
written = {}
util.write_file = lambda f, c, *x, **k: written.update({f: c})
class C:
    def get_template_filename(self, n): return "/etc/cloud/templates/" + n + ".tmpl"
    class distro: name = "debian"
a.generate_sources_list(cfg, "bookworm", mirrors, C())
out["sources.list"] = written["/etc/apt/sources.list"]
p = dict(mirrors, RELEASE="bookworm", KEY_FILE="/etc/apt/cloud-init.gpg.d/corp.gpg")
out["corp"] = templater.render_string(cfg["sources"]["corp"]["source"], p) + "\n"
print(json.dumps(out))`, te.Cfg["apt"], &want)
	te.WantFile(aptProxyFile, want["proxy"], 0o644, 0, 0)
	te.WantFile(aptConfigFile, want["conf"], 0o644, 0, 0)
	te.WantFile(aptSourcesList, want["sources.list"], 0o644, 0, 0)
	te.WantFile("/etc/apt/sources.list.d/corp.list", want["corp"], 0o644, 0, 0)
	te.WantFile("/etc/apt/sources.list.d/plain.list", "deb http://other.corp/x bookworm-updates main\n", 0o644, 0, 0)
	if !strings.Contains(want["sources.list"], "# suite disabled by cloud-init: deb http://mirror.corp/debian bookworm-backports main") {
		t.Errorf("oracle's sources.list has no disabled suite: %q", want["sources.list"])
	}
	gpg, err := exec.LookPath("gpg")
	if err != nil {
		t.Fatal("no gpg to check the de-armoured key against: make deps installs gnupg")
	}
	cmd := exec.Command(gpg, "--dearmor")
	cmd.Stdin = bytes.NewReader(key)
	dearmored, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	te.WantFile("/etc/apt/cloud-init.gpg.d/corp.gpg", string(dearmored), 0o644, 0, 0)
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n"+pre)
}

// TestAptHostile: newlines in a source or proxy, bad keys and file names
// are refused naming the key, nothing written, nothing run but dpkg.
func TestAptHostile(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{"apt: {sources: {x: {source: \"deb http://a b main\\ndeb http://evil c main\"}}}", "apt.sources.x.source"},
		{"apt: {sources: {'../../etc/x': {source: deb http://a b c}}}", "apt.sources.../../etc/x.filename"},
		{"apt: {sources: {x: {source: 'deb $NOPE b c'}}}", "$NOPE"},
		{"apt: {sources: {x: {keyid: '--homedir /tmp'}}}", "apt.sources.x.keyid"},
		{"apt: {sources: {x: {keyid: ABCD, keyserver: '--exec x'}}}", "apt.sources.x.keyserver"},
		{"apt: {sources: {x: {key: not a key}}}", "apt.sources.x.key"},
		{"apt: {sources: {x: {source: 'deb [signed-by=$KEY_FILE] http://a b c'}}}", "$KEY_FILE"},
		{"apt: {proxy: \"http://p\\\";\\nAPT::x \\\"y\"}", "apt.proxy"},
		{"apt_sources: [{source: deb x y z}]", "apt_sources"},
	} {
		te := aptEnv(t, tc.cfg)
		err := AptConfigure(context.Background(), te.Env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.cfg, err, tc.want)
		}
		if te.Root.Exists("/etc/apt") {
			t.Errorf("%s: something written", tc.cfg)
		}
		for _, c := range te.Calls() {
			if c != "dpkg --print-architecture" {
				t.Errorf("%s: ran %s", tc.cfg, c)
			}
		}
	}
}
