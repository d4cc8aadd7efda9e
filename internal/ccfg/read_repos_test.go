package ccfg_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// The plain types the repos modules' keys had before their readings
// were types (read_repos.go): the schema is theirs still.
type (
	plainApt struct {
		PreserveSourcesList bool                      `yaml:"preserve_sources_list"`
		GenerateMirrorlists bool                      `yaml:"generate_mirrorlists"`
		DisableSuites       []string                  `yaml:"disable_suites" cc:"min=1,unique"`
		Primary             []plainAptMirror          `yaml:"primary" cc:"min=1"`
		Security            []plainAptMirror          `yaml:"security" cc:"min=1"`
		AddAptRepoMatch     string                    `yaml:"add_apt_repo_match"`
		DebconfSelections   ccfg.AptDebconf           `yaml:"debconf_selections"`
		SourcesList         string                    `yaml:"sources_list"`
		Conf                string                    `yaml:"conf"`
		HTTPSProxy          string                    `yaml:"https_proxy"`
		HTTPProxy           string                    `yaml:"http_proxy"`
		Proxy               string                    `yaml:"proxy"`
		FTPProxy            string                    `yaml:"ftp_proxy"`
		Sources             map[string]plainAptSource `yaml:"sources"`
	}
	plainAptMirror struct {
		Arches    []string `yaml:"arches" cc:"required,min=1"`
		URI       string   `yaml:"uri"`
		Search    []string `yaml:"search" cc:"min=1"`
		SearchDNS bool     `yaml:"search_dns"`
		KeyID     string   `yaml:"keyid"`
		Key       string   `yaml:"key"`
		Keyserver string   `yaml:"keyserver"`
	}
	plainAptSource struct {
		Source    string `yaml:"source"`
		KeyID     string `yaml:"keyid"`
		Key       string `yaml:"key"`
		Keyserver string `yaml:"keyserver"`
		Filename  string `yaml:"filename"`
		Append    bool   `yaml:"append" cc:"default=true"`
	}
	plainYumRepos map[string]ccfg.YumRepo
	plainZypper   struct {
		Repos  []ccfg.ZypperRepo `yaml:"repos" cc:"min=1"`
		Config map[string]any    `yaml:"config"`
	}
	plainAPKRepos struct {
		PreserveRepositories bool             `yaml:"preserve_repositories"`
		AlpineRepo           *plainAlpineRepo `yaml:"alpine_repo" cc:"null"`
		LocalRepoBaseURL     *string          `yaml:"local_repo_base_url"`
	}
	plainAlpineRepo struct {
		BaseURL          *string `yaml:"base_url"`
		CommunityEnabled bool    `yaml:"community_enabled" cc:"truthy"`
		TestingEnabled   bool    `yaml:"testing_enabled" cc:"truthy"`
		Version          string  `yaml:"version" cc:"required"`
	}
	plainWireguard struct {
		Interfaces     []plainWGInterface `yaml:"interfaces" cc:"required,min=1"`
		ReadinessProbe []string           `yaml:"readinessprobe" cc:"unique"`
	}
	plainWGInterface struct {
		Name       string `yaml:"name" cc:"required"`
		ConfigPath string `yaml:"config_path" cc:"required"`
		Content    string `yaml:"content" cc:"required"`
	}
	plainPackageMirror struct {
		Arches   any                `yaml:"arches"`
		Failsafe ccfg.MirrorsByKind `yaml:"failsafe"`
		Search   ccfg.MirrorsByKind `yaml:"search"`
	}
)

func (plainApt) Shape(s *ccfg.Schema)       { s.MinProps = 1 }
func (plainAptSource) Shape(s *ccfg.Schema) { s.MinProps = 1 }
func (plainYumRepos) Shape(s *ccfg.Schema)  { ccfg.YumRepos{}.Shape(s) }
func (plainZypper) Shape(s *ccfg.Schema)    { ccfg.Zypper{}.Shape(s) }
func (plainAPKRepos) Shape(s *ccfg.Schema)  { s.MinProps = 1 }
func (plainPackageMirror) Shape(s *ccfg.Schema) {
	ccfg.PackageMirror{}.Shape(s)
}

