package scripts

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// phoneHomeDriver runs cloud-init 22.4's cc_phone_home.handle on each
// case, the cloud's instance id and host names coming from its own
// DataSource.get_hostname over meta-data with the given local-hostname,
// the host keys from the given files, and the post recorded, not sent.
const phoneHomeDriver = `
import os, tempfile
from cloudinit import util, url_helper
from cloudinit.config import cc_phone_home
from cloudinit.sources import DataSource
inp = json.load(sys.stdin)
keys = {}
def load_file(p, *a, **k):
    if p not in keys:
        raise IOError("no such file: %s" % p)
    return keys[p]
util.load_file = load_file
util.fetch_ssl_details = lambda paths=None: None
posted = []
url_helper.read_file_or_url = lambda u, data=None, **kw: posted.append({"url": u, "data": data})
class DS:
    get_hostname = DataSource.get_hostname
class Cloud:
    paths = None
    def __init__(self, md): self.ds = DS(); self.ds.metadata = md
    def get_instance_id(self): return "iid-1"
    def get_hostname(self, fqdn=False, metadata_only=False): return self.ds.get_hostname(fqdn=fqdn)
out = []
for c in inp:
    keys.clear()
    keys.update({"/etc/ssh/ssh_host_%s_key.pub" % t: v for t, v in (c["keys"] or {}).items()})
    posted.clear()
    if c["sys"]:
        # No local-hostname: the running system's name, none in /etc/hosts.
        util.get_hostname = lambda: c["sys"]
        util.get_fqdn_from_hosts = lambda h, filename=None: None
    cc_phone_home.handle("phone_home", util.load_yaml(c["cfg"]), Cloud({"local-hostname": c["lh"]}), logging.getLogger(), [])
    out.append(posted[0] if posted else None)
print(json.dumps(out))
`

// TestPhoneHomeAsCloudInit: phone_home posts the fields cloud-init's
// cc_phone_home posts, with the same values (the datasource's host
// names, the host keys' files as they are, N/A for what is missing), to
// the same URL.
func TestPhoneHomeAsCloudInit(t *testing.T) {
	type tc struct {
		cfg, lh string
		keys    map[string]string
		sys     string // the running system's name, when lh is ""
	}
	cases := []tc{
		{"phone_home: {url: 'http://h.example/$INSTANCE_ID/'}", "web1.example.com", map[string]string{"rsa": "ssh-rsa AAAA r\n", "ed25519": "ssh-ed25519 BBBB e\n"}, ""},
		{"phone_home: {url: 'http://h.example/x', post: [hostname, fqdn, instance_id, pub_key_ecdsa, nope]}\nhostname: other\nfqdn: other.example.org", "web1.example.com", nil, ""},
		{"phone_home: {url: 'http://h.example/${INSTANCE_ID}', post: all}", "web1", map[string]string{"dsa": "ssh-dss CCCC\n"}, ""},
		{"phone_home: {url: 'http://h.example/', post: [fqdn]}", "web1.localdomain", nil, ""},
		{"phone_home: {url: 'http://h.example/', post: [hostname, fqdn]}", "10.1.2.3", nil, ""},
		{"phone_home: {url: 'http://h.example/', post: [hostname, fqdn]}", "", nil, "sysname"},
		{"phone_home: {url: 'http://h.example/', post: [hostname, fqdn]}", "", nil, "sys.example.net"},
		{"phone_home: {url: 'http://h.example/', post: [hostname, fqdn]}", "", nil, "sys.localdomain"},
	}
	coretest.ClearProxyEnv(t)
	var gotURL string
	var got url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotURL = "http://h.example" + r.URL.Path
		got, _ = url.ParseQuery(string(b))
	}))
	defer srv.Close()
	defer func(old func() (string, error)) { core.OsHostname = old }(core.OsHostname)
	var in []map[string]any
	for _, c := range cases {
		in = append(in, map[string]any{"cfg": c.cfg, "lh": c.lh, "keys": c.keys, "sys": c.sys})
	}
	var want []*struct {
		URL  string
		Data map[string]string
	}
	oracle.Run(t, phoneHomeDriver, in, &want)
	if len(want) != len(cases) {
		t.Fatalf("%d answers for %d cases", len(want), len(cases))
	}
	for i, c := range cases {
		if want[i] == nil {
			t.Fatalf("case %d: cloud-init posted nothing", i)
		}
		gotURL, got = "", nil
		te := coretest.NewEnv(t, strings.ReplaceAll(c.cfg, "http://h.example", srv.URL))
		te.Data = &instance.Data{LocalHostname: c.lh}
		core.OsHostname = func() (string, error) { return c.sys, nil }
		for k, v := range c.keys {
			te.Write("/etc/ssh/ssh_host_"+k+"_key.pub", v, 0o644)
		}
		if err := te.RunFunc(PhoneHome); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		w := want[i]
		same := gotURL == w.URL && len(got) == len(w.Data)
		for k, v := range w.Data {
			same = same && got.Get(k) == v && len(got[k]) == 1
		}
		if !same {
			t.Errorf("case %d (%s, local-hostname %s):\nearlyinit  %s %v\ncloud-init %s %v", i, c.cfg, c.lh, gotURL, got, w.URL, w.Data)
		}
	}
}

func TestPhoneHome(t *testing.T) {
	coretest.ClearProxyEnv(t) // a proxy of the machine's would get the posts
	var hits []url.Values
	var paths []string
	fail := 2
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		v, _ := url.ParseQuery(string(b))
		hits = append(hits, v)
		paths = append(paths, r.URL.Path)
		if fail > 0 {
			fail--
			w.WriteHeader(503)
		}
	}))
	defer srv.Close()
	// The fqdn posted is the datasource's, as cloud-init's
	// cloud.get_hostname(fqdn=True), not the fqdn key's
	// (TestPhoneHomeAsCloudInit).
	te := coretest.NewEnv(t, "phone_home: {url: '"+srv.URL+"/$INSTANCE_ID/', post: [instance_id, pub_key_rsa, fqdn, nope], tries: 5}\nfqdn: h.example")
	te.Data = &instance.Data{LocalHostname: "web1.example.com"}
	te.Write("/etc/ssh/ssh_host_rsa_key.pub", "ssh-rsa AAAA\n", 0o644)
	var slept []time.Duration
	te.Sleep = func(_ context.Context, d time.Duration) { slept = append(slept, d) }
	if err := te.RunFunc(PhoneHome); err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 || len(slept) != 2 || paths[2] != "/iid-1/" {
		t.Fatalf("hits %d slept %v paths %q", len(hits), slept, paths)
	}
	got := hits[2]
	if got.Get("instance_id") != "iid-1" || got.Get("pub_key_rsa") != "ssh-rsa AAAA\n" || got.Get("fqdn") != "web1.example.com" || got.Get("nope") != "N/A" || len(got) != 4 {
		t.Errorf("posted %v", got)
	}
	// Bounded: tries capped at 10, failure is not a module error.
	fail, hits = 100, nil
	te.Cfg["phone_home"] = map[string]any{"url": srv.URL, "tries": 1000}
	if err := te.RunFunc(PhoneHome); err != nil {
		t.Fatal(err)
	}
	if len(hits) != phoneHomeMaxTries {
		t.Errorf("%d tries", len(hits))
	}
}
