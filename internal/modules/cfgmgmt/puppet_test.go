package cfgmgmt

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

const puppetPEM = `-----BEGIN CERTIFICATE-----
MIICCTCCAXKgAwIBAgIBATANBgkqhkiG9w0BAQUFADANMQswCQYDVQQDDAJjYTAe
-----END CERTIFICATE-----
`

// puppetSetup is a root with the puppet package's paths: puppet config
// print answers, a puppet.conf, a puppet user, systemctl.
func puppetSetup(extra map[string]string) ocSetup {
	files := map[string]string{
		"/etc/passwd":             coretest.BasePasswd + "puppet:x:111:118::/var/lib/puppet:/usr/sbin/nologin\n",
		"/etc/group":              coretest.BaseGroup + "puppet:x:118:\n",
		"/etc/puppet/puppet.conf": "# puppet's own\n[main]\nssldir = /var/lib/puppet/ssl\n  vardir=/var/lib/puppet\n\n; a comment\n[agent]\nServer: old.example.org\nruninterval = 30m\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	return ocSetup{
		files: files,
		which: []string{"systemctl"},
		rules: []ocRule{
			{Argv: []string{"puppet", "config", "print", "config"}, Out: "/etc/puppet/puppet.conf\n"},
			{Argv: []string{"puppet", "config", "print", "ssldir"}, Out: "/var/lib/puppet/ssl\n"},
			{Argv: []string{"puppet", "config", "print", "csr_attributes"}, Out: "/etc/puppet/csr_attributes.yaml\n"},
			{Argv: []string{"/opt/puppetlabs/bin/puppet", "config", "print", "config"}, Out: "/etc/puppetlabs/puppet/puppet.conf\n"},
			{Argv: []string{"/opt/puppetlabs/bin/puppet", "config", "print", "ssldir"}, Out: "/etc/puppetlabs/puppet/ssl\n"},
			{Argv: []string{"/opt/puppetlabs/bin/puppet", "config", "print", "csr_attributes"}, Out: "/etc/puppetlabs/puppet/csr_attributes.yaml\n"},
		},
	}
}

// installerServer serves an installer script at any path.
func installerServer(t *testing.T, body string) (*httptest.Server, *httpget.Getter) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv, &httpget.Getter{Retries: -1}
}

// keepOld is the known difference of puppet.conf.old: earlyinit keeps the
// file as it was; cloud-init renames once per conf section, leaving the
// file as it was before the last section.
func keepOld(old string) func([]ocEvent, map[string]ocFile) []ocEvent {
	return func(evs []ocEvent, files map[string]ocFile) []ocEvent {
		for p, f := range files {
			if strings.HasSuffix(p, "/puppet.conf.old") {
				f.content = old
				files[p] = f
			}
		}
		return evs
	}
}

