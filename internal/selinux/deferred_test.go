package selinux

import (
	"io/fs"
	"testing"

	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// bootWrites are the paths the initramfs's steps write through OpenRoot's
// Root (internal/provision: the instance step's cache, earlyinit's and
// cloud-init's, hostname, hosts and a config drive's injected files; the
// network step's files of every renderer, the persistent names, the
// cloud-init drop-in), and lateWrites some the late stages write (users'
// keys, host keys, sshd and sudoers drop-ins, the modules' files,
// write_files anywhere), each with the label Load gives it in Debian's
// policy. Every one of them is under its policy's paths as refpolicy
// labels them (net_conf_t for the network files, var_lib_t for the
// caches, ssh_home_t, sshd_key_t, <<none>> under /run).
var bootWrites = []lookup{
	{file, "/etc/hostname", "system_u:object_r:net_conf_t:s0"},
	{file, "/etc/hosts", "system_u:object_r:net_conf_t:s0"},
	{dir, "/etc/cloud", "system_u:object_r:etc_t:s0"},
	{dir, "/etc/cloud/cloud.cfg.d", "system_u:object_r:etc_t:s0"},
	{file, "/etc/cloud/cloud.cfg.d/99-earlyinit-disable-network-config.cfg", "system_u:object_r:etc_t:s0"},
	{dir, "/etc/systemd", "system_u:object_r:etc_t:s0"},
	{dir, "/etc/systemd/network", "system_u:object_r:net_conf_t:s0"},
	{file, "/etc/systemd/network/10-cloud-init-eth0.network", "system_u:object_r:net_conf_t:s0"},
	{file, "/etc/systemd/network/10-cloud-init-bond0.netdev", "system_u:object_r:net_conf_t:s0"},
	{file, "/etc/systemd/network/10-earlyinit-eth0.link", "system_u:object_r:net_conf_t:s0"},
	{dir, "/etc/netplan", "system_u:object_r:etc_t:s0"},
	{file, "/etc/netplan/50-earlyinit.yaml", "system_u:object_r:etc_t:s0"},
	{file, "/etc/network/interfaces", "system_u:object_r:etc_t:s0"},
	{dir, "/etc/network/interfaces.d", "system_u:object_r:etc_t:s0"},
	{file, "/etc/network/interfaces.d/50-earlyinit.cfg", "system_u:object_r:etc_t:s0"},
	{dir, "/etc/sysconfig", "system_u:object_r:etc_t:s0"},
	{file, "/etc/sysconfig/network", "system_u:object_r:etc_t:s0"},
	{dir, "/etc/sysconfig/network-scripts", "system_u:object_r:etc_t:s0"},
	{file, "/etc/sysconfig/network-scripts/ifcfg-eth0", "system_u:object_r:etc_t:s0"},
	{file, "/etc/sysconfig/network-scripts/route-eth0", "system_u:object_r:etc_t:s0"},
	{file, "/etc/resolv.conf", "system_u:object_r:net_conf_t:s0"},
	{dir, "/etc/NetworkManager/conf.d", "system_u:object_r:NetworkManager_etc_t:s0"},
	{file, "/etc/NetworkManager/conf.d/99-cloud-init.conf", "system_u:object_r:NetworkManager_etc_t:s0"},
	{dir, "/etc/NetworkManager/system-connections", "system_u:object_r:NetworkManager_etc_rw_t:s0"},
	{file, "/etc/NetworkManager/system-connections/cloud-init-eth0.nmconnection", "system_u:object_r:NetworkManager_etc_rw_t:s0"},
	{dir, "/etc/udev/rules.d", "system_u:object_r:udev_rules_t:s0"},
	{file, "/etc/udev/rules.d/70-persistent-net.rules", "system_u:object_r:udev_rules_t:s0"},
	{dir, "/etc/app", "system_u:object_r:etc_t:s0"},
	{file, "/etc/app/app.conf", "system_u:object_r:etc_t:s0"},
	{dir, "/etc/motd.d", "system_u:object_r:etc_t:s0"},
	{file, "/etc/motd.d/10-cloud", "system_u:object_r:etc_t:s0"},
	{dir, "/var", "system_u:object_r:var_t:s0"},
	{dir, "/var/lib", "system_u:object_r:var_lib_t:s0"},
	{dir, "/var/lib/cloud", "system_u:object_r:var_lib_t:s0"},
	{dir, "/var/lib/cloud/data", "system_u:object_r:var_lib_t:s0"},
	{file, "/var/lib/cloud/data/instance-id", "system_u:object_r:var_lib_t:s0"},
	{file, "/var/lib/cloud/data/previous-instance-id", "system_u:object_r:var_lib_t:s0"},
	{file, "/var/lib/cloud/data/previous-datasource", "system_u:object_r:var_lib_t:s0"},
	{link, "/var/lib/cloud/instance", "system_u:object_r:var_lib_t:s0"},
	{dir, "/var/lib/cloud/instances", "system_u:object_r:var_lib_t:s0"},
	{dir, "/var/lib/cloud/instances/iid-1", "system_u:object_r:var_lib_t:s0"},
	{file, "/var/lib/cloud/instances/iid-1/datasource", "system_u:object_r:var_lib_t:s0"},
	{file, "/var/lib/cloud/instances/iid-1/user-data.txt", "system_u:object_r:var_lib_t:s0"},
	{file, "/var/lib/cloud/instances/iid-1/vendor-data.txt", "system_u:object_r:var_lib_t:s0"},
	{dir, "/var/lib/cloud/instances/iid-1/sem", "system_u:object_r:var_lib_t:s0"},
	{dir, "/var/lib/earlyinit", "system_u:object_r:var_lib_t:s0"},
	{dir, "/var/lib/earlyinit/data", "system_u:object_r:var_lib_t:s0"},
	{file, "/var/lib/earlyinit/data/instance-id", "system_u:object_r:var_lib_t:s0"},
	{file, "/var/lib/earlyinit/data/network-config.sha256", "system_u:object_r:var_lib_t:s0"},
	{link, "/var/lib/earlyinit/instance", "system_u:object_r:var_lib_t:s0"},
	{dir, "/var/lib/earlyinit/instances/iid-1", "system_u:object_r:var_lib_t:s0"},
	{file, "/var/lib/earlyinit/instances/iid-1/user-data.txt", "system_u:object_r:var_lib_t:s0"},
	{dir, "/var/lib/earlyinit/instances/iid-1/sem", "system_u:object_r:var_lib_t:s0"},
}

var lateWrites = []lookup{
	{dir, "/home/alice", "unconfined_u:object_r:user_home_dir_t:s0"},
	{dir, "/home/alice/.ssh", "unconfined_u:object_r:ssh_home_t:s0"},
	{file, "/home/alice/.ssh/authorized_keys", "unconfined_u:object_r:ssh_home_t:s0"},
	{dir, "/root/.ssh", "unconfined_u:object_r:ssh_home_t:s0"},
	{file, "/root/.ssh/authorized_keys", "unconfined_u:object_r:ssh_home_t:s0"},
	{file, "/etc/ssh/ssh_host_ed25519_key", "system_u:object_r:sshd_key_t:s0"},
	{file, "/etc/ssh/ssh_host_ed25519_key.pub", "system_u:object_r:sshd_key_t:s0"},
	{file, "/etc/ssh/ssh_host_rsa_key", "system_u:object_r:sshd_key_t:s0"},
	{file, "/etc/ssh/ssh_host_ecdsa_key", "system_u:object_r:sshd_key_t:s0"},
	{file, "/etc/ssh/sshd_config", "system_u:object_r:etc_t:s0"},
	{dir, "/etc/ssh/sshd_config.d", "system_u:object_r:etc_t:s0"},
	{file, "/etc/ssh/sshd_config.d/50-earlyinit-pwauth.conf", "system_u:object_r:etc_t:s0"},
	{dir, "/etc/sudoers.d", "system_u:object_r:etc_t:s0"},
	{file, "/etc/sudoers.d/90-earlyinit-users", "system_u:object_r:etc_t:s0"},
	{file, "/var/lib/earlyinit/instances/iid-1/sem/config_ssh", "system_u:object_r:var_lib_t:s0"},
	{file, "/var/lib/cloud/instances/iid-1/sem/config_ssh", "system_u:object_r:var_lib_t:s0"},
	{file, "/etc/apt/sources.list", "system_u:object_r:etc_t:s0"},
	{file, "/etc/apt/apt.conf.d/90cloud-init-aptproxy", "system_u:object_r:etc_t:s0"},
	{file, "/etc/default/locale", "system_u:object_r:etc_t:s0"},
	{file, "/etc/timezone", "system_u:object_r:locale_t:s0"},
	{link, "/etc/localtime", "system_u:object_r:etc_t:s0"},
	{file, "/etc/fstab", "system_u:object_r:etc_t:s0"},
	{file, "/etc/motd", "system_u:object_r:etc_t:s0"},
	{file, "/etc/machine-id", "system_u:object_r:etc_t:s0"},
	{file, "/etc/chrony/chrony.conf", "system_u:object_r:etc_t:s0"},
	{file, "/etc/systemd/timesyncd.conf.d/cloud-init.conf", "system_u:object_r:etc_t:s0"},
	{file, "/etc/rsyslog.d/20-cloud-config.conf", "system_u:object_r:syslog_conf_t:s0"},
	{file, "/etc/ssl/certs/ca-certificates.crt", "system_u:object_r:cert_t:s0"},
	{file, "/etc/wireguard/wg0.conf", "system_u:object_r:etc_t:s0"},
	{file, "/etc/yum.repos.d/corp.repo", "system_u:object_r:etc_t:s0"},
	{file, "/etc/earlyinit/disabled", "system_u:object_r:etc_t:s0"},
	{file, "/etc/cloud/cloud-init.disabled", "system_u:object_r:etc_t:s0"},
	{link, "/etc/systemd/system/multi-user.target.wants/earlyinit.service", "system_u:object_r:systemd_unit_t:s0"},
	{dir, "/run/earlyinit", ""},
	{file, "/run/earlyinit/status.json", ""},
	{file, "/run/reboot-required", ""},
	{file, "/var/log/cloud-init.log", "system_u:object_r:var_log_t:s0"},
	{file, "/var/log/cloud-init-output.log", "system_u:object_r:var_log_t:s0"},
	{file, "/etc/e2e/plain.txt", "system_u:object_r:etc_t:s0"},
	{file, "/opt/app/b64", "system_u:object_r:usr_t:s0"},
	{file, "/srv/carol/.ssh/authorized_keys", "system_u:object_r:var_t:s0"},
}

// deferredDebian is Debian's policy as OpenRoot loads it: checks deferred.
func deferredDebian(t testing.TB) *Policy {
	t.Helper()
	r, err := rootfs.Open(debianRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	c, err := readConfig(r)
	if err != nil {
		t.Fatal(err)
	}
	p, err := load(r, *c, true)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDeferredDebianWrites: for every path earlyinit writes, the label
// OpenRoot's policy (checks deferred to the lookups) gives is the full
// Load's; and the boot checks a few dozen of Debian's 2,685 expressions.
func TestDeferredDebianWrites(t *testing.T) {
	full, err := Load(debianRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	checkLookups(t, full, bootWrites)
	checkLookups(t, full, lateWrites)
	p := deferredDebian(t)
	if p.Entries != full.Entries+full.Skipped || p.Skipped != 0 {
		t.Errorf("deferred: %d entries, %d skipped; want %d, 0", p.Entries, p.Skipped, full.Entries+full.Skipped)
	}
	checkLookups(t, p, bootWrites)
	boot := p.checked
	checkLookups(t, p, lateWrites)
	t.Logf("expressions checked: %d for the boot's %d paths, %d with the late stages' %d", boot, len(bootWrites), p.checked, len(lateWrites))
	if boot > 50 {
		t.Errorf("the boot's paths checked %d expressions; want a few dozen at most", boot)
	}
	if w := p.Warning(); w != "" {
		t.Errorf("warning %q", w)
	}
}

// TestDeferredDebianAll: the deferred checks and builds give Load's label
// for every kind of object at every exact path of Debian's policy, and at
// paths made from every expression's literal prefix, so that every
// expression is checked and run against paths it may match.
func TestDeferredDebianAll(t *testing.T) {
	full, err := Load(debianRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	p := deferredDebian(t)
	keys := map[string]bool{}
	for _, b := range full.allBuckets() {
		for k := range b.literals {
			keys[k] = true
		}
	}
	exprs := 0
	var walk func(*node)
	walk = func(n *node) {
		exprs += len(n.regexes)
		for _, s := range n.regexes {
			for _, tail := range []string{"", "x", "/", "/x", "/x/y", "-1.0.so", "/.ssh/authorized_keys", "/lib/systemd/system/x.service"} {
				keys[s.prefix+tail] = true
			}
		}
		for _, c := range n.children {
			walk(c)
		}
	}
	for _, nd := range full.nodes() {
		walk(nd)
	}
	for _, x := range append(bootWrites, lateWrites...) {
		keys[x.path] = true
	}
	modes := []fs.FileMode{file, dir, link, fs.ModeDevice | fs.ModeCharDevice, fs.ModeDevice, fs.ModeNamedPipe, fs.ModeSocket}
	n := 0
	for k := range keys {
		for _, m := range modes {
			c, ok := full.Lookup(k, m)
			if dc, dok := p.Lookup(k, m); dc != c || dok != ok {
				t.Errorf("Lookup(%q, %v): Load %q, %v; deferred %q, %v", k, m, c, ok, dc, dok)
			}
			n++
		}
	}
	t.Logf("%d lookups at %d paths; %d of the %d expressions checked", n, len(keys), p.checked, exprs)
	if p.checked < exprs*99/100 {
		t.Errorf("only %d of %d expressions checked: the paths do not reach them", p.checked, exprs)
	}
}

// TestDeferredConcurrent: lookups from many goroutines at once check and
// compile each expression once and agree with Load (run with -race).
func TestDeferredConcurrent(t *testing.T) {
	full, err := Load(debianRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	p := deferredDebian(t)
	all := append(append([]lookup(nil), bootWrites...), lateWrites...)
	done := make(chan struct{})
	for g := 0; g < 8; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range all {
				x := all[(i+g*7)%len(all)]
				p.Lookup(x.path, x.mode)
				p.Warning()
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
	checkLookups(t, p, all)
	checkLookups(t, full, all)
	if p.checked != 178 {
		t.Errorf("%d expressions checked; want 178, each once", p.checked)
	}
}

// BenchmarkBootWrites is the policy's part of an initramfs boot through
// OpenRoot: the load with the checks deferred, then a lookup of every
// path the initramfs's steps write (bootWrites; BenchmarkBootDeferred's
// paths include a home directory, whose 128 expressions only the late
// stages need).
func BenchmarkBootWrites(b *testing.B) {
	r, err := rootfs.Open(debianRoot(b))
	if err != nil {
		b.Fatal(err)
	}
	c, err := readConfig(r)
	if err != nil {
		b.Fatal(err)
	}
	defer reportCPU(b)()
	for b.Loop() {
		p, err := load(r, *c, true)
		if err != nil {
			b.Fatal(err)
		}
		for _, x := range bootWrites {
			p.Lookup(x.path, x.mode)
		}
	}
}
