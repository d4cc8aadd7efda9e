package late

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/instance/cache"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/paths"
)

// readStatusFile is status.json as written.
func (f *fixture) statusFile() statusFile {
	f.t.Helper()
	var st statusFile
	if err := json.Unmarshal([]byte(f.read(StatusFile)), &st); err != nil {
		f.t.Fatal(err)
	}
	return st
}

func moduleResult(st *StageStatus, name string) (ModuleResult, bool) {
	for _, m := range st.Modules {
		if m.Name == name {
			return m, true
		}
	}
	return ModuleResult{}, false
}

// TestPanicContainment: a module, a boothook and the power_state
// condition that panic are each recorded as failed, with a few frames of
// stack in the log file only, and the stage goes on to its end: the next
// modules, status.json, result.json and the power action.
func TestPanicContainment(t *testing.T) {
	f := newFixture(t)
	ud := `Content-Type: multipart/mixed; boundary="B"
MIME-Version: 1.0

--B
Content-Type: text/cloud-config

#cloud-config
power_state: {mode: reboot, condition: "test -e /x"}
--B
Content-Type: text/cloud-boothook
Content-Disposition: attachment; filename="hook"

#cloud-boothook
#!/bin/sh
echo hook
--B--
`
	f.store("iid-1", ud)
	f.exec.handlers["hook"] = func(core.Cmd) ([]byte, error) { panic("boothook blew up") }
	conds := 0
	f.exec.handlers["sh"] = func(core.Cmd) ([]byte, error) {
		if conds++; conds == 1 {
			var m map[string]int
			m["x"] = 1 // a real runtime panic
		}
		return nil, nil
	}
	ran := map[string]int{}
	boom := func(name string, stage modules.Stage) modules.Module {
		return modules.Module{Name: name, Stage: stage, Frequency: modules.Always, Run: func(context.Context, *core.Env) error {
			ran[name]++
			var p *core.Env
			_ = p.Root // nil dereference
			return nil
		}}
	}
	ok := func(name string, stage modules.Stage) modules.Module {
		return modules.Module{Name: name, Stage: stage, Frequency: modules.Always, Run: func(context.Context, *core.Env) error { ran[name]++; return nil }}
	}
	ps, _ := modules.Lookup("power_state")
	ps.Frequency = modules.Always
	mods := []modules.Module{boom("boom1", modules.StageBoot), ok("after1", modules.StageBoot),
		boom("boom2", modules.StageFinal), ok("after2", modules.StageFinal), ps}
	var console bytes.Buffer
	opts := f.opts(mods)
	opts.Console = &console

	boot, err := Run(context.Background(), modules.StageBoot, opts)
	if err != nil {
		t.Fatalf("boot: %v", err)
	}
	if ran["boom1"] != 1 || ran["after1"] != 1 {
		t.Errorf("boot modules ran %v", ran)
	}
	if len(boot.Errors) != 1 || !strings.HasPrefix(boot.Errors[0], "module boom1: module boom1: panic: runtime error: invalid memory address") {
		t.Errorf("boot errors %q", boot.Errors)
	}
	if !hasPrefix(boot.Warnings, "boothook /var/lib/earlyinit/instances/iid-1/boothooks/hook: boothook /var/lib/earlyinit/instances/iid-1/boothooks/hook: panic: boothook blew up") {
		t.Errorf("boot warnings %q", boot.Warnings)
	}

	// Final: boom2 panics, after2 runs, the power_state condition panics
	// the first time: no power action, an error; result.json written.
	final, err := Run(context.Background(), modules.StageFinal, opts)
	if err != nil {
		t.Fatalf("final: %v", err)
	}
	if ran["boom2"] != 1 || ran["after2"] != 1 {
		t.Errorf("final modules ran %v", ran)
	}
	if len(final.Errors) != 2 || !strings.Contains(final.Errors[1], "power_state condition: panic: assignment to entry in nil map") {
		t.Errorf("final errors %q", final.Errors)
	}
	if len(f.actions) != 0 {
		t.Errorf("power action after a panicking condition: %q", f.actions)
	}
	if !f.root.Exists(ResultFile) {
		t.Error("no result.json")
	}
	st := f.statusFile()
	for _, c := range []struct {
		st   *StageStatus
		name string
		want string
	}{{st.V1.Boot, "boom1", ModuleError}, {st.V1.Boot, "after1", ModuleOK}, {st.V1.Final, "boom2", ModuleError}, {st.V1.Final, "after2", ModuleOK}} {
		m, found := moduleResult(c.st, c.name)
		if !found || m.Status != c.want {
			t.Errorf("status.json %s: %+v", c.name, m)
		}
	}
	if st.V1.Boot.Finished == nil || st.V1.Final.Finished == nil || st.V1.Stage != nil {
		t.Errorf("stages not finished in status.json: %+v", st.V1)
	}
	raw := f.read(StatusFile)
	if strings.Contains(raw, "goroutine") || strings.Contains(raw, ".go:") {
		t.Errorf("status.json holds a stack:\n%s", raw)
	}
	// The stack, a few frames of it, is in the log file, pointing at the
	// panicking function; not on the console.
	log := f.read(LogFile)
	for _, want := range []string{"PANIC in module boom1", "PANIC in boothook", "PANIC in power_state condition", "harden_test.go:"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if n, panics := strings.Count(log, "\n    "), strings.Count(log, "PANIC in"); n == 0 || n > panics*2*maxStackFrames {
		t.Errorf("log holds %d stack lines for %d panics", n, panics)
	}
	if strings.Contains(console.String(), ".go:") || !strings.Contains(console.String(), "PANIC in module boom1") {
		t.Errorf("console:\n%s", console.String())
	}

	// Next boot: the condition holds (no panic), the power action runs.
	Run(context.Background(), modules.StageBoot, opts)
	if _, err := Run(context.Background(), modules.StageFinal, opts); err != nil {
		t.Fatal(err)
	}
	if len(f.actions) != 1 || f.actions[0][1] != "-r" {
		t.Errorf("actions %q", f.actions)
	}
}

func hasPrefix(ss []string, p string) bool {
	for _, s := range ss {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// TestPanicInUserDataDecoding: a panic while user-data is processed (here
// in the #include fetcher) leaves the user-data unapplied, is an error, and
// the stage still runs its modules and writes result.json.
func TestPanicInUserDataDecoding(t *testing.T) {
	f := newFixture(t)
	f.store("iid-1", "#include http://example.com/x\n")
	ran := 0
	mods := []modules.Module{{Name: "m", Stage: modules.StageFinal, Frequency: modules.Always,
		Run: func(context.Context, *core.Env) error { ran++; return nil }}}
	opts := f.opts(mods)
	opts.Include = func(context.Context, string, bool) ([]byte, error) { panic("fetcher blew up") }
	res, err := Run(context.Background(), modules.StageFinal, opts)
	if err != nil {
		t.Fatal(err)
	}
	if ran != 1 || len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "user-data decoding: panic: fetcher blew up: user-data and vendor-data not applied") {
		t.Errorf("ran %d, errors %q", ran, res.Errors)
	}
	if !f.root.Exists(ResultFile) {
		t.Error("no result.json")
	}
	if rep, _ := Status(f.dir); rep.Status != StatusError {
		t.Errorf("status %+v", rep)
	}
}

// TestBigUserData: a 200 MB user-data.txt is refused by its size before
// it is read (no 200 MB allocation), with an error naming the file; the
// stage goes on.
func TestBigUserData(t *testing.T) {
	f := newFixture(t)
	f.store("iid-1", "#cloud-config\n")
	name := f.root.Path(paths.InstancesDir + "/iid-1/user-data.txt")
	if err := os.Truncate(name, 200<<20); err != nil { // sparse: cheap
		t.Fatal(err)
	}
	ran := 0
	mods := []modules.Module{{Name: "m", Stage: modules.StageBoot, Frequency: modules.Always,
		Run: func(context.Context, *core.Env) error { ran++; return nil }}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	res := f.run(modules.StageBoot, mods)
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	t.Logf("200 MB user-data refused in %v, %d bytes allocated", took, after.TotalAlloc-before.TotalAlloc)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("allocated %d bytes: the file was read", alloc)
	}
	want := "user-data: " + paths.InstancesDir + "/iid-1/user-data.txt: 209715200 bytes, more than the limit of 16777216: not read: ignored"
	if ran != 1 || len(res.Errors) != 1 || res.Errors[0] != want {
		t.Errorf("ran %d, errors %q\nwant %q", ran, res.Errors, want)
	}
}

// TestSecretsNeverLeak runs both stages over user-data holding secrets
// (well-formed and mistyped) with a fake Exec whose chpasswd and useradd
// fail echoing their input, then reads every file in the root: no log,
// status.json, result.json or console holds a secret, and any other file
// that does is 0600.
func TestSecretsNeverLeak(t *testing.T) {
	const mark, num = "S3CRET-MARKER", "31337424242"
	for _, tc := range []struct{ name, ud string }{
		{"mistyped", `#cloud-config
password: ` + num + `
chpasswd:
  list: [` + mark + `-1]
  users:
    - {name: bob, password: ` + num + `}
    - ` + mark + `-2
users:
  - {name: dave, passwd: ` + num + `, hashed_passwd: [` + mark + `-3], plain_text_passwd: {x: ` + mark + `-4}}
ssh_keys: {rsa_private: ` + num + `}
random_seed: {data: ` + mark + `-5}
`},
		{"tagged", "#cloud-config\npassword: !!int " + mark + "\n"},
		{"password in the type field", "#cloud-config\nchpasswd:\n  users:\n    - {name: bob, type: " + mark + "}\n"},
		{"well-formed, failing commands", `#cloud-config
password: ` + mark + `-1
chpasswd:
  expire: false
  list: ["root:` + mark + `-2", "alice:$6$salt$` + mark + `-3"]
  users:
    - {name: bob, password: ` + mark + `-4, type: text}
users:
  - default
  - {name: dave, passwd: "$6$x$` + mark + `-5", lock_passwd: false}
ssh_keys:
  ed25519_private: "-----BEGIN OPENSSH PRIVATE KEY-----\n` + mark + `-6\n-----END OPENSSH PRIVATE KEY-----\n"
  ed25519_public: "ssh-ed25519 AAAA host"
`},
		{"not cloud-config", mark + " is not a known type\n"},
		{"include with credentials", "#include https://u:" + mark + "@h.example/x?token=" + mark + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.store("iid-1", tc.ud)
			for _, tool := range []string{"/usr/sbin/useradd", "/usr/sbin/chpasswd", "/usr/bin/passwd"} {
				f.root.WriteFile(tool, nil, 0o755, 0, 0)
			}
			echo := func(c core.Cmd) ([]byte, error) {
				out := []byte(c.String() + "\n" + string(c.Stdin))
				return out, fmt.Errorf("%s: exit status 1: %s: %w", c.Name, out, exitErr(1))
			}
			f.exec.handlers["chpasswd"] = echo
			f.exec.handlers["useradd"] = echo
			f.exec.handlers["usermod"] = echo
			var console bytes.Buffer
			opts := f.opts(nil)
			opts.Console = &console
			opts.Include = func(_ context.Context, u string, _ bool) ([]byte, error) {
				return nil, errors.New("GET " + u + ": 403")
			}
			for _, st := range []modules.Stage{modules.StageBoot, modules.StageFinal} {
				if _, err := Run(context.Background(), st, opts); err != nil {
					t.Fatalf("%s: %v", st, err)
				}
			}
			mustNot := map[string]bool{LogFile: true, OutputLogFile: true, StatusFile: true, ResultFile: true}
			for name := range mustNot {
				if !f.root.Exists(name) && name != OutputLogFile {
					t.Errorf("%s not written", name)
				}
			}
			if strings.Contains(console.String(), mark) || strings.Contains(console.String(), num) {
				t.Errorf("console shows a secret:\n%s", console.String())
			}
			filepath.WalkDir(f.dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return err
				}
				b, _ := os.ReadFile(p)
				if !bytes.Contains(b, []byte(mark)) && !bytes.Contains(b, []byte(num)) {
					return nil
				}
				rel := strings.TrimPrefix(p, f.dir)
				fi, _ := d.Info()
				switch {
				case mustNot[rel]:
					t.Errorf("%s shows a secret:\n%s", rel, b)
				case fi.Mode().Perm()&0o077 != 0:
					t.Errorf("%s holds a secret with mode %#o", rel, fi.Mode().Perm())
				}
				return nil
			})
			// The findings still say where: file, line, key path.
			if tc.name == "mistyped" && !strings.Contains(f.read(LogFile), "part-001:2:11: password: expected string, got integer (value not shown: sensitive key)") {
				t.Errorf("log lacks the positioned finding:\n%s", f.read(LogFile))
			}
		})
	}
}

