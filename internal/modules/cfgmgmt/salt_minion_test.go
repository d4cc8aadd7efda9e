package cfgmgmt

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// saltExample is cloud-init 22.4's own example (cc_salt_minion's meta).
const saltExample = `salt_minion:
    pkg_name: salt-minion
    service_name: salt-minion
    config_dir: /etc/salt
    conf:
        master: salt.example.com
    grains:
        role:
            - web
    public_key: |
        ------BEGIN PUBLIC KEY-------
        <key data>
        ------END PUBLIC KEY-------
    private_key: |
        ------BEGIN PRIVATE KEY------
        <key data>
        ------END PRIVATE KEY-------
    pki_dir: /etc/salt/pki/minion
`

// TestSaltMinionOracle: what earlyinit's salt_minion runs, installs and
// writes is what cloud-init 22.4's cc_salt_minion does for the same
// config, but the private key's mode (0600 here; cloud-init chmods it 0644
// inside its 0700 directory) and a conf naming a secret (0600 here).
func TestSaltMinionOracle(t *testing.T) {
	keys := map[string]fs.FileMode{"/etc/salt/pki/minion/minion.pem": 0o600}
	runOracleCases(t, "salt_minion", "cc_salt_minion", []ocCase{
		{name: "example", cfg: saltExample, modes: keys},
		{name: "defaults", cfg: "salt_minion: {}\n"},
		{name: "yaml", cfg: `salt_minion:
  config_dir: /srv/salt/
  conf:
    master: [salt1.example.com, salt2.example.com]
    id: "0644"
    ipv6: yes
    "on": "off"
    retry_dns: 0
    ratio: 1.5
    empty: ""
    none: null
    date: "2001-12-14"
    colon: "a: b"
    hash: "#x"
    leading: " x"
    multi: "one\ntwo\n"
    long: "` + strings.Repeat("word ", 30) + `"
    nested: {a: {b: [1, {c: d}]}, e: [], f: {}}
    unicode: "café ✓"
    tab: "a\tb"
  grains: {roles: [web, db], dc: ams1}
`},
		{name: "pki default without pki/minion", cfg: `salt_minion:
  public_key: PUB
  private_key: PRIV
`, modes: map[string]fs.FileMode{"/etc/salt/pki/minion.pem": 0o600}},
		{name: "pki default with pki/minion", cfg: `salt_minion:
  public_key: PUB
  private_key: PRIV
`, setup: ocSetup{files: map[string]string{"/etc/salt/pki/minion/README": "x"}}, modes: keys},
		{name: "one key only", cfg: "salt_minion:\n  public_key: PUB\n"},
		{name: "secret in conf", cfg: `salt_minion:
  conf:
    master: m
    mysql.pass: hunter2
`, modes: map[string]fs.FileMode{"/etc/salt/minion": 0o600}},
	})
}

// TestSaltMinionKeyNotShown: the private key is in minion.pem (0600, in a
// 0700 directory) and nowhere else; a failed install writes nothing.
func TestSaltMinionKeyNotShown(t *testing.T) {
	te := coretest.NewEnv(t, "salt_minion:\n  public_key: PUBKEY\n  private_key: PRIVATEKEYDATA\n")
	te.Write("/usr/bin/apt-get", "", 0o755)
	if err := te.RunFunc(SaltMinion); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/etc/salt/pki/minion.pem", "PRIVATEKEYDATA", 0o600, 0, 0)
	te.WantFile("/etc/salt/pki/minion.pub", "PUBKEY", 0o644, 0, 0)
	te.WantMode("/etc/salt/pki", 0o700, 0, 0)
	for _, s := range []string{te.LogBuf.String(), te.OutBuf.String(), strings.Join(te.Calls(), "\n")} {
		if strings.Contains(s, "PRIVATEKEYDATA") {
			t.Errorf("the private key is shown: %q", s)
		}
	}

	te = coretest.NewEnv(t, "salt_minion:\n  conf: {master: m}\n  public_key: P\n  private_key: K\n")
	te.Write("/usr/bin/apt-get", "", 0o755)
	te.Fake.Handlers["apt-get"] = func(c core.Cmd) ([]byte, error) {
		if slicesContains(c.Args, "install") {
			c.Output.Write([]byte("E: Unable to locate package salt-minion\n"))
			return nil, coretest.ExitErr(100)
		}
		return nil, nil
	}
	if err := te.RunFunc(SaltMinion); err == nil || !strings.Contains(err.Error(), "Unable to locate package") {
		t.Errorf("error %v", err)
	}
	if te.Root.Exists("/etc/salt") {
		t.Error("files written after the install failed")
	}
}
