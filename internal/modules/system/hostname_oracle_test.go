package system

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// hostnameDriver runs cloud-init 22.4's util.get_hostname_fqdn on each
// config, the cloud's host names coming from its own
// DataSource.get_hostname over meta-data with the given local-hostname.
const hostnameDriver = `
from cloudinit import util
from cloudinit.sources import DataSource
class DS:
    get_hostname = DataSource.get_hostname
class Cloud:
    def __init__(self, md):
        self.ds = DS()
        self.ds.metadata = md
    def get_hostname(self, fqdn=False, metadata_only=False):
        return self.ds.get_hostname(fqdn=fqdn, metadata_only=metadata_only)
out = []
for c in json.load(sys.stdin):
    try:
        h, f, _ = util.get_hostname_fqdn(util.load_yaml(c["cfg"]) or {}, Cloud({"local-hostname": c["lh"]}))
        out.append({"hostname": h, "fqdn": f})
    except Exception as e:
        out.append({"error": type(e).__name__})
print(json.dumps(out))
`

// TestHostnamesAsCloudInit: the host name and fqdn set_hostname and
// update_hostname set are cloud-init's util.get_hostname_fqdn's, for the
// cloud-config keys (hostname, fqdn) and the datasource's local-hostname.
// (Without a local-hostname cloud-init falls back to the running
// system's name, which earlyinit leaves alone.)
func TestHostnamesAsCloudInit(t *testing.T) {
	type tc struct{ cfg, lh string }
	cases := []tc{
		{"{}", "host1"},
		{"{}", "host1.example.com"},
		{"{}", "Host1.Example.COM"},
		{"{}", "host1.localdomain"},
		{"{}", "host1.sub.localdomain"},
		{"{}", "10.1.2.3"},
		{"{}", "host1.example.com."},
		{"hostname: h2", "host1.example.com"},
		{"hostname: h2", "host1"},
		{"hostname: h2.example.org", "host1.example.com"},
		{"hostname: h2.", "host1.example.com"},
		{"fqdn: a.b.c", "host1.example.com"},
		{"fqdn: a.b.c\nhostname: x", "host1.example.com"},
		{"fqdn: a", "host1.example.com"},
		{"fqdn: a.localdomain", "host1"},
		{"hostname: h2.localdomain", "host1"},
		{"hostname: h2", "10.1.2.3"},
	}
	var in []map[string]string
	for _, c := range cases {
		in = append(in, map[string]string{"cfg": c.cfg, "lh": c.lh})
	}
	var want []struct{ Hostname, Fqdn, Error string }
	oracle.Run(t, hostnameDriver, in, &want)
	if len(want) != len(cases) {
		t.Fatalf("%d answers for %d cases", len(want), len(cases))
	}
	// A name with a trailing dot: cloud-init keeps the dot in the fqdn
	// (and so in /etc/hosts); earlyinit drops it, as the name means the
	// same.
	trailingDot := map[tc]bool{{"{}", "host1.example.com."}: true, {"hostname: h2.", "host1.example.com"}: true}
	for i, c := range cases {
		te := coretest.NewEnv(t, c.cfg)
		te.Data = &instance.Data{LocalHostname: c.lh}
		short, fqdn, ok, err := te.HostnamePair()
		w := want[i]
		if trailingDot[c] {
			if w.Fqdn == fqdn || strings.TrimSuffix(w.Fqdn, ".") != fqdn || short != w.Hostname {
				t.Errorf("%s, %s: the trailing dot difference is gone or changed: earlyinit %q %q, cloud-init %q %q", c.cfg, c.lh, short, fqdn, w.Hostname, w.Fqdn)
			}
			continue
		}
		if w.Error != "" || !ok || err != nil || short != w.Hostname || fqdn != w.Fqdn {
			t.Errorf("%s, local-hostname %s: earlyinit %q %q (ok %v, %v), cloud-init %q %q %s", strings.ReplaceAll(c.cfg, "\n", "; "), c.lh, short, fqdn, ok, err, w.Hostname, w.Fqdn, w.Error)
		}
	}
}
