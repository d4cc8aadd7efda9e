package selinux

import (
	"compress/gzip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp/syntax"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/rootfs"
	"golang.org/x/sys/unix"
)

// debianRoot is a root with Debian's reference policy (testdata/debian,
// SELINUXTYPE=default) and SELINUX=enforcing.
func debianRoot(t testing.TB) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, ContextsDir("default"))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"file_contexts", "file_contexts.homedirs", "file_contexts.subs_dist"} {
		var data []byte
		if f, err := os.Open(filepath.Join("testdata/debian", name+".gz")); err == nil {
			z, err := gzip.NewReader(f)
			if err != nil {
				t.Fatal(err)
			}
			data, err = io.ReadAll(z)
			f.Close()
			if err != nil {
				t.Fatal(err)
			}
		} else if data, err = os.ReadFile(filepath.Join("testdata/debian", name)); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeConfig(t, root, "SELINUX=enforcing\nSELINUXTYPE=default\n")
	return root
}

func writeConfig(t testing.TB, root, config string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(root, "etc/selinux"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, configPath), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
}

const (
	file = fs.FileMode(0)
	dir  = fs.ModeDir
	link = fs.ModeSymlink
)

// TestDebian looks up the paths earlyinit writes in Debian's policy. Each
// expectation names the entry that decides it (fc: file_contexts, hd:
// file_contexts.homedirs, sd: file_contexts.subs_dist, with line
// numbers); all were checked against libselinux 3.4's selabel_lookup on
// the same files.
func TestDebian(t *testing.T) {
	p, err := Load(debianRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	if p.Type != "default" || p.Mode != Enforcing || p.Entries != 5621 || p.Skipped != 0 {
		t.Errorf("policy %s %s, %d entries, %d skipped (%s); want default enforcing, 5621, 0", p.Type, p.Mode, p.Entries, p.Skipped, p.Warning())
	}
	for _, c := range []struct {
		mode fs.FileMode
		path string
		want string // "" for no label
		why  string
	}{
		{file, "/etc/hostname", "system_u:object_r:net_conf_t:s0", "fc 2598 `/etc/hostname -- net_conf_t`: exact beats fc 8 `/etc/.*`"},
		{link, "/etc/hostname", "system_u:object_r:etc_t:s0", "fc 2598 is for files (--): fc 8 `/etc/.*`"},
		{file, "/etc/hosts", "system_u:object_r:net_conf_t:s0", "fc 2472 `/etc/hosts --`"},
		{file, "/etc/resolv.conf", "system_u:object_r:net_conf_t:s0", "fc 1203 `/etc/resolv\\.conf.* --`"},
		{link, "/etc/resolv.conf", "system_u:object_r:etc_t:s0", "fc 1203 is for files: fc 8"},
		{dir, "/etc/systemd/network", "system_u:object_r:net_conf_t:s0", "fc 1784 `/etc/systemd/network(/.*)?`"},
		{file, "/etc/systemd/network/10-eth0.network", "system_u:object_r:net_conf_t:s0", "fc 1784"},
		{file, "/etc/systemd/network/10-eth0.link", "system_u:object_r:net_conf_t:s0", "fc 1784"},
		{file, "/etc/netplan/50-cloud-init.yaml", "system_u:object_r:etc_t:s0", "fc 8 `/etc/.*`: no netplan entry"},
		{file, "/etc/sysconfig/network-scripts/ifcfg-eth0", "system_u:object_r:etc_t:s0", "fc 8"},
		{file, "/etc/NetworkManager/system-connections/x.nmconnection", "system_u:object_r:NetworkManager_etc_rw_t:s0", "fc 2372 `/etc/NetworkManager/system-connections(/.*)?`"},
		{file, "/etc/udev/rules.d/70-persistent-net.rules", "system_u:object_r:udev_rules_t:s0", "fc 1420 `/etc/udev/rules\\.d(/.*)?`"},
		{file, "/var/lib/cloud/instances/iid/user-data.txt", "system_u:object_r:var_lib_t:s0", "fc 178 `/var/lib(/.*)?`"},
		{dir, "/var/lib/earlyinit", "system_u:object_r:var_lib_t:s0", "fc 178"},
		{dir, "/home/debian", "unconfined_u:object_r:user_home_dir_t:s0", "hd 125 `/home/[^/]+ -d`"},
		{file, "/home/debian", "system_u:object_r:default_t:s0", "hd 125 is for directories: fc 1 `/.*`"},
		{dir, "/home/debian/.ssh", "unconfined_u:object_r:ssh_home_t:s0", "hd 21 `/home/[^/]+/\\.ssh(/.*)?`"},
		{file, "/home/debian/.ssh/authorized_keys", "unconfined_u:object_r:ssh_home_t:s0", "hd 21: after hd 13 `/home/[^/]+/.+`"},
		{dir, "/root", "unconfined_u:object_r:user_home_dir_t:s0", "hd 301 `/root -d`: exact"},
		{file, "/root/.ssh/authorized_keys", "unconfined_u:object_r:ssh_home_t:s0", "hd 197 `/root/\\.ssh(/.*)?`"},
		{dir, "/run/earlyinit", "", "fc 10 `/run/.* <<none>>`"},
		{file, "/run/earlyinit/earlyinit", "", "fc 10"},
		{link, "/var/run/x", "", "sd `/var/run /run`, then fc 10"},
		{file, "/bin/sh", "system_u:object_r:shell_exec_t:s0", "sd `/bin /usr/bin`, then fc 2496 `/usr/bin/sh --`"},
		{link, "/etc/systemd/system/multi-user.target.wants/earlyinit.service", "system_u:object_r:systemd_unit_t:s0",
			"sd `/etc/systemd/system /usr/lib/systemd/system`, then fc 1989 `/usr/lib/systemd/system(/.*)?`"},
		{dir, "/", "system_u:object_r:root_t:s0", "fc 2392 `/ -d`"},
		{file, "//etc//hostname/", "system_u:object_r:net_conf_t:s0", "cleaned to /etc/hostname"},
	} {
		got, ok := p.Lookup(c.path, c.mode)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("Lookup(%s, %v) = %q, %v; want %q (%s)", c.path, c.mode, got, ok, c.want, c.why)
		}
	}
}

