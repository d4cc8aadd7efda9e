package system

import (
	"slices"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// resolvDriver runs cloud-init 22.4's cc_resolv_conf.generate_resolv_conf
// with the package's own resolv.conf.tmpl on each document's resolv_conf,
// read by cloud-init's YAML loader.
const resolvDriver = `
import os, tempfile
from cloudinit import util
from cloudinit.config import cc_resolv_conf
out = []
for doc in json.load(sys.stdin):
    fn = os.path.join(tempfile.mkdtemp(), "resolv.conf")
    try:
        cc_resolv_conf.generate_resolv_conf("/etc/cloud/templates/resolv.conf.tmpl", util.load_yaml(doc)["resolv_conf"], fn)
        out.append(open(fn).read())
    except Exception as e:
        out.append("ERROR " + type(e).__name__)
print(json.dumps(out))
`

// directives are a resolv.conf's lines that mean something, their words
// single-spaced, an options line's sorted: resolv.conf(5) reads blank
// lines, comments and runs of blanks as nothing.
func directives(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if f := strings.Fields(l); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			if f[0] == "options" {
				// Options mean the same in any order; cloud-init
				// writes flags in the YAML's order, which a merged
				// map does not keep.
				slices.Sort(f[1:])
			}
			out = append(out, strings.Join(f, " "))
		}
	}
	return out
}

// TestResolvConfAsCloudInit: with manage_resolv_conf, /etc/resolv.conf says
// what cloud-init's own template says for the same resolv_conf (the same
// directives, words and order; its blank lines and trailing blanks
// aside).
func TestResolvConfAsCloudInit(t *testing.T) {
	docs := []string{
		"resolv_conf: {nameservers: [10.0.0.1, 10.0.0.2]}",
		"resolv_conf: {nameservers: [10.0.0.1], searchdomains: [a.example, b.example], domain: example.com}",
		"resolv_conf: {sortlist: [10.0.0.0/255.0.0.0, 192.168.0.0/16]}",
		"resolv_conf: {nameservers: ['::1'], options: {rotate: true, timeout: 1, attempts: 2, edns0: false}}",
		"resolv_conf: {options: {rotate: true}}",
		"resolv_conf: {options: {ndots: 2}}",
		"resolv_conf: {options: {debug: false}}",
		"resolv_conf: {nameservers: [1.1.1.1], searchdomains: [x.example], domain: x.example, sortlist: [1.2.3.4], options: {inet6: true, 'timeout': 3}}",
		"resolv_conf: {domain: example.com}",
		"resolv_conf: {options: {timeout: 1.5}}",
		"resolv_conf: {options: {rotate: true, inet6: true, ndots: 1}}",
	}
	var want []string
	oracle.Run(t, resolvDriver, docs, &want)
	if len(want) != len(docs) {
		t.Fatalf("%d answers for %d documents", len(want), len(docs))
	}
	for i, doc := range docs {
		te := coretest.NewEnv(t, doc)
		var rc ccfg.ResolvConf
		if err := ccfg.DecodeValue(te.Cfg["resolv_conf"], "resolv_conf", &rc); err != nil {
			t.Fatal(err)
		}
		got, err := renderResolvConf(rc)
		if strings.HasPrefix(want[i], "ERROR ") {
			t.Errorf("%s: cloud-init fails (%s)", doc, want[i])
			continue
		}
		if err != nil || !slices.Equal(directives(got), directives(want[i])) {
			t.Errorf("%s:\nearlyinit  %q (%v)\ncloud-init %q", doc, directives(got), err, directives(want[i]))
		}
	}
}

func TestResolvConf(t *testing.T) {
	te := coretest.NewEnv(t, `manage_resolv_conf: true
resolv_conf:
  nameservers: [8.8.8.8, 1.1.1.1]
  searchdomains: [a.example, b.example]
  domain: example.com
  sortlist: [10.0.0.0/8]
  options: {rotate: true, debug: false, timeout: 1}
`)
	te.Root.Symlink("../run/systemd/resolve/stub-resolv.conf", "/etc/resolv.conf")
	te.Write("/run/systemd/resolve/stub-resolv.conf", "stub", 0o644)
	if err := te.RunFunc(ResolvConf); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/etc/resolv.conf", "# Written by earlyinit from cloud-config's resolv_conf (manage_resolv_conf: true).\nnameserver 8.8.8.8\nnameserver 1.1.1.1\nsearch a.example b.example\ndomain example.com\nsortlist 10.0.0.0/8\noptions rotate timeout:1\n", 0o644, 0, 0)
	if te.Read("/run/systemd/resolve/stub-resolv.conf") != "stub" {
		t.Error("wrote through the symlink")
	}
	if _, err := renderResolvConf(ccfg.ResolvConf{Domain: "x\nnameserver 6.6.6.6\nbad"}); err == nil {
		t.Error("newline in a value accepted")
	}
}
