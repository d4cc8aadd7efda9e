package repos

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// yumDriver runs cloud-init 22.4's cc_yum_add_repo.handle on each
// document, its yum_repo_dir a directory of its own, and prints the
// .repo files it wrote, their first line (the dated header) dropped.
const yumDriver = `
import os, tempfile
from cloudinit import util
from cloudinit.config import cc_yum_add_repo
out = []
for doc in json.load(sys.stdin):
    d = tempfile.mkdtemp()
    cfg = util.load_yaml(doc)
    cfg["yum_repo_dir"] = d
    try:
        cc_yum_add_repo.handle("yum_add_repo", cfg, None, logging.getLogger(), [])
        out.append({n: open(os.path.join(d, n)).read().split("\n", 1)[1] for n in os.listdir(d)})
    except Exception as e:
        out.append({"ERROR": type(e).__name__})
print(json.dumps(out))
`

// repoOptionsOf reads a .repo file's text (its header line dropped) as
// "[section]" and "key = value" entries, a value's continuation lines
// with it, in a map: earlyinit writes the options sorted, cloud-init in
// the YAML's order, which a merged map does not keep.
func repoOptionsOf(text string) map[string]string {
	m := map[string]string{}
	section, last := "", ""
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "["):
			section = l
			m[section] = ""
		case strings.HasPrefix(l, "\t") && last != "":
			m[last] += "\n" + l
		case strings.Contains(l, " = "):
			k, v, _ := strings.Cut(l, " = ")
			last = section + k
			m[last] = v
		case l != "":
			m["junk "+l] = l
		}
	}
	return m
}

// TestYumReposAsCloudInit: the .repo files yum_add_repo writes have the
// names, sections, options and values (booleans as 1/0, lists one item a
// line) cloud-init's cc_yum_add_repo writes for the same yum_repos.
func TestYumReposAsCloudInit(t *testing.T) {
	docs := []string{
		"yum_repos: {epel: {baseurl: 'http://example.com/epel/$releasever/$basearch', name: EPEL, enabled: true, gpgcheck: false}}",
		"yum_repos: {my repo: {baseurl: http://example.com/r, Enabled: 1, gpg-key: http://example.com/key}}",
		"yum_repos: {multi: {baseurl: [http://a.example/r, http://b.example/r], priority: 10, cost: 1.5}}",
		"yum_repos: {a: {baseurl: http://a.example}, b: {name: no baseurl}}",
		"yum_repos: {x: {baseurl: http://x.example, ' Skip_If_Unavailable ': yes, proxy: null}}",
		"yum_repos: {empty: null}",
	}
	var want []map[string]string
	oracle.Run(t, yumDriver, docs, &want)
	if len(want) != len(docs) {
		t.Fatalf("%d answers for %d documents", len(want), len(docs))
	}
	if !strings.Contains(want[0]["epel.repo"], "gpgcheck = 0") || want[1]["my-repo.repo"] == "" || len(want[3]) != 1 {
		t.Fatalf("the oracle's files are not what the cases are about: %q", want)
	}
	for i, doc := range docs {
		te := coretest.NewEnv(t, doc)
		err := te.RunFunc(YumAddRepo)
		got := map[string]string{}
		names, _ := filepath.Glob(filepath.Join(te.Dir, "etc/yum.repos.d/*.repo"))
		for _, n := range names {
			b, rerr := os.ReadFile(n)
			if rerr != nil {
				t.Fatal(rerr)
			}
			_, rest, _ := strings.Cut(string(b), "\n")
			got[filepath.Base(n)] = rest
		}
		if _, failed := want[i]["ERROR"]; failed != (err != nil) {
			t.Errorf("%s: earlyinit error %v, cloud-init %v", doc, err, want[i])
			continue
		}
		if len(got) != len(want[i]) && !(err != nil) {
			t.Errorf("%s: earlyinit wrote %q, cloud-init %q", doc, slicesKeys(got), slicesKeys(want[i]))
		}
		for name, w := range want[i] {
			if name == "ERROR" {
				continue
			}
			if g, ok := got[name]; !ok || !maps.Equal(repoOptionsOf(g), repoOptionsOf(w)) {
				t.Errorf("%s: %s:\nearlyinit  %q\ncloud-init %q", doc, name, g, w)
			}
		}
	}
}

func slicesKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
