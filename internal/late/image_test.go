package late

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/sshd"
	"github.com/earlyinit/earlyinit/internal/netcfg/render"
)

// writeFiles writes files into the fixture's root.
func (f *fixture) writeFiles(files map[string]string) {
	f.t.Helper()
	for name, content := range files {
		if err := f.root.WriteFile(name, []byte(content), 0o644, 0, 0); err != nil {
			f.t.Fatal(err)
		}
	}
}

// useraddFixture is a fixture whose useradd adds the user to /etc/passwd.
func useraddFixture(t *testing.T) *fixture {
	f := newFixture(t)
	f.root.WriteFile("/usr/sbin/useradd", nil, 0o755, 0, 0)
	f.exec.handlers["useradd"] = func(c core.Cmd) ([]byte, error) {
		name := c.Args[0]
		return nil, f.root.AppendFile("/etc/passwd", []byte(name+":x:1000:1000::/home/"+name+":/bin/sh\n"), 0o644, 0, 0)
	}
	return f
}

func useraddCalls(calls []string) []string {
	var out []string
	for _, c := range calls {
		if strings.HasPrefix(c, "useradd ") {
			out = append(out, c)
		}
	}
	return out
}

// TestImageDefaultUser: the default user is the image's
// system_info.default_user, else its distribution's (os-release), else
// Debian's; user-data's system_info wins over the image's.
func TestImageDefaultUser(t *testing.T) {
	for _, tt := range []struct {
		name     string
		files    map[string]string
		userData string
		want     []string
	}{{
		name: "a Rocky cloud.cfg",
		files: map[string]string{
			"/etc/cloud/cloud.cfg": `users: [default]
system_info:
  distro: rhel
  default_user:
    name: rocky
    lock_passwd: true
    gecos: Rocky Cloud User
    groups: [adm, systemd-journal]
    sudo: ["ALL=(ALL) NOPASSWD:ALL"]
    shell: /bin/bash
`,
			"/usr/lib/os-release": "ID=rocky\nID_LIKE=\"rhel centos fedora\"\n",
		},
		userData: "#cloud-config\n{}\n",
		want:     []string{"useradd rocky --comment Rocky Cloud User --groups adm,systemd-journal --shell /bin/bash -m"},
	}, {
		name:     "no cloud.cfg, Fedora's os-release",
		files:    map[string]string{"/usr/lib/os-release": "ID=fedora\n"},
		userData: "#cloud-config\n{}\n",
		// cloud-init sorts the default user's groups.
		want: []string{"useradd fedora --comment fedora Cloud User --groups adm,systemd-journal,wheel --shell /bin/bash -m"},
	}, {
		name:     "nothing: Debian's",
		userData: "#cloud-config\n{}\n",
		want:     []string{"useradd debian --comment Debian --groups adm,audio,cdrom,dialout,dip,floppy,netdev,plugdev,sudo,video --shell /bin/bash -m"},
	}, {
		name: "user-data's system_info over the image's",
		files: map[string]string{
			"/etc/cloud/cloud.cfg": "system_info: {default_user: {name: rocky, groups: [adm], shell: /bin/bash}}\n",
		},
		userData: "#cloud-config\nsystem_info: {default_user: {name: ops}}\n",
		want:     []string{"useradd ops --groups adm --shell /bin/bash -m"},
	}, {
		name: "the image's users list",
		files: map[string]string{
			"/etc/cloud/cloud.cfg": "users: [default, {name: svc, system: true}]\nsystem_info: {default_user: {name: rocky}}\n",
		},
		userData: "#cloud-config\n{}\n",
		// The default user last, as cloud-init creates it.
		want: []string{"useradd svc --system -M", "useradd rocky -m"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			f := useraddFixture(t)
			f.writeFiles(tt.files)
			f.store("iid-1", tt.userData)
			res := f.run(modules.StageBoot, nil)
			if len(res.Errors) != 0 {
				t.Fatalf("errors %q, calls %q", res.Errors, f.exec.calls)
			}
			if got := useraddCalls(f.exec.calls); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("useradd:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

// recorder makes modules that record the order they ran in and their
// frequency.
type recorder struct{ ran []string }

func (r *recorder) module(name string, stage modules.Stage, f modules.Frequency) modules.Module {
	return modules.Module{Name: name, Stage: stage, Frequency: f, Run: func(context.Context, *core.Env) error {
		r.ran = append(r.ran, name)
		return nil
	}}
}

// TestImageModuleLists: the module lists choose and order earlyinit's
// modules within each stage, an entry's frequency wins over the module's,
// a module the lists leave out does not run, and a listed module earlyinit
// lacks is one warning line in the log (not in status.json); user-data's
// list replaces the image's.
func TestImageModuleLists(t *testing.T) {
	rec := &recorder{}
	mods := []modules.Module{
		rec.module("bootcmd", modules.StageBoot, modules.Always),
		rec.module("write_files", modules.StageBoot, modules.PerInstance),
		rec.module("set_hostname", modules.StageBoot, modules.PerInstance),
		rec.module("users_groups", modules.StageBoot, modules.PerInstance),
		rec.module("runcmd", modules.StageFinal, modules.PerInstance),
		rec.module("scripts_user", modules.StageFinal, modules.PerInstance),
		rec.module("final_message", modules.StageFinal, modules.Always),
		rec.module("power_state", modules.StageFinal, modules.PerInstance),
	}
	f := newFixture(t)
	f.writeFiles(map[string]string{
		"/etc/cloud/cloud.cfg": `cloud_init_modules:
 - migrator
 - [users-groups, always]
 - growpart
 - [bootcmd, once, x]
 - set_hostname
cloud_config_modules: [snap, runcmd, [timezone, weekly]]
cloud_final_modules: [scripts-user, final-message]
`,
		"/etc/cloud/cloud.cfg.d/90-final.cfg": "cloud_final_modules: [scripts-user, power-state-change, [final_message, weekly]]\n",
	})
	f.store("iid-1", "#cloud-config\nbootcmd: [x]\nruncmd: [y]\npower_state: {mode: reboot}\n")
	boot := f.run(modules.StageBoot, mods)
	final := f.run(modules.StageFinal, mods)
	want := []string{"users_groups", "bootcmd", "set_hostname", "runcmd", "scripts_user", "power_state", "final_message"}
	if !reflect.DeepEqual(rec.ran, want) {
		t.Errorf("ran %q, want %q", rec.ran, want)
	}
	var freqs []string
	for _, m := range append(boot.Modules, final.Modules...) {
		freqs = append(freqs, m.Name+"="+m.Frequency)
	}
	wantFreqs := []string{"users_groups=always", "bootcmd=once", "set_hostname=once-per-instance", "runcmd=once-per-instance", "scripts_user=once-per-instance", "power_state=once-per-instance", "final_message=always"}
	if !reflect.DeepEqual(freqs, wantFreqs) {
		t.Errorf("frequencies %q, want %q", freqs, wantFreqs)
	}
	log := f.read(LogFile)
	for _, line := range []string{
		"WARNING: module migrator (cloud_init_modules in /etc/cloud/cloud.cfg): not supported by earlyinit",
		"module growpart (cloud_init_modules in /etc/cloud/cloud.cfg): done by earlyinit in the initramfs",
		"WARNING: module snap (cloud_config_modules in /etc/cloud/cloud.cfg): not supported by earlyinit",
		"WARNING: module timezone (cloud_config_modules in /etc/cloud/cloud.cfg): not supported by earlyinit",
		"module write_files: in none of the module lists: not run",
	} {
		if strings.Count(log, line) != 1 {
			t.Errorf("log has %d lines %q, want 1:\n%s", strings.Count(log, line), line, log)
		}
	}
	if got := boot.Warnings; !reflect.DeepEqual(got, []string{
		"image configuration: cloud.cfg: cloud_config_modules[2]: module timezone: unknown frequency (want once-per-instance, always, once): the module's own is used",
		"image configuration: cloud.cfg: cloud_final_modules[2]: module final_message: unknown frequency (want once-per-instance, always, once): the module's own is used"}) {
		t.Errorf("boot warnings %q", got)
	}

	// A new instance whose user-data has its own final list: it replaces
	// the image's.
	rec.ran = nil
	f.store("iid-2", "#cloud-config\ncloud_final_modules: [final_message, runcmd]\n")
	f.run(modules.StageBoot, mods)
	f.run(modules.StageFinal, mods)
	want = []string{"users_groups", "set_hostname", "runcmd", "final_message"}
	if !reflect.DeepEqual(rec.ran, want) {
		t.Errorf("second instance ran %q, want %q", rec.ran, want)
	}
	if log := f.read(LogFile); !strings.Contains(log, "module scripts_user: in none of the module lists: not run") {
		t.Errorf("log lacks scripts_user left out:\n%s", log)
	}
}

// TestPlanModulesWithoutLists: without module lists, earlyinit's own
// order, nothing noted.
func TestPlanModulesWithoutLists(t *testing.T) {
	all := modules.All()
	plan, notes := planModules(all, imagecfg.ModuleLists{}, modules.StageFinal, func(string) string { return "" })
	var got, want []string
	for _, p := range plan {
		got = append(got, p.m.Name+"="+string(p.freq))
	}
	for _, m := range all {
		if m.Stage == modules.StageFinal {
			want = append(want, m.Name+"="+string(m.Frequency))
		}
	}
	if !reflect.DeepEqual(got, want) || notes != nil {
		t.Errorf("plan %q notes %q, want %q and none", got, notes, want)
	}
}

// TestImageSettings: ssh_pwauth, disable_root, ssh_deletekeys,
// ssh_genkeytypes, manage_etc_hosts and preserve_hostname set in the
// image's cloud.cfg (not in user-data) take effect, and user-data still
// wins over them.
func TestImageSettings(t *testing.T) {
	f := useraddFixture(t)
	f.writeFiles(map[string]string{
		"/etc/cloud/cloud.cfg": `users: [default]
ssh_pwauth: true
disable_root: false
ssh_deletekeys: false
ssh_genkeytypes: [ed25519]
manage_etc_hosts: true
preserve_hostname: true
apt: {preserve_sources_list: true}
snap: {commands: [a]}
_log: [x]
disable_vmware_customization: false
`,
		"/etc/cloud/cloud.cfg.d/05_logging.cfg": "log_cfgs: []\noutput: {all: '| tee -a /var/log/cloud-init-output.log'}\n",
		"/etc/ssh/ssh_host_rsa_key":             "old key",
		render.CloudInitDropInPath:              "network: {config: disabled}\n",
		"/etc/hostname":                         "image\n",
	})
	f.store("iid-1", "#cloud-config\nssh_authorized_keys: [ssh-ed25519 AAAAuser u@k]\n")
	res := f.run(modules.StageBoot, nil)
	if len(res.Errors) != 0 {
		t.Fatalf("errors %q", res.Errors)
	}
	// ssh_deletekeys false: the old key stays; ssh_genkeytypes: only
	// ed25519 is made; preserve_hostname: no hostname call.
	for _, c := range f.exec.calls {
		if strings.HasPrefix(c, "hostname") {
			t.Errorf("command %q: preserve_hostname is true", c)
		}
	}
	if !f.root.Exists("/etc/ssh/ssh_host_ed25519_key") || f.root.Exists("/etc/ssh/ssh_host_ecdsa_key") {
		t.Errorf("host keys made: ed25519 %v, ecdsa %v; want ed25519 alone", f.root.Exists("/etc/ssh/ssh_host_ed25519_key"), f.root.Exists("/etc/ssh/ssh_host_ecdsa_key"))
	}
	if got := f.read("/etc/ssh/ssh_host_rsa_key"); got != "old key" {
		t.Errorf("old host key %q: removed", got)
	}
	if got := f.read("/etc/hostname"); got != "image\n" {
		t.Errorf("/etc/hostname %q: not preserved", got)
	}
	// disable_root false: root's keys have no prefix.
	if got := f.read("/root/.ssh/authorized_keys"); strings.Contains(got, "no-port-forwarding") || !strings.Contains(got, "ssh-ed25519 AAAAmeta meta@key") {
		t.Errorf("root keys %q", got)
	}
	if got := f.read("/etc/ssh/sshd_config.d/" + sshd.PwauthDropIn); !strings.Contains(got, "PasswordAuthentication yes") {
		t.Errorf("pwauth drop-in %q", got)
	}
	if got := f.read("/etc/hosts"); !strings.Contains(got, "host1") || !strings.Contains(got, "manage_etc_hosts") {
		t.Errorf("/etc/hosts %q", got)
	}
	log := f.read(LogFile)
	for _, line := range []string{
		"WARNING: /etc/cloud/cloud.cfg: snap: not supported by earlyinit: ignored",
		"WARNING: /etc/cloud/cloud.cfg.d/05_logging.cfg: output: not supported by earlyinit: ignored",
		"image configuration: 2 file(s): [/etc/cloud/cloud.cfg /etc/cloud/cloud.cfg.d/05_logging.cfg]",
	} {
		if !strings.Contains(log, line) {
			t.Errorf("log lacks %q:\n%s", line, log)
		}
	}
	for _, quiet := range []string{": _log:", ": log_cfgs:", "ssh_pwauth: not", "users: not", "apt: not", "disable_vmware_customization: not"} {
		if strings.Contains(log, quiet) {
			t.Errorf("log mentions %q:\n%s", quiet, log)
		}
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings %q: unsupported keys are not a degraded boot", res.Warnings)
	}

	// User-data wins over the image: a new instance turning
	// preserve_hostname off sets the host name.
	f.exec.calls = nil
	f.store("iid-2", "#cloud-config\npreserve_hostname: false\nssh_pwauth: false\n")
	f.run(modules.StageBoot, nil)
	if !strings.Contains(strings.Join(f.exec.calls, "\n"), "hostname host1") {
		t.Errorf("calls %q: user-data's preserve_hostname false did not win", f.exec.calls)
	}
	if got := f.read("/etc/ssh/sshd_config.d/" + sshd.PwauthDropIn); !strings.Contains(got, "PasswordAuthentication no") {
		t.Errorf("pwauth drop-in %q", got)
	}
}

// TestPlanModulesEarlyinitOnly: with module lists, a module cloud-init has
// no name for (post_password) still runs, in its place in earlyinit's
// order among the modules the lists chose, and is not noted as left out.
func TestPlanModulesEarlyinitOnly(t *testing.T) {
	for _, tt := range []struct {
		final []string
		want  []string
	}{
		{[]string{"scripts-user", "phone-home", "final-message"}, []string{"scripts_user", "post_password", "phone_home", "final_message"}},
		{[]string{"final_message", "scripts_user"}, []string{"post_password", "final_message", "scripts_user"}},
		{[]string{"runcmd"}, []string{"runcmd", "post_password"}},
		{nil, []string{"post_password"}},
	} {
		lists := imagecfg.ModuleLists{Set: true}
		for _, n := range tt.final {
			lists.Final = append(lists.Final, imagecfg.ModuleEntry{Name: n})
		}
		plan, notes := planModules(modules.All(), lists, modules.StageFinal, func(string) string { return "cloud.cfg" })
		var got []string
		for _, p := range plan {
			got = append(got, p.m.Name)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("lists %q: plan %q, want %q", tt.final, got, tt.want)
		}
		for _, n := range notes {
			if strings.Contains(n, "post_password") {
				t.Errorf("lists %q: note %q", tt.final, n)
			}
		}
	}
}
