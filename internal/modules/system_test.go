package modules

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

func TestHostname(t *testing.T) {
	for _, tc := range []struct {
		cfg, meta, want, hosts string
	}{
		{"", "web1.example.com", "web1", "127.0.1.1\tweb1.example.com\tweb1\n"},
		{"fqdn: db.example.org", "web1", "db", "127.0.1.1\tdb.example.org\tdb\n"},
		{"hostname: h2.corp", "web1", "h2", "127.0.1.1\th2.corp\th2\n"},
		{"hostname: plain", "web1.example.com", "plain", "127.0.1.1\tweb1.example.com\tplain\n"},
		{"fqdn: a.b.c\nprefer_fqdn_over_hostname: true", "", "a.b.c", "127.0.1.1\ta.b.c\ta\n"},
	} {
		te := coretest.NewEnv(t, tc.cfg+"\nmanage_etc_hosts: localhost\n")
		te.Data = &instance.Data{LocalHostname: tc.meta}
		te.Write("/etc/hosts", "127.0.0.1\tlocalhost\n", 0o644)
		if err := runModule(te, "set_hostname"); err != nil {
			t.Fatalf("%q: %v", tc.cfg, err)
		}
		te.WantFile("/etc/hostname", tc.want+"\n", 0o644, 0, 0)
		te.WantCalls("hostname " + tc.want)
		if err := runModule(te, "update_etc_hosts"); err != nil {
			t.Fatal(err)
		}
		if got := te.Read("/etc/hosts"); got != "127.0.0.1\tlocalhost\n"+tc.hosts {
			t.Errorf("%q: hosts %q", tc.cfg, got)
		}
	}
	// The kernel has the name already (systemd set it from the
	// initramfs's /etc/hostname): no command.
	old := core.OsHostname
	defer func() { core.OsHostname = old }()
	core.OsHostname = func() (string, error) { return "web1", nil }
	te := coretest.NewEnv(t, "")
	te.Data = &instance.Data{LocalHostname: "web1"}
	if err := runModule(te, "set_hostname"); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/etc/hostname", "web1\n", 0o644, 0, 0)
	te.WantCalls()
	core.OsHostname = old

	te = coretest.NewEnv(t, "preserve_hostname: true\nhostname: x")
	if err := runModule(te, "set_hostname"); err != nil || te.Root.Exists("/etc/hostname") {
		t.Errorf("preserve_hostname: %v", err)
	}
	te = coretest.NewEnv(t, "hostname: 'bad name'")
	if err := runModule(te, "set_hostname"); err == nil {
		t.Error("bad hostname accepted")
	}
}

func TestUpdateHostnameKeepsAdminChange(t *testing.T) {
	te := coretest.NewEnv(t, "hostname: one")
	if err := runModule(te, "set_hostname"); err != nil {
		t.Fatal(err)
	}
	te.Cfg["hostname"] = "two"
	if err := runModule(te, "update_hostname"); err != nil {
		t.Fatal(err)
	}
	if got := te.Read("/etc/hostname"); got != "two\n" {
		t.Errorf("update: %q", got)
	}
	te.Write("/etc/hostname", "admins\n", 0o644)
	te.Cfg["hostname"] = "three"
	te.Fake.Calls = nil
	if err := runModule(te, "update_hostname"); err != nil {
		t.Fatal(err)
	}
	if got := te.Read("/etc/hostname"); got != "admins\n" {
		t.Errorf("admin's name overwritten: %q", got)
	}
	te.WantCalls()
}

func TestEtcHostsTemplate(t *testing.T) {
	te := coretest.NewEnv(t, "manage_etc_hosts: true\nfqdn: n1.example.net\n")
	te.Write("/etc/hosts", "junk\n", 0o640)
	if err := runModule(te, "update_etc_hosts"); err != nil {
		t.Fatal(err)
	}
	got := te.Read("/etc/hosts")
	if !strings.Contains(got, "127.0.1.1 n1.example.net n1\n127.0.0.1 localhost\n") || strings.Contains(got, "junk") {
		t.Errorf("hosts %q", got)
	}
	te.WantMode("/etc/hosts", 0o640, 0, 0)
	te = coretest.NewEnv(t, "manage_etc_hosts: maybe\nhostname: x")
	if err := runModule(te, "update_etc_hosts"); err == nil {
		t.Error("bad manage_etc_hosts accepted")
	}
}

