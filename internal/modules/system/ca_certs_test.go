package system

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

const testCert = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ0VSVA==\n-----END CERTIFICATE-----"
const testCert2 = "-----BEGIN CERTIFICATE-----\nMIIBtDCCAVqgAwIBAgIUQ0VSVDI=\n-----END CERTIFICATE-----\n"

// caOracle runs cc_ca_certs.add_ca_certs on a configuration file of
// the given content in a temporary directory and returns the certificate
// file and the configuration file it leaves.
const caOracle = `
import os, tempfile
from cloudinit.config import cc_ca_certs
out = []
for c in json.load(sys.stdin):
    d = tempfile.mkdtemp()
    conf = os.path.join(d, "ca-certificates.conf")
    if c["conf"] is not None:
        open(conf, "w").write(c["conf"])
    else:
        open(conf, "w").close()
    cfg = {"ca_cert_path": d, "ca_cert_filename": "cloud-init-ca-certs.crt", "ca_cert_config": conf,
           "ca_cert_full_path": os.path.join(d, "cloud-init-ca-certs.crt")}
    cc_ca_certs.add_ca_certs(cfg, c["certs"])
    out.append([open(cfg["ca_cert_full_path"]).read(), open(conf).read()])
json.dump(out, sys.stdout)
`

func TestCACertsMatchCloudInit(t *testing.T) {
	type tc struct {
		Conf  *string  `json:"conf"`
		Certs []string `json:"certs"`
	}
	s := func(s string) *string { return &s }
	cases := []tc{
		{nil, []string{testCert}},
		{s("mozilla/A.crt\nmozilla/B.crt\n"), []string{testCert, testCert2}},
		{s("mozilla/A.crt\n\ncloud-init-ca-certs.crt\nmozilla/B.crt\n\n\n"), []string{testCert2}},
		{s("!mozilla/A.crt"), []string{testCert}},
	}
	var want [][2]string
	coretest.CloudinitOracle(t, caOracle, cases, &want)
	for i, c := range cases {
		te := coretest.DistroEnv(t, "debian", "ca_certs:\n  trusted: []\n", "/run/systemd/system/")
		if c.Conf != nil {
			te.Write("/etc/ca-certificates.conf", *c.Conf, 0o644)
		}
		l := caCertsLayoutFor(core.FamilyDebian)
		l.Config = "/etc/ca-certificates.conf"
		var certs []any
		for _, x := range c.Certs {
			certs = append(certs, x)
		}
		te.Cfg["ca_certs"] = map[string]any{"trusted": certs}
		if err := te.RunFunc(CACerts); err != nil {
			t.Fatal(err)
		}
		te.WantFile("/usr/share/ca-certificates/cloud-init-ca-certs.crt", want[i][0], 0o644, 0, 0)
		te.WantFile("/etc/ca-certificates.conf", want[i][1], 0o644, 0, 0)
	}
}

func TestCACerts(t *testing.T) {
	cfg := "ca_certs:\n  trusted:\n    - |\n      " + strings.ReplaceAll(testCert, "\n", "\n      ") + "\n"
	for _, tt := range []struct {
		distro, file string
		conf         bool
		calls        []string
	}{
		{"debian", "/usr/share/ca-certificates/cloud-init-ca-certs.crt", true, []string{"update-ca-certificates"}},
		{"ubuntu", "/usr/share/ca-certificates/cloud-init-ca-certs.crt", true, []string{"update-ca-certificates"}},
		{"alpine", "/usr/share/ca-certificates/cloud-init-ca-certs.crt", true, []string{"update-ca-certificates"}},
		{"rocky", "/usr/share/pki/ca-trust-source/anchors/cloud-init-ca-certs.crt", false, []string{"update-ca-trust"}},
		{"fedora", "/usr/share/pki/ca-trust-source/anchors/cloud-init-ca-certs.crt", false, []string{"update-ca-trust"}},
		{"opensuse", "/etc/pki/trust/anchors/cloud-init-ca-certs.crt", false, []string{"update-ca-certificates"}},
	} {
		t.Run(tt.distro, func(t *testing.T) {
			te := coretest.DistroEnv(t, tt.distro, cfg)
			if err := te.RunFunc(CACerts); err != nil {
				t.Fatal(err)
			}
			te.WantFile(tt.file, testCert+"\n", 0o644, 0, 0)
			if got := te.Root.Exists("/etc/ca-certificates.conf"); got != tt.conf {
				t.Errorf("/etc/ca-certificates.conf written: %v, want %v", got, tt.conf)
			}
			te.WantCalls(tt.calls...)
		})
	}
}

func TestCACertsRemoveDefaults(t *testing.T) {
	te := coretest.DistroEnv(t, "debian", "ca-certs:\n  remove-defaults: true\n")
	te.Write("/usr/share/ca-certificates/mozilla/A.crt", "a", 0o644)
	te.Write("/etc/ssl/certs/A.pem", "a", 0o644)
	te.Write("/etc/ca-certificates.conf", "mozilla/A.crt\n", 0o644)
	if err := te.RunFunc(CACerts); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/usr/share/ca-certificates/mozilla", "/etc/ssl/certs/A.pem"} {
		if te.Root.Exists(p) {
			t.Errorf("%s not removed", p)
		}
	}
	if !te.Root.Exists("/etc/ssl/certs") {
		t.Error("/etc/ssl/certs itself removed")
	}
	te.WantFile("/etc/ca-certificates.conf", "", 0o644, 0, 0)
	te.WantCalls("debconf-set-selections -", "update-ca-certificates")
	if got := string(te.Fake.Calls[0].Stdin); got != "ca-certificates ca-certificates/trust_new_crts select no" {
		t.Errorf("debconf stdin %q", got)
	}

	te = coretest.DistroEnv(t, "opensuse", "ca_certs:\n  remove_defaults: true\n")
	if err := te.RunFunc(CACerts); err == nil || !strings.Contains(err.Error(), "ca_certs.remove_defaults: not supported") {
		t.Errorf("openSUSE remove_defaults: err %v", err)
	}
}

func TestCACertsRejects(t *testing.T) {
	for _, tt := range []struct{ cfg, want string }{
		{"ca_certs:\n  trusted: [\"not a cert\"]\n", "ca_certs.trusted.0: not a PEM certificate"},
		{"ca_certs:\n  trusted: [\"-----BEGIN CERTIFICATE-----\\n\\u0000\\n-----END CERTIFICATE-----\"]\n", "ca_certs.trusted.0: not a PEM certificate: character"},
		{"ca_certs:\n  trusted: [{a: b}]\n", "ca_certs.trusted.0: want a string"},
		{"ca_certs: [a]\n", "ca_certs: want a map"},
	} {
		te := coretest.DistroEnv(t, "debian", tt.cfg)
		te.Write("/usr/share/ca-certificates/mozilla/A.crt", "a", 0o644)
		err := te.RunFunc(CACerts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err %v, want %q", tt.cfg, err, tt.want)
		}
		if te.Root.Exists("/usr/share/ca-certificates/cloud-init-ca-certs.crt") || len(te.Calls()) > 0 {
			t.Errorf("%q: wrote or ran something", tt.cfg)
		}
	}
}
