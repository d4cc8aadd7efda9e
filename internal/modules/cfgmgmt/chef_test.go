package cfgmgmt

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// chefExample is cloud-init 22.4's own example (cc_chef's meta), with
// omnibus_url pointing at the test's server.
const chefExample = `chef:
  directories:
    - /etc/chef
    - /var/log/chef
  validation_cert: system
  install_type: omnibus
  initial_attributes:
    apache:
      prefork:
        maxclients: 100
      keepalive: off
  run_list:
    - recipe[apache2]
    - role[db]
  encrypted_data_bag_secret: /etc/chef/encrypted_data_bag_secret
  environment: _default
  log_level: :auto
  omnibus_url_retries: 2
  server_url: https://chef.yourorg.com:4000
  ssl_verify_mode: :verify_peer
  validation_name: yourorg-validator
`

const chefPEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAvalidatorkey\n-----END RSA PRIVATE KEY-----\n"

// chefNorm compares client.rb without its header line (cloud-init's and
// earlyinit's name and date) and firstboot.json as JSON (earlyinit sorts
// the keys; cloud-init keeps run_list first, then the attributes in YAML
// order).
var chefNorm = map[string]func(string) string{
	"/etc/chef/client.rb": func(s string) string {
		_, rest, _ := strings.Cut(s, "\n")
		return rest
	},
	"/etc/chef/firstboot.json": canonJSON,
}

func canonJSON(s string) string {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "invalid JSON: " + s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestChefOracle: earlyinit's chef against cloud-init 22.4's cc_chef:
// directories, client.rb (cloud-init's template rendered by cloud-init),
// firstboot.json, the validation key (0600 here, 0644 there), installs
// (packages, gems with their symlinks, the omnibus script) and the
// chef-client run.
func TestChefOracle(t *testing.T) {
	srv, getter := installerServer(t, "#!/bin/sh\necho omnibus\n")
	secrets := map[string]fs.FileMode{"/etc/chef/validation.pem": 0o600, "/etc/chef/firstboot.json": 0o600}
	installed := ocSetup{exes: []string{"/usr/bin/chef-client"}}
	runOracleCases(t, "chef", "cc_chef", []ocCase{
		{name: "example", http: getter, norm: chefNorm, modes: secrets,
			extra: map[string]any{"script": "#!/bin/sh\necho omnibus\n"},
			cfg:   chefExample + "  omnibus_url: " + srv.URL + "/install.sh\n"},
		{name: "packages, key, run, delete", norm: chefNorm, modes: secrets, cfg: `chef:
  server_url: https://chef.example.org
  validation_name: example-validator
  validation_cert: |
` + indentLines(chefPEM, "    ") + `  exec: true
  exec_arguments: [--once, -l, debug]
  delete_validation_post_exec: true
  run_list: ["role[base]"]
`},
		{name: "installed, string arguments", setup: installed, norm: chefNorm, modes: secrets, cfg: `chef:
  server_url: https://chef.example.org
  validation_name: v
  exec: true
  exec_arguments: --once
  node_name: web-1
  chef_license: accept
  show_time: false
  client_key: /srv/chef/keys/client.pem
  pid_file: /run/chef/client.pid
  firstboot_path: ""
`},
		{name: "installed, no exec", setup: installed, norm: chefNorm, modes: secrets,
			cfg: "chef:\n  server_url: https://c\n  validation_name: v\n  directories: [/srv/chef/a, /srv/chef/b]\n  initial_attributes: {x: {y: [1, 2.5, true, null, \"é\"]}}\n"},
		{name: "force install, gems", setup: installed, norm: chefNorm, modes: secrets, cfg: `chef:
  server_url: https://c
  validation_name: v
  force_install: true
  install_type: gems
  ruby_version: "2.7"
  version: 17.10.3
`},
		{name: "unknown install_type", norm: chefNorm, modes: secrets,
			cfg: "chef:\n  server_url: https://c\n  validation_name: v\n  install_type: nope\n  exec: true\n"},
		{name: "no server_url", err: true, cfg: "chef:\n  validation_name: v\n"},
		// A null key's line is left out of client.rb (a missing key's
		// has its default); a null run_list is null in firstboot.json.
		{name: "null keys", setup: installed, norm: chefNorm, modes: secrets, cfg: `chef:
  server_url: https://c
  validation_name: v
  log_level: null
  ssl_verify_mode: null
  show_time: null
  file_cache_path: null
  json_attribs: null
  pid_file: null
  run_list: null
  exec: null
  validation_cert: ""
`},
		// gems: exec defaults to true, and null is false.
		{name: "gems, exec null", setup: installed, norm: chefNorm, modes: secrets,
			cfg: "chef:\n  server_url: https://c\n  validation_name: v\n  force_install: true\n  install_type: gems\n  exec: null\n"},
		{name: "validation_cert system without a key", setup: installed, norm: chefNorm, modes: secrets,
			cfg: "chef:\n  server_url: https://c\n  validation_name: v\n  validation_cert: system\n  validation_key: /etc/chef/other.pem\n"},
	})
}

// TestChefClientRBEscapes: client.rb's values are Ruby strings that stay
// strings (\, " and # escaped) and its symbols are symbols; a control
// character is refused before anything is written.
func TestChefClientRBEscapes(t *testing.T) {
	te := coretest.NewEnv(t, `chef:
  server_url: 'https://c/"#{exit}\'
  validation_name: v
  node_name: 'a"b'
`)
	te.Write(chefExec, "", 0o755)
	te.Now = func() time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC) }
	te.Version = "1.2"
	if err := te.RunFunc(Chef); err != nil {
		t.Fatal(err)
	}
	rb := te.Read(chefClientRB)
	for _, want := range []string{
		"# Created by earlyinit v. 1.2 on Mon, 06 May 2024 07:08:09 +0000\n",
		`chef_server_url        "https://c/\"\#{exit}\\"` + "\n",
		`node_name              "a\"b"` + "\n",
	} {
		if !strings.Contains(rb, want) {
			t.Errorf("client.rb lacks %q:\n%s", want, rb)
		}
	}
	for _, cfg := range []string{
		"chef: {server_url: \"a\\nb\", validation_name: v}",
		"chef: {server_url: a, validation_name: v, log_level: info}",
		"chef: {server_url: a, validation_name: v, ssl_verify_mode: ':x; system(1)'}",
	} {
		te := coretest.NewEnv(t, cfg)
		if err := te.RunFunc(Chef); err == nil {
			t.Errorf("%s: no error", cfg)
		}
		if te.Root.Exists(chefClientRB) || len(te.Calls()) > 0 {
			t.Errorf("%s: something was done", cfg)
		}
	}
}

// TestChefValidationKeyNotShown: the validator's key is in its 0600 file
// and nowhere else.
func TestChefValidationKeyNotShown(t *testing.T) {
	te := coretest.NewEnv(t, "chef:\n  server_url: https://c\n  validation_name: v\n  validation_cert: |\n"+indentLines(chefPEM, "    "))
	te.Write(chefExec, "", 0o755)
	if err := te.RunFunc(Chef); err != nil {
		t.Fatal(err)
	}
	te.WantFile(chefValidationPEM, chefPEM, 0o600, 0, 0)
	for _, f := range []string{chefClientRB, chefFirstboot} {
		if strings.Contains(te.Read(f), "validatorkey") {
			t.Errorf("%s holds the key", f)
		}
	}
	for _, s := range []string{te.LogBuf.String(), te.OutBuf.String(), strings.Join(te.Calls(), "\n")} {
		if strings.Contains(s, "validatorkey") {
			t.Errorf("the key is shown: %q", s)
		}
	}
}