func TestTimezone(t *testing.T) {
	te := coretest.NewEnv(t, "timezone: Europe/Paris")
	te.Write("/usr/share/zoneinfo/Europe/Paris", "TZif-paris", 0o644)
	if err := runModule(te, "timezone"); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/etc/timezone", "Europe/Paris\n", 0o644, 0, 0)
	if l, err := te.Root.Readlink("/etc/localtime"); err != nil || l != "/usr/share/zoneinfo/Europe/Paris" {
		t.Errorf("localtime -> %q %v", l, err)
	}
	// A regular /etc/localtime is overwritten with a copy.
	te.Root.Remove("/etc/localtime")
	te.Write("/etc/localtime", "old", 0o644)
	if err := runModule(te, "timezone"); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/etc/localtime", "TZif-paris", 0o644, 0, 0)
	for _, tz := range []string{"Mars/Olympus", "../../etc/shadow", "/etc/passwd"} {
		te := coretest.NewEnv(t, "timezone: '"+tz+"'")
		if err := runModule(te, "timezone"); err == nil {
			t.Errorf("%s accepted", tz)
		}
	}
}

func TestMounts(t *testing.T) {
	te := coretest.NewEnv(t, `mounts:
  - [sdb1, /data]
  - [LABEL=logs, /var/log/app, ext4, "defaults,noatime", "0", "0"]
  - ["server:/export", /mnt/nfs, nfs, "rw,nofail"]
  - [ephemeral0, /mnt]
  - [/dev/vda1, /already]
`)
	te.Write("/etc/fstab", "# static\n/dev/vda1\t/\text4\tdefaults\t0\t1\n/dev/old\t/old\tauto\tdefaults,comment=earlyinit\t0\t2\n", 0o644)
	if err := runModule(te, "mounts"); err != nil {
		t.Fatal(err)
	}
	want := "# static\n/dev/vda1\t/\text4\tdefaults\t0\t1\n" +
		"/dev/sdb1\t/data\tauto\tdefaults,nofail,comment=earlyinit\t0\t2\n" +
		"LABEL=logs\t/var/log/app\text4\tdefaults,noatime,nofail,comment=earlyinit\t0\t0\n" +
		"server:/export\t/mnt/nfs\tnfs\trw,nofail,comment=earlyinit\t0\t2\n"
	te.WantFile("/etc/fstab", want, 0o644, 0, 0)
	for _, d := range []string{"/data", "/var/log/app", "/mnt/nfs"} {
		if fi, err := te.Root.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("%s not made: %v", d, err)
		}
	}
	// ephemeral0 is the datasource's device (device_name_to_device: on
	// OpenStack the file system so labelled): none here.
	blkid := "blkid -c /dev/null -l -o device -t LABEL=ephemeral0"
	te.WantCalls(blkid, "mount -a")
	// Idempotent: a second run changes nothing and mounts nothing.
	te.Fake.Calls = nil
	if err := runModule(te, "mounts"); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/etc/fstab", want, 0o644, 0, 0)
	te.WantCalls(blkid)

	te = coretest.NewEnv(t, "mounts: [[sdc, '/bad dir']]")
	if err := runModule(te, "mounts"); err == nil {
		t.Error("blank in a field accepted")
	}
}

func TestFinalMessage(t *testing.T) {
	te := coretest.NewEnv(t, "final_message: 'up $UPTIME at ${TIMESTAMP} v$version on $datasource $unknown'")
	te.Data = &instance.Data{Datasource: "nocloud", DatasourceClass: "NoCloud", Subplatform: "seed-dir (/s)"}
	te.Version = "0.9"
	te.Now = func() time.Time { return time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC) }
	te.Uptime = func() float64 { return 42.125 }
	if err := runModule(te, "final_message"); err != nil {
		t.Fatal(err)
	}
	want := "up 42.12 at Tue, 02 Jan 2024 03:04:05 +0000 v0.9 on DataSourceNoCloud: seed-dir (/s) $unknown\n"
	if te.OutBuf.String() != want {
		t.Errorf("output %q\nwant   %q", te.OutBuf.String(), want)
	}
	te.WantFile("/var/lib/earlyinit/instances/iid-1/boot-finished", "42.12 - Tue, 02 Jan 2024 03:04:05 +0000 - v. 0.9\n", 0o644, 0, 0)

	te = coretest.NewEnv(t, "")
	te.Version, te.Uptime = "1", func() float64 { return 1 }
	runModule(te, "final_message")
	if !strings.HasPrefix(te.OutBuf.String(), "earlyinit v. 1 finished at ") || !strings.HasSuffix(te.OutBuf.String(), "Up 1.00 seconds\n") {
		t.Errorf("default %q", te.OutBuf.String())
	}
}

