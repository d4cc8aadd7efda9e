package repos

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// apkOracle is cloud-init 22.4.2's cc_apk_configure.handle run on each
// configuration, its template rendered where it would write
// /etc/apk/repositories: the text, or "" when it writes nothing.
const apkOracle = `
import tempfile
from cloudinit import templater
from cloudinit.config import cc_apk_configure as m
m.temp_utils.mkstemp = lambda prefix="", suffix="": tempfile.mkstemp(prefix=prefix, suffix=suffix)
res = []
for cfg in json.load(sys.stdin):
    out = []
    m.templater.render_to_file = lambda fn, outfn, params: out.append(templater.render_from_file(fn, params))
    m.handle("apk_configure", cfg, None, None, [])
    res.append("".join(out))
json.dump(res, sys.stdout)
`

func TestAPKConfigureMatchesCloudInit(t *testing.T) {
	cases := []string{
		"apk_repos:\n  alpine_repo:\n    version: 'v3.12'",
		"apk_repos:\n  alpine_repo:\n    version: 'v3.12'\n    community_enabled: true",
		"apk_repos:\n  alpine_repo:\n    version: 'v3.19'\n    testing_enabled: true\n  local_repo_base_url: 'https://my-local-server/local-alpine'",
		"apk_repos:\n  alpine_repo:\n    base_url: 'https://some-alpine-mirror/alpine'\n    community_enabled: true\n    testing_enabled: true\n    version: 'edge'\n  local_repo_base_url: 'https://my-local-server/local-alpine'",
		"apk_repos:\n  alpine_repo:\n    base_url: /media/cdrom/apks\n    version: edge\n    testing_enabled: true",
		"apk_repos:\n  alpine_repo:\n    version: 3.12",
		"apk_repos:\n  alpine_repo:\n    version: 3.12\n    testing_enabled: 1",
		"apk_repos:\n  alpine_repo:\n    version: 3",
		// Jinja's truth: a non-empty string is true.
		"apk_repos:\n  alpine_repo:\n    version: v3.18\n    community_enabled: 'false'\n    testing_enabled: false",
		"apk_repos:\n  local_repo_base_url: ''\n  alpine_repo:\n    version: v3.18",
		// Nothing written.
		"apk_repos:\n  preserve_repositories: true\n  alpine_repo:\n    version: v3.12",
		"apk_repos:\n  alpine_repo:\n    community_enabled: true",
		"apk_repos:\n  alpine_repo:\n    version: ''",
		"apk_repos:\n  local_repo_base_url: http://x",
		"apk_repos:\n  alpine_repo:",
		"apk_repos: {}",
		"packages: [vim]",
	}
	var envs []*coretest.Env
	var cfgs []map[string]any
	for _, cfg := range cases {
		te := coretest.NewEnv(t, cfg)
		te.Write("/etc/os-release", "ID=alpine\nVERSION_ID=3.19.1\n", 0o644)
		envs, cfgs = append(envs, te), append(cfgs, te.Cfg)
	}
	var wants []string
	coretest.CiOracle(t, apkOracle, cfgs, &wants)
	if len(wants) != len(cases) {
		t.Fatalf("oracle gave %d answers for %d cases", len(wants), len(cases))
	}
	for i, cfg := range cases {
		te, want := envs[i], wants[i]
		if err := te.RunFunc(ApkConfigure); err != nil {
			t.Errorf("%q: %v", cfg, err)
			continue
		}
		if want == "" {
			if te.Root.Exists(apkReposFile) {
				t.Errorf("%q: cloud-init writes nothing, earlyinit wrote:\n%s", cfg, te.Read(apkReposFile))
			}
			continue
		}
		te.WantFile(apkReposFile, want, 0o644, 0, 0)
	}
}

// A YAML float prints as Python's str does (JSON, the oracle's input,
// cannot tell 3.0 from 3).
func TestAPKConfigureFloatVersion(t *testing.T) {
	te := coretest.NewEnv(t, "system_info: {distro: alpine}\napk_repos:\n  alpine_repo:\n    version: 3.0")
	if err := te.RunFunc(ApkConfigure); err != nil {
		t.Fatal(err)
	}
	if got := te.Read(apkReposFile); !strings.Contains(got, "/alpine/3.0/main\n") {
		t.Errorf("repositories %q", got)
	}
}

func TestAPKConfigureRefuses(t *testing.T) {
	const old = "http://dl-cdn.alpinelinux.org/alpine/v3.19/main\n"
	for _, tc := range []struct{ cfg, key string }{
		{"apk_repos:\n  alpine_repo:\n    version: v3.12\n    base_url: \"https://a/alpine\\nhttps://evil/alpine\"", "apk_repos.alpine_repo.base_url"},
		{"apk_repos:\n  alpine_repo:\n    version: \"v3.12\\n@evil https://evil\"", "apk_repos.alpine_repo.version"},
		{"apk_repos:\n  alpine_repo:\n    version: v3.12 main", "apk_repos.alpine_repo.version"},
		{"apk_repos:\n  alpine_repo:\n    version: v3.12\n  local_repo_base_url: --allow-untrusted", "apk_repos.local_repo_base_url"},
		{"apk_repos:\n  alpine_repo:\n    version: v3.12\n  local_repo_base_url: \"http://l\\r\"", "apk_repos.local_repo_base_url"},
		{"apk_repos:\n  alpine_repo:\n    version: v3.12\n    base_url: [http://a]", "apk_repos.alpine_repo.base_url"},
		{"apk_repos:\n  alpine_repo:\n    version: v3.12\n    base_url: relative/dir", "apk_repos.alpine_repo.base_url"},
		{"apk_repos:\n  alpine_repo:\n    version: [v3.12]", "apk_repos.alpine_repo.version"},
		{"apk_repos:\n  alpine_repo: v3.12", "apk_repos.alpine_repo"},
		{"apk_repos: [x]", "apk_repos"},
	} {
		te := coretest.NewEnv(t, tc.cfg)
		te.Write("/etc/os-release", "ID=alpine\n", 0o644)
		te.Write(apkReposFile, old, 0o644)
		err := te.RunFunc(ApkConfigure)
		if err == nil || !strings.HasPrefix(err.Error(), tc.key+":") {
			t.Errorf("%q: error %v, want one naming %s", tc.cfg, err, tc.key)
		}
		te.WantFile(apkReposFile, old, 0o644, 0, 0)
	}
}

func TestAPKConfigureOnlyOnAlpine(t *testing.T) {
	te := coretest.NewEnv(t, "apk_repos:\n  alpine_repo:\n    version: v3.12")
	te.Write("/etc/os-release", "ID=debian\nVERSION_ID=12\n", 0o644)
	if err := te.RunFunc(ApkConfigure); err != nil {
		t.Fatal(err)
	}
	if te.Root.Exists(apkReposFile) {
		t.Error("repositories written on Debian")
	}
	if !strings.Contains(te.LogBuf.String(), "not Alpine") {
		t.Errorf("log %q does not say why", te.LogBuf.String())
	}
	// system_info.distro names the distribution too.
	te = coretest.NewEnv(t, "system_info:\n  distro: alpine\napk_repos:\n  alpine_repo:\n    version: edge")
	if err := te.RunFunc(ApkConfigure); err != nil {
		t.Fatal(err)
	}
	if got := te.Read(apkReposFile); !strings.Contains(got, apkDefaultMirror+"/edge/main\n") {
		t.Errorf("repositories %q", got)
	}
}
