package late

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/instance/cache"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

type exitErr int

func (e exitErr) Error() string { return fmt.Sprintf("exit status %d", int(e)) }
func (e exitErr) ExitCode() int { return int(e) }

type fakeExec struct {
	mu       sync.Mutex
	dir      string
	calls    []string
	handlers map[string]func(core.Cmd) ([]byte, error)
}

func (f *fakeExec) Run(_ context.Context, c core.Cmd) ([]byte, error) {
	f.mu.Lock()
	f.calls = append(f.calls, strings.ReplaceAll(c.String(), f.dir, ""))
	h := f.handlers[filepath.Base(c.Name)]
	f.mu.Unlock()
	if h != nil {
		return h(c)
	}
	return nil, nil
}

type fixture struct {
	t       *testing.T
	dir     string
	root    *rootfs.Root
	exec    *fakeExec
	actions [][]string
	clock   time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	dir := t.TempDir()
	r, err := rootfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: dir, root: r, exec: &fakeExec{dir: dir, handlers: map[string]func(core.Cmd) ([]byte, error){}},
		clock: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)}
	for name, content := range map[string]string{
		"/etc/passwd": "root:x:0:0:root:/root:/bin/bash\n",
		"/etc/group":  "root:x:0:\n",
	} {
		if err := r.WriteFile(name, []byte(content), 0o644, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// store caches an instance as the boot step does.
func (f *fixture) store(iid, userData string) {
	f.t.Helper()
	d := &instance.Data{Datasource: "nocloud", DatasourceClass: "NoCloud", Subplatform: "seed-dir (/x)", InstanceID: iid, LocalHostname: "host1.example.com",
		UserData: []byte(userData), PublicKeys: []string{"ssh-ed25519 AAAAmeta meta@key"}, Meta: map[string]any{"local-hostname": "host1.example.com"}}
	if err := cache.New(f.root).Store(d, cache.StoreOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) opts(mods []modules.Module) Options {
	return Options{
		Root: f.root, Exec: f.exec, Version: "1.2.3", Modules: mods,
		Now:    func() time.Time { f.clock = f.clock.Add(time.Second); return f.clock },
		Uptime: func() float64 { return 12.5 },
		Action: func(_ context.Context, argv []string) error { f.actions = append(f.actions, argv); return nil },
	}
}

func (f *fixture) run(stage modules.Stage, mods []modules.Module) *Result {
	f.t.Helper()
	res, err := Run(context.Background(), stage, f.opts(mods))
	if err != nil {
		f.t.Fatalf("Run %s: %v", stage, err)
	}
	return res
}

func (f *fixture) read(name string) string {
	f.t.Helper()
	b, err := f.root.ReadFile(name)
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

// counting modules for frequency tests.
type counter struct {
	runs map[string]int
	fail map[string]int // fail the first n runs
}

func (c *counter) module(name string, stage modules.Stage, f modules.Frequency) modules.Module {
	return modules.Module{Name: name, Stage: stage, Frequency: f, Run: func(context.Context, *core.Env) error {
		c.runs[name]++
		if c.fail[name] > 0 {
			c.fail[name]--
			return errors.New(name + " broke")
		}
		return nil
	}}
}

func TestFrequencies(t *testing.T) {
	f := newFixture(t)
	c := &counter{runs: map[string]int{}, fail: map[string]int{"flaky": 1}}
	mods := []modules.Module{
		c.module("inst", modules.StageBoot, modules.PerInstance),
		c.module("always", modules.StageBoot, modules.Always),
		c.module("once", modules.StageBoot, modules.Once),
		c.module("flaky", modules.StageBoot, modules.PerInstance),
		{Name: "inactive", Stage: modules.StageBoot, Frequency: modules.Always, Keys: []string{"nothing_sets_this"},
			Run: func(context.Context, *core.Env) error { c.runs["inactive"]++; return nil }},
		c.module("later", modules.StageFinal, modules.PerInstance),
	}
	f.store("iid-1", "")
	res := f.run(modules.StageBoot, mods)
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "flaky broke") {
		t.Errorf("errors %q", res.Errors)
	}
	statuses := map[string]string{}
	for _, m := range res.Modules {
		statuses[m.Name] = m.Status
	}
	want := map[string]string{"inst": "ok", "always": "ok", "once": "ok", "flaky": "error", "inactive": "skipped"}
	if !reflect.DeepEqual(statuses, want) {
		t.Errorf("statuses %v, want %v", statuses, want)
	}
	// As in cloud-init, a module that failed is still marked as run.
	if !f.root.Exists(semPath("iid-1", "flaky", modules.PerInstance)) {
		t.Error("failed module wrote no semaphore: it would run again every boot")
	}
	if !f.root.Exists("/var/lib/earlyinit/instances/iid-1/sem/inst") || !f.root.Exists("/var/lib/earlyinit/sem/once.once") {
		t.Error("semaphores missing")
	}
	f.run(modules.StageBoot, mods) // second boot, same instance
	f.store("iid-2", "")
	f.run(modules.StageBoot, mods) // new instance
	wantRuns := map[string]int{"inst": 2, "always": 3, "once": 1, "flaky": 2}
	if !reflect.DeepEqual(c.runs, wantRuns) {
		t.Errorf("runs %v, want %v", c.runs, wantRuns)
	}
}

func TestStatusAndResult(t *testing.T) {
	f := newFixture(t)
	c := &counter{runs: map[string]int{}, fail: map[string]int{"bad": 1}}
	mods := []modules.Module{
		c.module("good", modules.StageBoot, modules.Always),
		c.module("bad", modules.StageFinal, modules.Always),
	}
	rep, err := Status(f.dir)
	if err != nil || rep.Status != StatusNotRun || rep.ExitCode() != 0 {
		t.Fatalf("before: %+v %v", rep, err)
	}
	f.store("iid-1", "")
	f.run(modules.StageBoot, mods)
	rep, _ = Status(f.dir)
	if rep.Status != StatusRunning || rep.Datasource != "DataSourceNoCloud: seed-dir (/x)" {
		t.Errorf("after boot: %+v", rep)
	}
	f.run(modules.StageFinal, mods)
	rep, _ = Status(f.dir)
	if rep.Status != StatusError || rep.ExitCode() != 1 || !reflect.DeepEqual(rep.Errors, []string{"module bad: bad broke"}) {
		t.Errorf("after final: %+v", rep)
	}
	var rf resultFile
	if err := json.Unmarshal([]byte(f.read(ResultFile)), &rf); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rf.V1.Errors, []string{"module bad: bad broke"}) || rf.V1.Datasource == nil {
		t.Errorf("result.json %+v", rf)
	}
	var sf statusFile
	if err := json.Unmarshal([]byte(f.read(StatusFile)), &sf); err != nil {
		t.Fatal(err)
	}
	if sf.V1.Stage != nil || sf.V1.Boot.Finished == nil || sf.V1.Final.Modules[0].Name != "bad" || sf.V1.Final.Modules[0].Status != "error" {
		t.Errorf("status.json %s", f.read(StatusFile))
	}

	// Next boot: a fresh status, no result until final; then done.
	f.run(modules.StageBoot, mods)
	if f.root.Exists(ResultFile) {
		t.Error("result.json survived into the next boot")
	}
	f.run(modules.StageFinal, mods)
	rep, _ = Status(f.dir)
	if rep.Status != statusDone || rep.ExitCode() != 0 || rep.LastUpdate == "" {
		t.Errorf("second boot: %+v", rep)
	}

	// Degraded: warnings (an unknown key) but no error.
	f.store("iid-2", "#cloud-config\nno_such_key: 1\n")
	f.run(modules.StageBoot, mods)
	f.run(modules.StageFinal, mods)
	rep, _ = Status(f.dir)
	if rep.Status != statusDone || rep.ExtendedStatus != "degraded done" || rep.ExitCode() != 2 || len(rep.RecoverableErrors["WARNING"]) == 0 {
		t.Errorf("degraded: %+v", rep)
	}

	// Disabled.
	if err := f.root.WriteFile(paths.DisabledFile, nil, 0o644, 0, 0); err != nil {
		t.Fatal(err)
	}
	rep, _ = Status(f.dir)
	if rep.Status != StatusDisabled || rep.BootStatusCode != "disabled-by-marker-file" {
		t.Errorf("disabled: %+v", rep)
	}
	res := f.run(modules.StageBoot, mods)
	if !res.Disabled || len(res.Modules) != 0 {
		t.Errorf("disabled run: %+v", res)
	}
}

func TestStatusDisabledNotRun(t *testing.T) {
	f := newFixture(t)
	f.root.WriteFile(paths.DisabledFile, nil, 0o644, 0, 0)
	rep, err := Status(f.dir)
	if err != nil || rep.Status != StatusDisabled || rep.ExitCode() != 0 {
		t.Errorf("%+v %v", rep, err)
	}
	f2 := newFixture(t)
	f2.root.WriteFile("/proc/cmdline", []byte("quiet earlyinit=disabled\n"), 0o644, 0, 0)
	if rep, _ := Status(f2.dir); rep.Status != StatusDisabled || rep.BootStatusCode != "disabled-by-kernel-cmdline" {
		t.Errorf("cmdline: %+v", rep)
	}
}

func TestNoInstance(t *testing.T) {
	f := newFixture(t)
	res, err := Run(context.Background(), modules.StageBoot, f.opts(nil))
	if err == nil || !strings.Contains(err.Error(), "no cached instance") {
		t.Fatalf("err %v", err)
	}
	if len(res.Errors) != 1 {
		t.Errorf("errors %q", res.Errors)
	}
	if rep, _ := Status(f.dir); rep.Status != StatusError {
		t.Errorf("status %+v", rep)
	}
}

func TestRebootRequest(t *testing.T) {
	f := newFixture(t)
	ran := 0
	mods := []modules.Module{
		{Name: "asks", Stage: modules.StageBoot, Frequency: modules.PerInstance, Run: func(context.Context, *core.Env) error {
			return &core.Incomplete{Reboot: true, Rerun: true, Reason: "exit 1001"}
		}},
		{Name: "after", Stage: modules.StageBoot, Frequency: modules.Always, Run: func(context.Context, *core.Env) error { ran++; return nil }},
	}
	f.store("iid-1", "")
	res := f.run(modules.StageBoot, mods)
	if !res.Reboot || ran != 0 || res.Modules[0].Status != moduleIncomplete || res.Modules[1].Reason != "reboot requested" {
		t.Errorf("result %+v, ran %d", res, ran)
	}
	if !reflect.DeepEqual(f.actions, [][]string{{"shutdown", "-r", "now"}}) {
		t.Errorf("actions %q", f.actions)
	}
	if f.root.Exists(semPath("iid-1", "asks", modules.PerInstance)) {
		t.Error("semaphore written for a module to run again")
	}
	if len(res.Errors) != 0 {
		t.Errorf("errors %q", res.Errors)
	}
}

func TestRunSingle(t *testing.T) {
	f := newFixture(t)
	c := &counter{runs: map[string]int{}, fail: map[string]int{}}
	mods := []modules.Module{c.module("inst", modules.StageFinal, modules.PerInstance)}
	f.store("iid-1", "")
	for range 2 {
		if _, err := RunSingle(context.Background(), "inst", "", f.opts(mods)); err != nil {
			t.Fatal(err)
		}
	}
	if c.runs["inst"] != 1 {
		t.Errorf("per-instance single ran %d times", c.runs["inst"])
	}
	res, err := RunSingle(context.Background(), "inst", modules.Always, f.opts(mods))
	if err != nil || res.Status != ModuleOK || c.runs["inst"] != 2 {
		t.Errorf("--frequency always: %+v %v runs %d", res, err, c.runs["inst"])
	}
	if _, err := RunSingle(context.Background(), "nope", "", f.opts(mods)); err == nil {
		t.Error("unknown module: no error")
	}
	if f.root.Exists(StatusFile) {
		t.Error("single wrote status.json")
	}
}

// TestRealModules runs the real module list with a user-data that uses
// scripts, boothooks, bootcmd, runcmd and power_state.
func TestRealModules(t *testing.T) {
	f := newFixture(t)
	f.root.WriteFile("/usr/sbin/useradd", nil, 0o755, 0, 0)
	f.exec.handlers["useradd"] = func(c core.Cmd) ([]byte, error) {
		return nil, f.root.AppendFile("/etc/passwd", []byte(c.Args[0]+":x:1000:1000::/home/"+c.Args[0]+":/bin/sh\n"), 0o644, 0, 0)
	}
	ud := `Content-Type: multipart/mixed; boundary="B"
MIME-Version: 1.0

--B
Content-Type: text/cloud-config

#cloud-config
bootcmd: [echo boot]
runcmd: [[touch, /done]]
users: []
power_state: {mode: poweroff, message: bye}
--B
Content-Type: text/x-shellscript
Content-Disposition: attachment; filename="hello.sh"

#!/bin/sh
echo hello
--B
Content-Type: text/cloud-boothook

#cloud-boothook
#!/bin/sh
echo hook
--B
Content-Type: text/cloud-boothook

#cloud-boothook
echo no interpreter line
--B--
`
	f.store("iid-1", ud)
	boot := f.run(modules.StageBoot, nil)
	if len(boot.Errors) != 0 {
		t.Fatalf("boot errors %q", boot.Errors)
	}
	idir := "/var/lib/earlyinit/instances/iid-1"
	wantBoot := []string{
		idir + "/boothooks/part-003",
		"/bin/sh " + idir + "/boothooks/part-004",
		"/bin/sh /run/earlyinit/bootcmd",
		"hostname host1",
	}
	if !reflect.DeepEqual(f.exec.calls, wantBoot) {
		t.Errorf("boot commands:\n got %q\nwant %q", f.exec.calls, wantBoot)
	}
	if got := f.read(idir + "/boothooks/part-003"); got != "#!/bin/sh\necho hook" {
		t.Errorf("boothook %q", got)
	}
	if got := f.read("/root/.ssh/authorized_keys"); !strings.HasPrefix(got, `no-port-forwarding,`) || !strings.Contains(got, `rather than the user \"root\"`) || !strings.HasSuffix(got, " ssh-ed25519 AAAAmeta meta@key\n") {
		t.Errorf("root keys %q", got)
	}
	if out := f.read(OutputLogFile); !strings.Contains(out, "Generating public/private ecdsa key pair.") || !strings.Contains(out, "Generating public/private ed25519 key pair.") {
		t.Error("output log lacks ssh-keygen's words for the host keys made")
	}

	f.exec.calls = nil
	// Booted with systemd: its shutdown takes -P alone.
	if err := os.MkdirAll(filepath.Join(f.dir, "run/systemd/system"), 0o755); err != nil {
		t.Fatal(err)
	}
	final := f.run(modules.StageFinal, nil)
	if len(final.Errors) != 0 {
		t.Fatalf("final errors %q", final.Errors)
	}
	wantFinal := []string{idir + "/scripts/hello.sh", idir + "/scripts/runcmd"}
	if !reflect.DeepEqual(f.exec.calls, wantFinal) {
		t.Errorf("final commands:\n got %q\nwant %q", f.exec.calls, wantFinal)
	}
	if !reflect.DeepEqual(f.actions, [][]string{{"shutdown", "-P", "now", "bye"}}) {
		t.Errorf("actions %q", f.actions)
	}
	log := f.read(LogFile)
	if !strings.Contains(log, "earlyinit v. 1.2.3 finished at") || !strings.Contains(log, "Up 12.50 seconds") {
		t.Errorf("log lacks the final message:\n%s", log)
	}
	if rep, _ := Status(f.dir); rep.Status != statusDone {
		t.Errorf("status %+v", rep)
	}
	// cloud-init's boot-finished, which scripts wait for: final_message's.
	if got := f.read("/var/lib/cloud/instance/boot-finished"); got != f.read(idir+"/boot-finished") {
		t.Errorf("cloud-init's boot-finished %q", got)
	}

	// Second boot, same instance: bootcmd and the boothook again, not
	// runcmd nor the user script.
	f.exec.calls, f.actions = nil, nil
	f.run(modules.StageBoot, nil)
	if f.root.Exists("/var/lib/cloud/instance/boot-finished") {
		t.Error("cloud-init's boot-finished of the last boot kept through the boot stage")
	}
	f.run(modules.StageFinal, nil)
	if !f.root.Exists("/var/lib/cloud/instance/boot-finished") {
		t.Error("no cloud-init's boot-finished after the second boot")
	}
	want := []string{idir + "/boothooks/part-003", "/bin/sh " + idir + "/boothooks/part-004", "/bin/sh /run/earlyinit/bootcmd"}
	if !reflect.DeepEqual(f.exec.calls, want) {
		t.Errorf("second boot commands:\n got %q\nwant %q", f.exec.calls, want)
	}
	if len(f.actions) != 0 {
		t.Errorf("power_state ran again: %q", f.actions)
	}
}

func TestUnits(t *testing.T) {
	files, links := Units("/run/earlyinit/earlyinit")
	if len(files) != 2 || len(links) != 2 {
		t.Fatalf("%d files %d links", len(files), len(links))
	}
	boot, final := string(files[0].Data), string(files[1].Data)
	for _, want := range []string{"DefaultDependencies=no", "Before=network-pre.target", "Wants=network-pre.target",
		"After=local-fs.target systemd-remount-fs.service", "ExecStart=/run/earlyinit/earlyinit late --stage boot",
		"Type=oneshot", "RemainAfterExit=yes", "ConditionPathExists=!/etc/earlyinit/disabled"} {
		if !strings.Contains(boot, want+"\n") && !strings.Contains(boot, want+" ") {
			t.Errorf("boot unit lacks %q:\n%s", want, boot)
		}
	}
	// On a root with cloud-init, its targets are reached after the stages
	// that do their work.
	for _, want := range []string{"Before=network-pre.target shutdown.target sysinit.target cloud-config.target\n", "RequiresMountsFor=/var/lib/earlyinit /var/lib/cloud\n"} {
		if !strings.Contains(boot, want) {
			t.Errorf("boot unit lacks %q:\n%s", want, boot)
		}
	}
	for _, want := range []string{"After=network-online.target", "Wants=network-online.target", "ExecStart=/run/earlyinit/earlyinit late --stage final", "Type=oneshot", "Before=cloud-init.target\n"} {
		if !strings.Contains(final, want) {
			t.Errorf("final unit lacks %q:\n%s", want, final)
		}
	}
	if strings.Contains(final, "Before=multi-user.target") {
		t.Error("final unit holds multi-user.target")
	}
	f := newFixture(t)
	if err := InstallUnits(f.root, paths.LateBinary); err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		got, err := f.root.Readlink(l.Path)
		if err != nil || got != l.Target {
			t.Errorf("%s -> %q %v", l.Path, got, err)
		}
		// The link resolves to the unit.
		if b, err := f.root.ReadFile(l.Path); err != nil || len(b) == 0 {
			t.Errorf("%s does not resolve: %v", l.Path, err)
		}
	}
	if err := InstallUnits(f.root, "relative/earlyinit"); err == nil {
		t.Error("relative binary accepted")
	}
}

func TestClean(t *testing.T) {
	f := newFixture(t)
	f.store("iid-1", "")
	for _, p := range []string{"/var/lib/earlyinit/seed/nocloud/meta-data", "/var/lib/earlyinit/sem/x.once", LogFile, OutputLogFile,
		"/var/lib/cloud/seed/nocloud/meta-data", "/var/lib/cloud/sem/config_x.once"} {
		f.root.WriteFile(p, []byte("x"), 0o644, 0, 0)
	}
	if err := Clean(f.dir, false); err != nil {
		t.Fatal(err)
	}
	names, _ := listDir(f.root, paths.CacheDir)
	if !reflect.DeepEqual(names, []string{"seed"}) || !f.root.Exists("/var/lib/earlyinit/seed/nocloud/meta-data") {
		t.Errorf("left %q", names)
	}
	// cloud-init's record too, which earlyinit would read as its own.
	names, _ = listDir(f.root, paths.CloudDir)
	if !reflect.DeepEqual(names, []string{"seed"}) || !f.root.Exists("/var/lib/cloud/seed/nocloud/meta-data") {
		t.Errorf("left in %s: %q", paths.CloudDir, names)
	}
	if id, err := cache.New(f.root).CachedID(); err != nil || id != "" {
		t.Errorf("after clean: cached id %q, %v", id, err)
	}
	if !f.root.Exists(LogFile) {
		t.Error("logs removed without logs")
	}
	if err := Clean(f.dir, true); err != nil {
		t.Fatal(err)
	}
	if f.root.Exists(LogFile) || f.root.Exists(OutputLogFile) {
		t.Error("logs kept")
	}
}

// The boot stage puts the initramfs's log at the head of
// /var/log/earlyinit.log, but not on the console again: the console
// showed those lines when the initramfs wrote them.
func TestInitramfsLogToFileOnly(t *testing.T) {
	f := newFixture(t)
	f.store("iid-1", "")
	if err := f.root.WriteFile(paths.InitramfsLogFile, []byte("earlyinit: [   0.011] a line from the initramfs\n"), 0o600, 0, 0); err != nil {
		t.Fatal(err)
	}
	var console bytes.Buffer
	o := f.opts(nil)
	o.Console = &console
	if _, err := Run(context.Background(), modules.StageBoot, o); err != nil {
		t.Fatal(err)
	}
	log, err := f.root.ReadFile(LogFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(log), "earlyinit: [   0.011] a line from the initramfs\n") {
		t.Errorf("%s does not begin with the initramfs's log:\n%s", LogFile, log)
	}
	if strings.Contains(console.String(), "a line from the initramfs") || !strings.Contains(console.String(), "stage boot starting") {
		t.Errorf("console:\n%s\nwant the stage's lines, not the initramfs's again", console.String())
	}
}