// TestPuppetOracle: earlyinit's puppet against cloud-init 22.4's
// cc_puppet: the commands (installs, `puppet config print`, enable, the
// agent, start), puppet.conf as configparser writes it, ca.pem and its
// owners, csr_attributes.yaml as PyYAML dumps it (0600 here, 0644 in
// cloud-init: it holds the challengePassword).
func TestPuppetOracle(t *testing.T) {
	srv, getter := installerServer(t, "#!/bin/sh\necho installing puppet\n")
	s := puppetSetup(nil)
	old := s.files["/etc/puppet/puppet.conf"]
	csr := map[string]fs.FileMode{"/etc/puppet/csr_attributes.yaml": 0o600}
	runOracleCases(t, "puppet", "cc_puppet", []ocCase{
		{name: "example aio", http: getter, setup: puppetSetup(map[string]string{"/etc/puppetlabs/puppet/puppet.conf": "[main]\n"}),
			extra: map[string]any{"script": "#!/bin/sh\necho installing puppet\n"},
			known: keepOld("[main]\n"),
			modes: map[string]fs.FileMode{"/etc/puppet/csr_attributes.yaml": 0o600},
			cfg: `fqdn: node1.example.org
puppet:
    install: true
    version: "7.7.0"
    install_type: "aio"
    collection: "puppet7"
    aio_install_url: '` + srv.URL + `/install.sh'
    cleanup: true
    conf_file: "/etc/puppetlabs/puppet/puppet.conf"
    ssl_dir: "/var/lib/puppet/ssl"
    csr_attributes_path: "/etc/puppet/csr_attributes.yaml"
    exec: true
    exec_args: ['--test']
    conf:
        agent:
            server: "puppetserver.example.org"
            certname: "%i.%f"
        ca_cert: |
` + indentLines(puppetPEM, "            ") + `    csr_attributes:
        custom_attributes:
            1.2.840.113549.1.9.7: 342thbjkt82094y0uthhor289jnqthpc2290
        extension_requests:
            pp_uuid: ED803750-E3C7-44F5-BB08-41A04433FE2E
            pp_image_name: my_ami_image
            pp_preshared_key: 342thbjkt82094y0uthhor289jnqthpc2290
`},
		{name: "example packages", setup: s, cfg: `puppet:
    install_type: "packages"
    package_name: "puppet"
    exec: false
`},
		{name: "conf", setup: s, known: keepOld(old), cfg: `fqdn: Node1.Example.org
puppet:
  install: false
  conf:
    agent: {server: puppet.example.org, certname: "%f-%i", RunInterval: 1h, splay: 30}
    main: {logdir: /var/log/puppet}
    server: {autosign: "true"}
`},
		// Known difference: YAML booleans are true/false here (puppet's
		// boolean settings refuse Python's True/False).
		{name: "conf booleans", setup: s, cfg: "puppet:\n  install: false\n  start_service: false\n  conf: {agent: {usecacheonfailure: false, splay: true}}\n",
			known: func(evs []ocEvent, files map[string]ocFile) []ocEvent {
				f := files["/etc/puppet/puppet.conf"]
				f.content = strings.NewReplacer(" = True\n", " = true\n", " = False\n", " = false\n").Replace(f.content)
				files["/etc/puppet/puppet.conf"] = f
				return keepOld(old)(evs, files)
			}},
		{name: "ca_cert", setup: s, known: keepOld(old), cfg: "puppet:\n  install: false\n  start_service: false\n  conf:\n    ca_cert: |\n" + indentLines(puppetPEM, "      ")},
		{name: "csr_attributes", setup: s, modes: csr, cfg: `puppet:
  install: false
  start_service: false
  csr_attributes:
    custom_attributes: {1.2.840.113549.1.9.7: "s3cr3t: yes"}
    extension_requests: {pp_role: web, pp_environment: production, pp_cost: 12}
`},
		{name: "default puppet", setup: puppetSetup(map[string]string{"/etc/default/puppet": "# Defaults\nSTART=no\nDAEMON_OPTS=\"\"\n"}),
			cfg: "puppet:\n  version: 7.23.0-1\n"},
		{name: "install false with version", setup: s, cfg: "puppet:\n  install: false\n  version: 7.23.0-1\n  start_service: false\n"},
		{name: "unknown install_type", setup: s, cfg: "puppet:\n  install_type: snap\n  exec: true\n  start_service: false\n"},
		{name: "exec_args string", setup: s, cfg: "puppet:\n  install: false\n  exec: true\n  exec_args: --test --noop\n  start_service: no\n"},
		{name: "no puppet.conf", setup: puppetSetup(map[string]string{"/etc/puppet/puppet.conf": ""}), err: true,
			cfg: "puppet:\n  install: false\n  conf_file: /etc/puppet/none.conf\n  conf: {main: {a: b}}\n"},
		{name: "no systemctl", setup: ocSetup{files: s.files, rules: s.rules}, cfg: "puppet:\n  install: false\n"},
		// util.get_cfg_option_bool: a null install or start_service is
		// false (missing, true); a null exec_args warns and runs --test.
		{name: "null booleans and exec_args", setup: s, cfg: "puppet:\n  install: null\n  start_service: null\n  exec: true\n  exec_args: null\n"},
		{name: "exec_args a number", setup: s, cfg: "puppet:\n  install: false\n  start_service: false\n  exec: true\n  exec_args: 5\n"},
	})
}

// indentLines prefixes each line of s.
func indentLines(s, prefix string) string {
	var b strings.Builder
	for _, l := range strings.SplitAfter(s, "\n") {
		if l != "" {
			b.WriteString(prefix + l)
		}
	}
	return b.String()
}

// TestPuppetDetailedExitCodes: `puppet agent --test` exits 2 when it
// applied changes; cloud-init 22.4 takes that for a failure, earlyinit
// does not (it still fails on 4 and 6, and on 2 without
// --detailed-exitcodes).
func TestPuppetDetailedExitCodes(t *testing.T) {
	for _, c := range []struct {
		args string
		code int
		fail bool
	}{
		{"['--test']", 2, false},
		{"['--test']", 4, true},
		{"['--test']", 6, true},
		{"['--onetime', '--no-daemonize']", 2, true},
		{"['--onetime', '--detailed-exitcodes']", 2, false},
	} {
		te := coretest.NewEnv(t, "puppet:\n  install: false\n  start_service: false\n  exec: true\n  exec_args: "+c.args+"\n")
		te.Fake.Handlers["puppet"] = func(cmd core.Cmd) ([]byte, error) {
			if cmd.Args[0] == "config" {
				return []byte("/etc/puppet/x\n"), nil
			}
			return nil, coretest.ExitErr(c.code)
		}
		if err := te.RunFunc(Puppet); (err != nil) != c.fail {
			t.Errorf("%s exit %d: error %v, want failure %v", c.args, c.code, err, c.fail)
		}
	}
}

