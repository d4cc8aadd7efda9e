package repos

import (
	"context"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

const yumYAML = `yum_repos:
  my repo:
    baseurl: http://mirror.corp/el9/$basearch
    Enabled: true
    gpgcheck: false
    gpg-key: [http://mirror.corp/k1, http://mirror.corp/k2]
    priority: 10
    name: Corp EL9
  nourl:
    name: nothing
`

// TestYumAddRepo: the .repo file is cloud-init's but for the header line,
// options in sorted order (the oracle gets them sorted too).
func TestYumAddRepo(t *testing.T) {
	te := coretest.NewEnv(t, yumYAML)
	te.Write("/etc/yum.repos.d/exists.repo", "keep\n", 0o644)
	te.Cfg["yum_repos"].(map[string]any)["exists"] = map[string]any{"baseurl": "http://x"}
	if err := YumAddRepo(context.Background(), te.Env); err != nil {
		t.Fatal(err)
	}
	got := te.Read("/etc/yum.repos.d/my-repo.repo")
	header, body, _ := strings.Cut(got, "\n")
	if !strings.HasPrefix(header, "# Created by earlyinit on ") {
		t.Errorf("header %q", header)
	}
	var want string
	coretest.CiOracle(t, `from cloudinit.config import cc_yum_add_repo as y
opts = json.load(sys.stdin)
print(json.dumps(y._format_repository_config("my-repo", dict(sorted(opts.items()))).split("\n", 1)[1]))`,
		map[string]any{"baseurl": "http://mirror.corp/el9/$basearch", "enabled": true, "gpgcheck": false, "gpg_key": []string{"http://mirror.corp/k1", "http://mirror.corp/k2"}, "priority": 10, "name": "Corp EL9"}, &want)
	if body != want {
		t.Errorf("my-repo.repo:\n got %q\nwant %q", body, want)
	}
	te.WantMode("/etc/yum.repos.d/my-repo.repo", 0o644, 0, 0)
	if te.Root.Exists("/etc/yum.repos.d/nourl.repo") || te.Read("/etc/yum.repos.d/exists.repo") != "keep\n" {
		t.Error("repo without baseurl written, or existing file replaced")
	}
}

func TestYumAddRepoHostile(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{"yum_repos: {'a]\\n[b': {baseurl: http://x}}", "yum_repos.a]"},
		{"yum_repos: {good: {baseurl: http://x}, bad: {baseurl: \"http://x\\n[main]\\ngpgcheck=0\"}}", "yum_repos.bad.baseurl"},
		{"yum_repos: {bad: {baseurl: http://x, 'gpg check': 0}}", "yum_repos.bad"},
		{"yum_repos: {bad: {baseurl: [\"a\\nb\"]}}", "yum_repos.bad.baseurl.0"},
		{"yum_repos: {a: {baseurl: x}}\nyum_repo_dir: ../../etc", "yum_repo_dir"},
	} {
		te := coretest.NewEnv(t, tc.cfg)
		err := YumAddRepo(context.Background(), te.Env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.cfg, err, tc.want)
		}
		if te.Root.Exists("/etc/yum.repos.d") {
			t.Errorf("%s: something written", tc.cfg)
		}
	}
}

const zypperYAML = `zypper:
  config:
    download.deltarpm: false
    solver.onlyRequires: true
    configdir: /elsewhere
    rpm.install.excludedocs: "yes"
  repos:
    - id: corp oss
      name: "Corp, OSS #1"
      baseurl: http://mirror.corp/oss
      gpgkey: [http://mirror.corp/k1, http://mirror.corp/k2]
      priority: 99
    - id: nourl
`

// TestZypperAddRepo: repo files and zypp.conf as cloud-init writes them;
// zypp.conf's block is not appended twice.
func TestZypperAddRepo(t *testing.T) {
	te := coretest.NewEnv(t, zypperYAML)
	te.Write(zyppConf, "[main]\n", 0o644)
	for i := 0; i < 2; i++ {
		if err := ZypperAddRepo(context.Background(), te.Env); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	coretest.CiOracle(t, `from cloudinit.config import cc_zypper_add_repo as z
from cloudinit import util
repo, conf = json.load(sys.stdin)
out = [z._format_repository_config("corp oss", dict(sorted(repo.items())))]
written = {}
util.load_file = lambda f: "[main]\n"
util.write_file = lambda f, c, *a, **k: written.update({f: c})
z._write_zypp_config(dict(sorted(conf.items())))
out.append(written["/etc/zypp/zypp.conf"])
print(json.dumps(out))`,
		[]any{
			map[string]any{"name": "Corp, OSS #1", "baseurl": "http://mirror.corp/oss", "gpgkey": []string{"http://mirror.corp/k1", "http://mirror.corp/k2"}, "priority": 99, "enabled": "1", "autorefresh": "1"},
			map[string]any{"download.deltarpm": false, "solver.onlyRequires": true, "configdir": "/elsewhere", "rpm.install.excludedocs": "yes"},
		}, &want)
	if got := te.Read("/etc/zypp/repos.d/corp_oss.repo"); got != want[0] {
		t.Errorf("corp_oss.repo:\n got %q\nwant %q", got, want[0])
	}
	if got := te.Read(zyppConf); got != want[1] {
		t.Errorf("zypp.conf:\n got %q\nwant %q", got, want[1])
	}
	if te.Root.Exists("/etc/zypp/repos.d/nourl.repo") {
		t.Error("repo without baseurl written")
	}
	for _, tc := range []struct{ in, want string }{
		{"", `""`}, {"plain", "plain"}, {"a,b", `"a,b"`}, {`say "hi"`, `'say "hi"'`}, {`"q`, `'"q'`}, {" x", `" x"`},
		{"a'b\"c", `'''a'b"c'''`}, {"a\n    b", "'''a\n    b'''"}, {"x#y", `"x#y"`},
	} {
		if got := configobjQuote(tc.in); got != tc.want {
			t.Errorf("configobjQuote(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestZypperAddRepoHostile(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{"zypper: {repos: [{id: 'a]', baseurl: http://x}]}", "zypper.repos.0.id"},
		{"zypper: {repos: [{id: a, baseurl: \"http://x\\n[b]\"}]}", "zypper.repos.0.baseurl"},
		{"zypper: {config: {'a=b': c}, repos: [{id: a, baseurl: http://x}]}", "zypper.config"},
		{"zypper: {config: {a: \"b\\nc=d\"}, repos: [{id: a, baseurl: http://x}]}", "zypper.config.a"},
		{"zypper: {config: {reposdir: /etc/../../x}, repos: [{id: a, baseurl: http://x}]}", "reposdir"},
	} {
		te := coretest.NewEnv(t, tc.cfg)
		te.Write(zyppConf, "[main]\n", 0o644)
		err := ZypperAddRepo(context.Background(), te.Env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.cfg, err, tc.want)
		}
		if te.Root.Exists("/etc/zypp/repos.d") || te.Read(zyppConf) != "[main]\n" {
			t.Errorf("%s: something written", tc.cfg)
		}
	}
}
