package cfgmgmt

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// ansibleExamples are cloud-init 22.4's own examples (cc_ansible's meta).
const (
	ansibleExample1 = `ansible:
  install_method: distro
  pull:
    url: "https://github.com/holmanb/vmboot.git"
    playbook_name: ubuntu.yml
`
	ansibleExample2 = `ansible:
  package_name: ansible-core
  install_method: pip
  pull:
    url: "https://github.com/holmanb/vmboot.git"
    playbook_name: ubuntu.yml
`
)

var ansibleVersionRule = ocRule{Argv: []string{"ansible-pull", "--version"}, Out: "ansible-pull [core 2.14.3]\n  config file = None\n"}

// siteBase is the known difference of the site base's command: 22.4
// quotes the program (Python evaluates a string literal and prints
// nothing); earlyinit asks for site.getuserbase().
func siteBase(evs []ocEvent, _ map[string]ocFile) []ocEvent {
	var out []ocEvent
	for _, ev := range evs {
		if len(ev.Argv) == 3 && ev.Argv[1] == "-c" && strings.Contains(ev.Argv[2], "getuserbase") {
			ev.Argv[2] = "import site; print(site.getuserbase())"
		}
		out = append(out, ev)
	}
	return out
}

// importPip is siteBase and the other known difference of the pip path:
// cloud-init imports pip in its own interpreter, earlyinit asks the
// root's python3 (`python3 -c "import pip"`) after a pip list without
// ansible.
func importPip(evs []ocEvent, files map[string]ocFile) []ocEvent {
	var out []ocEvent
	for i, ev := range siteBase(evs, files) {
		out = append(out, ev)
		if i > 0 && len(ev.Argv) > 3 && ev.Argv[3] == "list" && len(out) == 2 {
			out = append(out, ocEvent{Kind: "cmd", Argv: []string{"python3", "-c", "import pip"}})
		}
	}
	return out
}

// TestAnsibleOracle: earlyinit's ansible against cloud-init 22.4's
// cc_ansible: installs (distro, pip), the commands as root and as
// run_user (do_as), galaxy, ansible-pull's options, the controller's
// clones and playbooks, and the failures of validate_config.
func TestAnsibleOracle(t *testing.T) {
	pipRules := []ocRule{
		{Argv: []string{"python3", "-c"}, Out: "/root/.local\n"},
		{Argv: []string{"python3", "-m", "pip", "list"}, Seq: []string{"Package Version\npip 23.0\n", "ansible-core 2.14.3\n"}},
		ansibleVersionRule,
	}
	runOracleCases(t, "ansible", "cc_ansible", []ocCase{
		// 22.4's first example fails its own validate_config: no
		// package_name.
		{name: "example 1", cfg: ansibleExample1, err: true},
		{name: "example 2", cfg: ansibleExample2, setup: ocSetup{rules: pipRules, pip: true}, known: importPip},
		{name: "pip without pip", cfg: ansibleExample2, known: importPip, setup: ocSetup{rules: append([]ocRule{
			{Argv: []string{"python3", "-c", "import pip"}, RC: 1}}, pipRules...)}},
		{name: "pip as run_user", known: siteBase, cfg: `ansible:
  package_name: ansible
  install_method: pip
  run_user: ansible
  ansible_config: /etc/ansible/ansible.cfg
  pull:
    checkout: main
    url: https://example.org/site.git
    playbook_name: site.yml
`, setup: ocSetup{pip: true, rules: []ocRule{
			{Argv: []string{"python3", "-c"}, Out: "/home/ansible/.local\n"},
			{Argv: []string{"python3", "-m", "pip", "list"}, Out: "ansible 8.0.0\n"},
			ansibleVersionRule,
		}}},
		{name: "distro install", cfg: `ansible:
  package_name: ansible
  install_method: distro
  galaxy:
    actions:
      - [ansible-galaxy, collection, install, community.general]
      - [ansible-galaxy, role, install, geerlingguy.nginx]
  pull:
    accept_host_key: true
    checkout: v1.0
    clean: false
    full: true
    playbook_name: local.yml
    private_key: /root/.ssh/deploy_key
    skip_tags: slow
    tags: "web,db"
    timeout: "30"
    url: https://deploy:tok3n@git.example.org/infra.git
    vault_password_file: /root/.vault_pass
`, setup: ocSetup{installs: map[string]string{"ansible": "/usr/bin/ansible"}, rules: []ocRule{ansibleVersionRule}}},
		{name: "installed, controller", known: checkTrue, cfg: `ansible:
  package_name: ansible-core
  install_method: distro
  setup_controller:
    repositories:
      - path: /home/ansible/public/
        source: git@github.com:example/public.git
      - path: /home/ansible/private/
        source: git@github.com:example/private.git
    run_ansible:
      - playbook_dir: /home/ansible/public
        playbook_name: site.yml
        check: true
        forks: 5
        inventory: hosts
        list_hosts: false
      - playbook_dir: /home/ansible/private
        playbook_name: private.yml
`, setup: ocSetup{which: []string{"ansible"}}},
		{name: "diff on an old ansible", err: true, setup: ocSetup{which: []string{"ansible"}, rules: []ocRule{
			{Argv: []string{"ansible-pull", "--version"}, Out: "ansible-pull 2.5.1\n"}}}, cfg: `ansible:
  package_name: ansible
  install_method: distro
  pull: {url: https://x/y.git, playbook_name: a.yml, diff: true}
`},
		{name: "unparsable version", setup: ocSetup{which: []string{"ansible"}, rules: []ocRule{
			{Argv: []string{"ansible-pull", "--version"}, Out: "ansible-pull, unknown\n"}}}, cfg: `ansible:
  package_name: ansible
  install_method: distro
  pull: {url: https://x/y.git, playbook_name: a.yml, diff: true}
`},
		{name: "not installed after install", err: true, cfg: "ansible:\n  package_name: ansible\n  install_method: distro\n"},
		{name: "no install_method", err: true, cfg: "ansible:\n  package_name: ansible\n"},
		{name: "bad install_method", err: true, cfg: "ansible:\n  package_name: ansible\n  install_method: snap\n"},
		{name: "controller without work", err: true, cfg: "ansible:\n  package_name: a\n  install_method: distro\n  setup_controller: {repositories: []}\n"},
		{name: "empty", cfg: "ansible: {}\n"},
		// Python truth: a false galaxy, pull or setup_controller is
		// nothing to do.
		{name: "false sections", setup: ocSetup{which: []string{"ansible"}},
			cfg: "ansible:\n  package_name: ansible\n  install_method: distro\n  ansible_config: ''\n  galaxy: {}\n  pull: ''\n  setup_controller: 0\n"},
		{name: "false package_name", err: true, cfg: "ansible:\n  package_name: 0\n  install_method: distro\n"},
	})
}

