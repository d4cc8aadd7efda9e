package system

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// hostsDriver renders cloud-init 22.4's own /etc/hosts templates (the
// package's, /etc/cloud/templates/hosts.FAMILY.tmpl) with its templater,
// and runs its distros' update_etc_hosts (Debian's and RHEL's classes) on
// each /etc/hosts given, in a file of its own.
const hostsDriver = `
import os, tempfile
from cloudinit import helpers, templater
from cloudinit.distros import debian, rhel
inp = json.load(sys.stdin)
out = {"templates": {}, "localhost": []}
for fam in inp["families"]:
    out["templates"][fam] = templater.render_from_file("/etc/cloud/templates/hosts.%s.tmpl" % fam, {"hostname": inp["hostname"], "fqdn": inp["fqdn"]})
classes = {"debian": debian.Distro, "redhat": rhel.Distro}
for c in inp["localhost"]:
    d = classes[c["family"]](c["family"], {}, helpers.Paths({}))
    fn = os.path.join(tempfile.mkdtemp(), "hosts")
    if c["old"] is not None:
        with open(fn, "w") as f:
            f.write(c["old"])
    d.hosts_fn = fn
    d.update_etc_hosts(inp["hostname"], inp["fqdn"])
    out["localhost"].append(open(fn).read() if os.path.exists(fn) else None)
print(json.dumps(out))
`

// dropComments drops the comment lines at the top: cloud-init's name its
// template file, earlyinit's do not.
func dropComments(s string) string {
	for strings.HasPrefix(s, "#") {
		_, s, _ = strings.Cut(s, "\n")
	}
	return s
}

// TestHostsAsCloudInit: manage_etc_hosts writes what cloud-init 22.4
// writes on the root's distribution. true: the family's template, the
// same lines as cloud-init's own template renders but for the comments at
// the top. localhost: cloud-init's update_etc_hosts edit, with the
// family's address (127.0.1.1 on Debian, 127.0.0.1 on RHEL), but for the
// header line cloud-init puts in a new file and the empty line it adds at
// the end of the file at each change.
func TestHostsAsCloudInit(t *testing.T) {
	const short, fqdn = "h1", "h1.example.com"
	families := map[string]string{"debian": core.FamilyDebian, "redhat": core.FamilyRHEL, "suse": core.FamilySUSE, "alpine": core.FamilyAlpine}
	olds := []any{
		nil,
		"",
		"127.0.0.1 localhost\n",
		"127.0.0.1\tlocalhost\n::1 localhost ip6-localhost   # v6\n\n# a comment\n127.0.1.1 old.example.com old\n10.0.0.5 db\n",
		"127.0.1.1 h1.example.com h1\n",
		"127.0.1.1 h1.example.com other h1 # mine\n",
		"127.0.1.1 h1 h1.example.com\n",
		"127.0.0.1 localhost localhost.localdomain localhost4 localhost4.localdomain4\n::1 localhost localhost.localdomain localhost6 localhost6.localdomain6\n",
		"127.0.0.1 h1.example.com h1\n127.0.0.1 localhost\n",
		"127.0.1.1\n127.0.0.1\n",
	}
	var cases []map[string]any
	for _, fam := range []string{"debian", "redhat"} {
		for _, o := range olds {
			cases = append(cases, map[string]any{"family": fam, "old": o})
		}
	}
	in := map[string]any{"hostname": short, "fqdn": fqdn, "families": []string{"debian", "redhat", "suse", "alpine"}, "localhost": cases}
	var want struct {
		Templates map[string]string
		Localhost []*string
	}
	oracle.Run(t, hostsDriver, in, &want)
	for name, fam := range families {
		got, err := renderHosts(fam, fqdn, short)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := dropComments(string(got)), dropComments(want.Templates[name]); g != w || !strings.Contains(g, fqdn) {
			t.Errorf("hosts.%s.tmpl:\nearlyinit:\n%s\ncloud-init:\n%s", name, g, w)
		}
	}
	if len(want.Localhost) != len(cases) {
		t.Fatalf("%d answers for %d cases", len(want.Localhost), len(cases))
	}
	for i, c := range cases {
		fam := families[c["family"].(string)]
		_, ip := hostsFamily(fam)
		var old []byte
		if s, ok := c["old"].(string); ok {
			old = []byte(s)
		}
		got, changed := updateHostsEntry(old, ip, fqdn, short)
		w := ""
		if want.Localhost[i] != nil {
			w = *want.Localhost[i]
		}
		if c["old"] == nil {
			_, w, _ = strings.Cut(w, "\n") // cloud-init's "# Added by cloud-init v. ... on DATE"
		}
		if changed {
			w = strings.TrimSuffix(w, "\n") // the empty line it adds
		}
		if string(got) != w {
			t.Errorf("%s, /etc/hosts %q (changed %v):\nearlyinit  %q\ncloud-init %q", c["family"], c["old"], changed, got, w)
		}
	}
}