// TestDebianProgramSizes measures Debian's expressions, the figures
// maxRegexInsts, maxPolicyInsts and maxPolicyParse are chosen from:
// progSize is exact on each, and the limits keep at least ten times the
// room Debian needs.
func TestDebianProgramSizes(t *testing.T) {
	p, err := Load(debianRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	var n, largest, total int
	var walk func(*node)
	walk = func(nd *node) {
		for _, s := range nd.regexes {
			tree, err := syntax.Parse(s.expr, syntax.Perl)
			if err != nil {
				t.Fatal(err)
			}
			prog, err := syntax.Compile(tree.Simplify())
			if err != nil {
				t.Fatal(err)
			}
			size := int(progSize(tree))
			if size != len(prog.Inst) {
				t.Errorf("%s: progSize %d, compiled %d", s.expr, size, len(prog.Inst))
			}
			n++
			largest = max(largest, size)
			total += size
		}
		for _, c := range nd.children {
			walk(c)
		}
	}
	for _, nd := range p.nodes() {
		walk(nd)
	}
	if n != 2685 || largest != 78 || total != 79190 || p.insts != total || p.parsed != 103099 {
		t.Errorf("%d expressions, the largest %d instructions, %d together (policy: %d), %d bytes; want 2685, 78, 79190, 103099",
			n, largest, total, p.insts, p.parsed)
	}
	if 10*largest > maxRegexInsts || 10*total > maxPolicyInsts || 10*p.parsed > maxPolicyParse {
		t.Errorf("limits %d, %d and %d: under ten times %d, %d and %d", maxRegexInsts, maxPolicyInsts, maxPolicyParse, largest, total, p.parsed)
	}
}

// BenchmarkLoad loads Debian's policy: 5621 entries, 2685 of them regular
// expressions.
func BenchmarkLoad(b *testing.B) {
	root := debianRoot(b)
	for b.Loop() {
		if _, err := Load(root); err != nil {
			b.Fatal(err)
		}
	}
}

// bootPaths are some of the paths a boot writes.
var bootPaths = []struct {
	p string
	m fs.FileMode
}{
	{"/etc/hostname", file}, {"/etc/systemd/network/10-eth0.network", file},
	{"/var/lib/cloud/instances/iid/user-data.txt", file}, {"/home/debian/.ssh/authorized_keys", file},
	{"/etc/netplan/50-cloud-init.yaml", file}, {"/run/earlyinit", dir},
}

// BenchmarkLookup looks up the paths earlyinit writes in Debian's policy,
// its regular expressions compiled (the first lookups compile those they
// need).
func BenchmarkLookup(b *testing.B) {
	p, err := Load(debianRoot(b))
	if err != nil {
		b.Fatal(err)
	}
	for _, x := range bootPaths {
		p.Lookup(x.p, x.m)
	}
	for _, x := range bootPaths {
		b.Run(x.p, func(b *testing.B) {
			for b.Loop() {
				p.Lookup(x.p, x.m)
			}
		})
	}
}

// BenchmarkBoot is what a boot paid before OpenRoot deferred the checks:
// Load (every expression checked), then the lookups of the files it
// writes, which compile the expressions they need.
func BenchmarkBoot(b *testing.B) {
	root := debianRoot(b)
	defer reportCPU(b)()
	for b.Loop() {
		p, err := Load(root)
		if err != nil {
			b.Fatal(err)
		}
		for _, x := range bootPaths {
			p.Lookup(x.p, x.m)
		}
	}
}

// BenchmarkBootDeferred is what a boot pays through OpenRoot: the load
// with the checks deferred, then the same lookups, which check and
// compile the expressions their paths can match.
func BenchmarkBootDeferred(b *testing.B) {
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
		for _, x := range bootPaths {
			p.Lookup(x.p, x.m)
		}
	}
}

// reportCPU reports, when the returned function runs after the loop, the
// process's CPU time per iteration (cpu-ns/op): steadier than ns/op on a
// host busy with other work.
func reportCPU(b *testing.B) func() {
	c0 := cpuTime()
	return func() { b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op") }
}

// cpuTime is this process's CPU time, user and system, all threads.
func cpuTime() time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