// TestReposReadingsKeepTheSchema: each key whose reading is a type of
// read_repos.go has the schema its plain type gave.
func TestReposReadingsKeepTheSchema(t *testing.T) {
	for _, tc := range []struct {
		key       string
		got, want reflect.Type
	}{
		{"apt", reflect.TypeFor[*ccfg.Apt](), reflect.TypeFor[plainApt]()},
		{"yum_repos", reflect.TypeFor[ccfg.YumRepos](), reflect.TypeFor[plainYumRepos]()},
		{"zypper", reflect.TypeFor[*ccfg.Zypper](), reflect.TypeFor[plainZypper]()},
		{"apk_repos", reflect.TypeFor[*ccfg.APKRepos](), reflect.TypeFor[plainAPKRepos]()},
		{"wireguard", reflect.TypeFor[*ccfg.Wireguard](), reflect.TypeFor[plainWireguard]()},
		{"packages", reflect.TypeFor[*ccfg.Packages](), reflect.TypeFor[[]any]()},
		{"system_info.package_mirrors", reflect.TypeFor[ccfg.PackageMirrors](), reflect.TypeFor[[]plainPackageMirror]()},
	} {
		if got, want := ccfg.Of(tc.got), ccfg.Of(tc.want); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: schema\n got %s\nwant %s", tc.key, dump(got), dump(want))
		}
	}
}

func dump(s *ccfg.Schema) string { return fmt.Sprintf("%+v", s) }

func decodeYAML(t *testing.T, doc string) map[string]any {
	t.Helper()
	raw, err := userdata.LoadYAML([]byte(doc))
	if err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return raw.(map[string]any)
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestReposFreeForm: a repository entry (or zypp.conf's settings) as
// given; what is not a map is its Err, never Decode's.
func TestReposFreeForm(t *testing.T) {
	type probe struct {
		F  ccfg.FreeForm[ccfg.YumRepo]   `yaml:"f"`
		FL []ccfg.FreeForm[ccfg.YumRepo] `yaml:"fl"`
	}
	for _, tc := range []struct {
		doc, want string
	}{
		{"f: {baseurl: [a, b], x: 1}", "F={map[baseurl:[a b] x:1] <nil>}"},
		{"f: ''", "F={map[] p.f: want a map, got a string}"},
		{"fl: [~, {a: 1}]", "FL=[{map[] p.fl.0: want a map, got null} {map[a:1] <nil>}]"},
	} {
		var p probe
		if err := ccfg.DecodeValue(decodeYAML(t, tc.doc), "p", &p); err != nil {
			t.Errorf("%s: Decode fails: %v", tc.doc, err)
			continue
		}
		got := fmt.Sprintf("F=%v", p.F)
		if strings.HasPrefix(tc.doc, "fl:") {
			got = fmt.Sprintf("FL=%v", p.FL)
		}
		if got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.doc, got, tc.want)
		}
	}
}