// TestNonUTF8Script: a user-data script that is not UTF-8 is written byte
// for byte (0700) and run, as cloud-init does; nothing warns about it.
func TestNonUTF8Script(t *testing.T) {
	f := newFixture(t)
	script := "#!/bin/sh\necho caf\xe9 \xff\xfe\n"
	f.store("iid-1", script)
	su, _ := modules.Lookup("scripts_user")
	boot := f.run(modules.StageBoot, []modules.Module{su})
	final := f.run(modules.StageFinal, []modules.Module{su})
	if len(boot.Errors)+len(boot.Warnings)+len(final.Errors)+len(final.Warnings) != 0 {
		t.Errorf("boot %q %q, final %q %q", boot.Errors, boot.Warnings, final.Errors, final.Warnings)
	}
	name := paths.InstancesDir + "/iid-1/scripts/part-001"
	if got := f.read(name); got != script {
		t.Errorf("script written as %q", got)
	}
	if fi, err := f.root.Stat(name); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("script mode: %v %v", fi, err)
	}
	if len(f.exec.calls) != 1 || f.exec.calls[0] != name {
		t.Errorf("commands %q", f.exec.calls)
	}
}

// TestScriptExitCodesEndToEnd runs user-data scripts doing `exit 1001`,
// `exit 1002` and `exit 1003` as real processes (SystemExec) through both
// stages: what Linux delivers (233, 234, 235) must reboot and rerun.
func TestScriptExitCodesEndToEnd(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Fatalf("this test needs /bin/sh: %v", err)
	}
	for _, tc := range []struct {
		exit          int
		reboot, rerun bool
	}{
		{1001, true, false}, // reboot now, do not run again
		{1002, false, true}, // do not reboot, run again at the next boot
		{1003, true, true},  // reboot now, run again at the next boot
		{0, false, false},
	} {
		t.Run(fmt.Sprint(tc.exit), func(t *testing.T) {
			f := newFixture(t)
			f.store("iid-1", fmt.Sprintf("#!/bin/sh\necho run >> %s/runs\nexit %d\n", f.dir, tc.exit))
			su, _ := modules.Lookup("scripts_user")
			opts := f.opts([]modules.Module{su})
			opts.Exec = core.SystemExec{}
			for _, st := range []modules.Stage{modules.StageBoot, modules.StageFinal} {
				res, err := Run(context.Background(), st, opts)
				if err != nil {
					t.Fatal(err)
				}
				if st == modules.StageFinal && (res.Reboot != tc.reboot || len(res.Errors) != 0) {
					t.Errorf("exit %d: reboot %v, errors %q", tc.exit, res.Reboot, res.Errors)
				}
			}
			if got := len(f.actions) == 1 && f.actions[0][1] == "-r"; got != tc.reboot {
				t.Errorf("exit %d: actions %q", tc.exit, f.actions)
			}
			// Next boot: the script runs again only if it asked to.
			for _, st := range []modules.Stage{modules.StageBoot, modules.StageFinal} {
				if _, err := Run(context.Background(), st, opts); err != nil {
					t.Fatal(err)
				}
			}
			b, _ := os.ReadFile(filepath.Join(f.dir, "runs"))
			if runs, want := strings.Count(string(b), "run"), map[bool]int{true: 2, false: 1}[tc.rerun]; runs != want {
				t.Errorf("exit %d: ran %d times, want %d", tc.exit, runs, want)
			}
		})
	}
}