// TestPuppetConfRefusesInjection: a value or key that would add a line
// to puppet.conf is refused before anything is written.
func TestPuppetConfRefusesInjection(t *testing.T) {
	for _, conf := range []string{
		`{agent: {server: "a\n[main]\nx = y"}}`,
		`{agent: {"a\nb": c}}`,
		`{agent: {"a=b": c}}`,
		`{"ag]ent": {a: b}}`,
		`{DEFAULT: {a: b}}`,
		`{agent: {a: [1, 2]}}`,
	} {
		te := coretest.NewEnv(t, "puppet:\n  install: false\n  start_service: false\n  conf: "+conf+"\n")
		te.Fake.Handlers["puppet"] = func(cmd core.Cmd) ([]byte, error) { return []byte("/etc/puppet/puppet.conf\n"), nil }
		te.Write("/etc/puppet/puppet.conf", "[main]\n", 0o644)
		if err := te.RunFunc(Puppet); err == nil {
			t.Errorf("conf %s: no error", conf)
		}
		if got := te.Read("/etc/puppet/puppet.conf"); got != "[main]\n" {
			t.Errorf("conf %s: puppet.conf changed to %q", conf, got)
		}
	}
}

// TestPuppetCSRAttributesNotShown: csr_attributes' values (the
// challengePassword) are in its 0600 file and nowhere else: not in the
// log, the output, the commands or an error.
func TestPuppetCSRAttributesNotShown(t *testing.T) {
	const secret = "Chall3ngeS3cret"
	te := coretest.NewEnv(t, "puppet:\n  install: false\n  csr_attributes:\n    custom_attributes: {1.2.840.113549.1.9.7: "+secret+"}\n")
	te.Fake.Handlers["puppet"] = func(cmd core.Cmd) ([]byte, error) {
		return []byte("/etc/puppet/" + cmd.Args[2] + "\n"), nil
	}
	if err := te.RunFunc(Puppet); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/etc/puppet/csr_attributes", "custom_attributes:\n  1.2.840.113549.1.9.7: "+secret+"\n", 0o600, 0, 0)
	for _, s := range []string{te.LogBuf.String(), te.OutBuf.String(), strings.Join(te.Calls(), "\n")} {
		if strings.Contains(s, secret) {
			t.Errorf("the challenge password is shown: %q", s)
		}
	}
}

// TestPyINI: puppet.conf as configparser reads it: errors for what it
// refuses.
func TestPyINI(t *testing.T) {
	for _, bad := range []string{"key = v\n", "[a]\nx\n", "[a]\n[a]\n", "[a]\nk=1\nK=2\n", "[a]\n=v\n"} {
		if _, err := parsePyINI(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	p, err := parsePyINI("[DEFAULT]\nx = 1\n[a]b]\n  k : v = w\n# c\n[DEFAULT]\ny=2\n")
	if err != nil {
		t.Fatal(err)
	}
	p.set("new", "Key", "v")
	if got, want := p.String(), "[DEFAULT]\nx = 1\ny = 2\n\n[a]b]\nk = v = w\n\n[new]\nkey = v\n\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestRunInstaller: the aio script is fetched, run from a 0700 file in a
// 0700 directory only root can write, and removed; a URL with credentials
// (which the late stages' HTTP client does not send) is refused without
// showing them.
func TestRunInstaller(t *testing.T) {
	srv, getter := installerServer(t, "#!/bin/sh\necho hi\n")
	u := strings.Replace(srv.URL, "http://", "http://user:S3CRET@", 1) + "/install.sh"
	te := coretest.NewEnv(t, "puppet:\n  install_type: aio\n  start_service: false\n  aio_install_url: '"+u+"'\n")
	te.HTTP = getter
	err := te.RunFunc(Puppet)
	if err == nil {
		t.Fatal("a URL with credentials: no error")
	}
	for _, s := range []string{te.LogBuf.String(), err.Error()} {
		if strings.Contains(s, "S3CRET") || strings.Contains(s, "user:") {
			t.Errorf("the URL's credentials are shown: %q", s)
		}
	}

	te = coretest.NewEnv(t, "puppet:\n  install_type: aio\n  start_service: false\n  aio_install_url: '"+srv.URL+"/install.sh'\n")
	te.HTTP = getter
	var seen bool
	te.Fake.Handlers["puppet-install"] = func(c core.Cmd) ([]byte, error) {
		seen = true
		fi, err := os.Stat(c.Name)
		if err != nil {
			return nil, err
		}
		di, _ := os.Stat(filepath.Dir(c.Name))
		if fi.Mode().Perm() != 0o700 || di.Mode().Perm() != 0o700 {
			t.Errorf("script %v in %v", fi.Mode(), di.Mode())
		}
		if b, _ := os.ReadFile(c.Name); string(b) != "#!/bin/sh\necho hi\n" {
			t.Errorf("script %q", b)
		}
		if strings.Join(c.Args, " ") != "--cleanup" {
			t.Errorf("args %q", c.Args)
		}
		return nil, nil
	}
	te.Fake.Handlers["puppet"] = func(c core.Cmd) ([]byte, error) { return []byte("/etc/puppetlabs/x\n"), nil }
	if err := te.RunFunc(Puppet); err != nil {
		t.Fatal(err)
	}
	if !seen {
		t.Fatalf("the installer did not run: %q", te.Calls())
	}
	if te.Root.Exists(te.InstanceDir() + "/puppet-install.d") {
		t.Error("the installer is left behind")
	}
}