// TestReposKeyReadings: the keys' own readings: what stays for the
// module to check, and the few errors Decode gives.
func TestReposKeyReadings(t *testing.T) {
	t.Run("apt", func(t *testing.T) {
		cfg := decodeYAML(t, `apt:
  preserve_sources_list: maybe
  primary: [x, {arches: default, uri: [u]}]
  security: nope
  sources: {a: ~, b: {source: 1, append: maybe}}
  debconf_selections: {b: 1, a: ~}
  add_apt_repo_match: ~
  proxy: 8080
  disable_suites: {a: b}
`)
		a, ok, err := ccfg.Decode[*ccfg.Apt](cfg, "apt")
		if !ok || err != nil {
			t.Fatalf("Decode: %v %v", ok, err)
		}
		arches, _ := a.Primary[1].Arches.Strings("", false)
		_, suitesErr := a.DisableSuites.Strings("apt.disable_suites", false)
		for _, c := range []struct{ what, got, want string }{
			{"preserve_sources_list (not false)", fmt.Sprint(*a.PreserveSourcesList), "true"},
			{"primary", fmt.Sprintf("%v %v %s", a.Primary[0] == nil, arches, a.Primary[1].URI.Str()), "true [default] [u]"},
			{"security", errText(a.Err("security")), "apt.security: want a list of mirror entries"},
			{"sources.a", errText(a.Sources["a"].Err), "apt.sources.a: want a map, got null"},
			{"sources.b", fmt.Sprint(a.Sources["b"].Append, " ", a.Sources["b"].Source), "true a number"},
			{"debconf_selections", errText(a.Err("debconf_selections")), "apt.debconf_selections.a: want a string, got null"},
			{"add_apt_repo_match", fmt.Sprint(a.AddAptRepoMatch.Given(), a.AddAptRepoMatch.Set()), "true false"},
			{"proxy", a.Proxy.Str(), "8080"},
			{"disable_suites", errText(suitesErr), "apt.disable_suites: want a string or a list of strings, got a map"},
			{"sources (no error)", errText(a.Err("sources")), ""},
		} {
			if c.got != c.want {
				t.Errorf("%s: got %q, want %q", c.what, c.got, c.want)
			}
		}
		a, _, _ = ccfg.Decode[*ccfg.Apt](decodeYAML(t, "apt: {preserve_sources_list: off, sources: []}"), "apt")
		if *a.PreserveSourcesList || a.PreserveSourcesList == nil || errText(a.Err("sources")) != "apt.sources: want a map of entries, got a list" {
			t.Errorf("off, sources []: %v %v", *a.PreserveSourcesList, a.Err("sources"))
		}
		if _, _, err := ccfg.Decode[*ccfg.Apt](decodeYAML(t, "apt: [x]"), "apt"); errText(err) != "apt: want a map, got a list" {
			t.Errorf("apt: [x]: %v", err)
		}
	})
	t.Run("apk_repos", func(t *testing.T) {
		for _, tc := range []struct{ doc, want string }{
			{"apk_repos: ~", "given false"},
			{"apk_repos: {}", "given false"},
			{"apk_repos: ''", "given false"},
			{"apk_repos: 0", "given false"},
			{"apk_repos: [x]", "error apk_repos: want a map, got a list"},
			{"apk_repos: {local_repo_base_url: ~}", "repo false; local  apk_repos.local_repo_base_url: want a string, got null"},
			{"apk_repos: {alpine_repo: ''}", "repo false; local  <nil>"},
			{"apk_repos: {alpine_repo: v3}", "repo true apk_repos.alpine_repo: want a map, got a string; local  <nil>"},
			{"apk_repos: {alpine_repo: {version: 0}}", "repo true <nil> version false 0 <nil> base https://m <nil>; local  <nil>"},
			{"apk_repos: {alpine_repo: {version: 3.0, base_url: ~}}", "repo true <nil> version true 3.0 <nil> base  apk_repos.alpine_repo.base_url: want a string, got null; local  <nil>"},
			{"apk_repos: {alpine_repo: {version: true}}", "repo true <nil> version true  apk_repos.alpine_repo.version: want a string, got a boolean base https://m <nil>; local  <nil>"},
			{"apk_repos: {alpine_repo: {version: 1.0e+20}}", "repo true <nil> version true 1e+20 <nil> base https://m <nil>; local  <nil>"},
		} {
			a, _, err := ccfg.Decode[*ccfg.APKRepos](decodeYAML(t, tc.doc), "apk_repos")
			got := fmt.Sprint("given ", a.Given())
			switch {
			case err != nil:
				got = "error " + err.Error()
			case a.Given():
				r := a.AlpineRepo
				got = fmt.Sprint("repo ", r.Given())
				if r.Given() {
					got += fmt.Sprint(" ", r.Err)
				}
				if r.Given() && r.Err == nil {
					v, verr := r.Version.Text("")
					b, berr := r.BaseURL.Text("https://m")
					got += fmt.Sprint(" version ", r.Version.Truthy(), " ", v, " ", verr, " base ", b, " ", berr)
				}
				l, lerr := a.LocalRepoBaseURL.Text("")
				got += fmt.Sprint("; local ", l, " ", lerr)
			}
			if got != tc.want {
				t.Errorf("%s:\n got %s\nwant %s", tc.doc, got, tc.want)
			}
		}
	})
	t.Run("wireguard", func(t *testing.T) {
		w, _, err := ccfg.Decode[*ccfg.Wireguard](decodeYAML(t, "wireguard: {interfaces: [x, {name: 1, content: c}, {name: n, config_path: p, content: c}], readinessprobe: {a: b}}"), "wireguard")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, i := range w.Interfaces {
			got = append(got, fmt.Sprint(i.Name, "|", i.ConfigPath, "|", i.Err))
		}
		_, err = w.ReadinessProbe.Strings("wireguard.readinessprobe", false)
		got = append(got, errText(err))
		want := []string{
			"||wireguard.interfaces.0: want a map, got a string",
			"||wireguard.interfaces.1.name: want a string, got a number\nwireguard.interfaces.1.config_path: missing",
			"n|p|<nil>",
			"wireguard.readinessprobe: want a string or a list of strings, got a map",
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %q\nwant %q", got, want)
		}
		if _, _, err := ccfg.Decode[*ccfg.Wireguard](decodeYAML(t, "wireguard: {interfaces: x}"), "wireguard"); errText(err) != "wireguard.interfaces: want a list, got a string" {
			t.Errorf("interfaces: x: %v", err)
		}
	})
	t.Run("packages", func(t *testing.T) {
		for doc, empty := range map[string]bool{
			"packages: ~": true, "packages: []": true, "packages: ''": true, "x: 1": true,
			"packages: [a]": false, "packages: a": false, "packages: {apt: [a]}": false, "packages: 0": false,
		} {
			p, _, err := ccfg.Decode[*ccfg.Packages](decodeYAML(t, doc), "packages")
			if err != nil || p.Empty() != empty {
				t.Errorf("%s: %v, empty %v, want %v", doc, err, p.Empty(), empty)
			}
		}
	})
	t.Run("system_info.package_mirrors", func(t *testing.T) {
		si, _, err := ccfg.Decode[*ccfg.SystemInfo](decodeYAML(t, `system_info:
  package_mirrors:
    - x
    - {arches: {a: 1}, failsafe: [p], search: s}
    - arches: amd64
      failsafe: {primary: 1, security: ~, extra: e}
      search: {primary: [' a ', b], security: 3}
`), "system_info")
		if err != nil {
			t.Fatal(err)
		}
		got := fmt.Sprint(si.PackageMirrors)
		want := "[{[] map[] map[]} {[amd64] map[extra:e primary:1 security:<nil>] map[primary:[a b] security:[]]}]"
		if got != want {
			t.Errorf("got %s\nwant %s", got, want)
		}
		// The key's error is its own (SystemInfo.Err), not system_info's.
		if si, _, err := ccfg.Decode[*ccfg.SystemInfo](decodeYAML(t, "system_info: {package_mirrors: 1}"), "system_info"); err != nil || errText(si.Err("package_mirrors")) != "system_info.package_mirrors: want a list, got a number" {
			t.Errorf("package_mirrors: 1: %v", err)
		}
	})
	t.Run("yum and zypper", func(t *testing.T) {
		y, _, err := ccfg.Decode[ccfg.YumRepos](decodeYAML(t, "yum_repos: {a: ~, b: x}"), "yum_repos")
		if err != nil || y["a"].Map != nil || y["a"].Err != nil || errText(y["b"].Err) != "yum_repos.b: want a map, got a string" {
			t.Errorf("yum_repos: %v %v", err, y)
		}
		z, _, err := ccfg.Decode[*ccfg.Zypper](decodeYAML(t, "zypper: {config: x}"), "zypper")
		if err != nil || errText(z.Config.Err) != "zypper.config: want a map, got a string" {
			t.Errorf("zypper.config: %v %v", err, z)
		}
		if _, _, err := ccfg.Decode[*ccfg.Zypper](decodeYAML(t, "zypper: {repos: x}"), "zypper"); errText(err) != "zypper.repos: want a list, got a string" {
			t.Errorf("zypper.repos: x: %v", err)
		}
	})
}