func TestPowerState(t *testing.T) {
	for _, tc := range []struct {
		cfg  string
		argv string
		err  bool
	}{
		{"power_state: {mode: poweroff}", "shutdown -P now", false},
		{"power_state: {mode: reboot, delay: '+5', message: bye now}", "shutdown -r +5 bye now", false},
		{"power_state: {mode: halt, delay: 10}", "shutdown -H +10", false},
		{"power_state: {mode: explode}", "", true},
		{"power_state: {mode: poweroff, delay: soon}", "", true},
		{"power_state: {mode: poweroff, timeout: x}", "", true},
	} {
		te := coretest.NewEnv(t, tc.cfg)
		err := runModule(te, "power_state")
		if (err != nil) != tc.err {
			t.Errorf("%s: err %v", tc.cfg, err)
			continue
		}
		if tc.err {
			if te.Power != nil {
				t.Errorf("%s: request made", tc.cfg)
			}
			continue
		}
		if strings.Join(te.Power.Argv, " ") != tc.argv {
			t.Errorf("%s: argv %q", tc.cfg, te.Power.Argv)
		}
		te.WantCalls() // nothing runs in the module
	}
	x := &coretest.FakeExec{Handlers: map[string]func(core.Cmd) ([]byte, error){}}
	ctx := context.Background()
	for _, tc := range []struct {
		cond any
		exit int
		want bool
		err  bool
	}{
		{nil, 0, true, false}, {true, 0, true, false}, {false, 0, false, false},
		{"test -f /x", 0, true, false}, {"test -f /x", 1, false, false}, {[]any{"false"}, 1, false, false},
		{"weird", 2, false, true},
	} {
		code := tc.exit
		x.Handlers["sh"] = func(core.Cmd) ([]byte, error) {
			if code != 0 {
				return nil, coretest.ExitErr(code)
			}
			return nil, nil
		}
		x.Handlers["false"] = x.Handlers["sh"]
		ok, err := (&core.PowerRequest{Condition: tc.cond, Timeout: time.Second}).Go(ctx, x)
		if ok != tc.want || (err != nil) != tc.err {
			t.Errorf("condition %v exit %d: %v %v", tc.cond, tc.exit, ok, err)
		}
	}
}

func TestLookupAndActive(t *testing.T) {
	for _, n := range []string{"users-groups", "cc_users_groups", "power-state-change", "write-files-deferred"} {
		if _, ok := Lookup(n); !ok {
			t.Errorf("Lookup(%q) failed", n)
		}
	}
	if _, ok := Lookup("landscape"); ok {
		t.Error("unknown module found")
	}
	m, _ := Lookup("runcmd")
	if m.Active(map[string]any{}) || !m.Active(map[string]any{"runcmd": nil}) {
		t.Error("runcmd activation")
	}
	seen := map[string]bool{}
	for _, m := range All() {
		if seen[m.Name] || m.Run == nil {
			t.Errorf("module %s duplicated or without Run", m.Name)
		}
		seen[m.Name] = true
	}
}

func TestForSysvinit(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"shutdown -P now", "shutdown -h -P now"},
		{"shutdown -H +5 bye", "shutdown -h -H +5 bye"},
		{"shutdown -r now", "shutdown -r now"},
		{"poweroff", "poweroff"},
	} {
		if got := strings.Join(core.ForSysvinit(strings.Fields(c.in)), " "); got != c.want {
			t.Errorf("ForSysvinit(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