// checkTrue is the known difference of run_ansible's true options: 22.4
// writes --check=True (which ansible-playbook refuses), earlyinit --check.
func checkTrue(evs []ocEvent, _ map[string]ocFile) []ocEvent {
	for i, ev := range evs {
		for j, a := range ev.Argv {
			if strings.HasSuffix(a, "=True") {
				evs[i].Argv[j] = strings.TrimSuffix(a, "=True")
			}
		}
	}
	return evs
}

// TestAnsibleSecretsNotShown: ansible-pull's private key and vault
// password file, a URL's credentials and extra_vars are hidden in the log
// and in errors (they are ansible's argv, which the tool needs).
func TestAnsibleSecretsNotShown(t *testing.T) {
	te := coretest.NewEnv(t, `ansible:
  package_name: ansible
  install_method: distro
  pull:
    url: https://deploy:T0KEN@git.example.org/infra.git
    playbook_name: site.yml
    private_key: /root/.ssh/PRIVKEY
    vault_password_file: /root/VAULTFILE
  setup_controller:
    run_ansible:
      - {playbook_dir: /srv, playbook_name: x.yml, extra_vars: "db_password=HUNTER2"}
`)
	te.Write("/usr/bin/ansible", "", 0o755)
	te.Fake.Handlers["ansible-pull"] = func(c core.Cmd) ([]byte, error) {
		if c.Args[0] == "--version" {
			return []byte("ansible-pull [core 2.14.3]\n"), nil
		}
		return nil, nil
	}
	te.Fake.Handlers["sh"] = func(c core.Cmd) ([]byte, error) { return nil, coretest.ExitErr(2) }
	err := te.RunFunc(Ansible)
	if err == nil {
		t.Fatal("no error from the failing playbook")
	}
	calls := strings.Join(te.Calls(), "\n")
	for _, s := range []string{"--url=https://deploy:T0KEN@git.example.org/infra.git", "--private-key=/root/.ssh/PRIVKEY", "--vault-password-file=/root/VAULTFILE", "--extra-vars=db_password=HUNTER2"} {
		if !strings.Contains(calls, s) {
			t.Errorf("ansible did not get %s:\n%s", s, calls)
		}
	}
	for _, s := range []string{te.LogBuf.String(), err.Error()} {
		for _, secret := range []string{"T0KEN", "PRIVKEY", "VAULTFILE", "HUNTER2"} {
			if strings.Contains(s, secret) {
				t.Errorf("%s is shown: %q", secret, s)
			}
		}
	}
	if !strings.Contains(te.LogBuf.String(), "--private-key=(not shown)") {
		t.Errorf("log: %s", te.LogBuf.String())
	}
}

// TestAnsibleRunUser: run_user's commands run through su with /bin/sh,
// the argv as the shell's positional parameters (never joined into a
// command line), ANSIBLE_CONFIG with them; a bad user name is refused.
func TestAnsibleRunUser(t *testing.T) {
	te := coretest.NewEnv(t, `ansible:
  package_name: ansible
  install_method: distro
  run_user: deploy
  ansible_config: /etc/ansible/x.cfg
  galaxy: {actions: [[ansible-galaxy, install, "a b; rm -rf /"]]}
`)
	te.Write("/usr/bin/ansible", "", 0o755)
	if err := te.RunFunc(Ansible); err != nil {
		t.Fatal(err)
	}
	c := te.Fake.Calls[0]
	want := []string{"--login", "--shell=/bin/sh", "--command=" + ansibleScript, "--", "deploy", "sh", "", "",
		"env", "ANSIBLE_CONFIG=/etc/ansible/x.cfg", "ansible-galaxy", "install", "a b; rm -rf /"}
	if c.Name != "su" || strings.Join(c.Args, "\x00") != strings.Join(want, "\x00") {
		t.Errorf("got %s %q", c.Name, c.Args)
	}
	te = coretest.NewEnv(t, "ansible: {package_name: a, install_method: distro, run_user: -r}\n")
	if err := te.RunFunc(Ansible); err == nil || len(te.Calls()) > 0 {
		t.Errorf("run_user -r: %v, %q", err, te.Calls())
	}
}