// reposOracle answers, for each value v, what cloud-init's modules make
// of it: Python's bool(v) (cc_apk_configure's `if not apk_section`,
// `if not alpine_repo`, `if not alpine_version`), what its jinja
// template prints of it (apk's version and URLs), and str(v) (a text a
// module formats: apt's proxies, conf, keyid).
const reposOracle = `
from cloudinit import util, templater
out = []
for doc in json.load(sys.stdin):
    v = util.load_yaml(doc)["k"]
    out.append({"truthy": bool(v), "str": str(v),
                "jinja": templater.render_string("## template: jinja\n{{ v }}", {"v": v})})
json.dump(out, sys.stdout)
`

// TestReposReadingsAsCloudInit holds the readings that are cloud-init's
// to its own Python: the truth of apk_repos, alpine_repo and version
// (APKRepos.Given, AlpineRepo.Given, APKText.Truthy), the template's
// printing of a version or URL (APKText.Text; what earlyinit refuses
// instead is listed), and str() of a scalar (PyString.Str, apt's text).
func TestReposReadingsAsCloudInit(t *testing.T) {
	values := []string{
		"v3.12", "''", "' '", "edge", "0", "1", "-3", "3.12", "3.0", "3", "1e20", "1.0e+20", "0.0", "1.5e-7",
		"true", "false", "yes", "~", "[]", "[a]", "{}", "{a: 1}", "'0'", "2001-01-01",
	}
	// Values the template prints and earlyinit's module refuses: not a
	// version or URL.
	refused := map[string]bool{"true": true, "false": true, "yes": true, "~": true, "[]": true, "[a]": true, "{}": true, "{a: 1}": true}
	type answer struct {
		Truthy bool   `json:"truthy"`
		Str    string `json:"str"`
		Jinja  string `json:"jinja"`
	}
	oracleValues(t, reposOracle, values, func(v string, x any, _ bool, w answer) {
		sec, _, err := ccfg.Decode[*ccfg.APKRepos](map[string]any{"apk_repos": x}, "apk_repos")
		if given := sec.Given() || err != nil; given != w.Truthy {
			t.Errorf("apk_repos: %s: given %v (%v), cloud-init's truth %v", v, given, err, w.Truthy)
		}
		var ar struct {
			R *ccfg.AlpineRepo `yaml:"r"`
			T ccfg.APKText     `yaml:"t"`
			S ccfg.PyString    `yaml:"s"`
		}
		if err := ccfg.DecodeValue(map[string]any{"r": x, "t": x, "s": x}, "k", &ar); err != nil {
			t.Fatalf("%s: %v", v, err)
		}
		if ar.R.Given() != w.Truthy {
			t.Errorf("alpine_repo: %s: given %v, cloud-init's truth %v", v, ar.R.Given(), w.Truthy)
		}
		if x == nil {
			// Null as a field: the key not given (a module reads it so;
			// APKRepos and AlpineRepo take a null URL as given).
			ar.T.DecodeCC(nil, "k.t")
		}
		if ar.T.Truthy() != w.Truthy {
			t.Errorf("version: %s: truthy %v, cloud-init's %v", v, ar.T.Truthy(), w.Truthy)
		}
		text, terr := ar.T.Text("")
		switch {
		case refused[v]:
			if terr == nil {
				t.Errorf("version: %s: printed %q, want refused (cloud-init prints %q)", v, text, w.Jinja)
			}
		case terr != nil || text != w.Jinja:
			t.Errorf("version: %s: printed %q (%v), cloud-init %q", v, text, terr, w.Jinja)
		}
		if _, isColl := x.(map[string]any); x != nil && !isColl {
			if _, isList := x.([]any); !isList && ar.S.Str() != w.Str {
				t.Errorf("text: %s: %q, cloud-init's str() %q", v, ar.S.Str(), w.Str)
			}
		}
	})
}