// TestVendorScriptsApart: a user-data script and a vendor-data script are
// both "part-001" (neither has a MIME filename). cloud-init writes the
// vendor's to instances/<iid>/scripts/vendor/ (its vendor_scripts path,
// stages.py's ShellScriptPartHandler(script_path="vendor_scripts")) and
// runs it with vendor_data.prefix before it (cc_scripts_vendor:
// subp.runparts(runparts_path, exe_prefix=prefix)). Both must run, each
// once; before, the vendor's replaced the user's.
func TestVendorScriptsApart(t *testing.T) {
	f := newFixture(t)
	user := "Content-Type: multipart/mixed; boundary=\"B\"\nMIME-Version: 1.0\n\n" +
		"--B\nContent-Type: text/x-shellscript\n\n#!/bin/sh\necho user\n" +
		"--B\nContent-Type: text/cloud-config\n\nvendor_data: {prefix: [/usr/bin/env, X=1]}\n--B--\n"
	d := &instance.Data{Datasource: "nocloud", DatasourceClass: "NoCloud", InstanceID: "iid-1", LocalHostname: "h",
		UserData: []byte(user), VendorData: []byte("#!/bin/sh\necho vendor\n")}
	if err := cache.New(f.root).Store(d, cache.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	su, _ := modules.Lookup("scripts_user")
	for _, st := range []modules.Stage{modules.StageBoot, modules.StageFinal} {
		if res := f.run(st, []modules.Module{su}); len(res.Errors) != 0 {
			t.Fatalf("%s: %q", st, res.Errors)
		}
	}
	dir := paths.InstancesDir + "/iid-1/scripts"
	if got := f.read(dir + "/part-001"); got != "#!/bin/sh\necho user" {
		t.Errorf("user's script %q", got)
	}
	if got := f.read(dir + "/vendor/part-001"); got != "#!/bin/sh\necho vendor\n" {
		t.Errorf("vendor's script %q", got)
	}
	want := []string{dir + "/part-001", "/usr/bin/env X=1 " + dir + "/vendor/part-001"}
	if !slices.Equal(f.exec.calls, want) {
		t.Errorf("commands %q, want %q", f.exec.calls, want)
	}
	// The next boot of the instance runs neither again.
	f.exec.calls = nil
	for _, st := range []modules.Stage{modules.StageBoot, modules.StageFinal} {
		f.run(st, []modules.Module{su})
	}
	if len(f.exec.calls) != 0 {
		t.Errorf("second boot ran %q", f.exec.calls)
	}
}
