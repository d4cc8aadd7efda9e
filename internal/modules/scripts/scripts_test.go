package scripts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

func TestBootcmd(t *testing.T) {
	te := coretest.NewEnv(t, `bootcmd:
  - echo hello > /tmp/x
  - [cloud-init-per, once, "it's", "a b"]
  -
`)
	var got core.Cmd
	te.Fake.Handlers["sh"] = func(c core.Cmd) ([]byte, error) { got = c; return nil, nil }
	if err := te.RunFunc(Bootcmd); err != nil {
		t.Fatal(err)
	}
	te.WantCalls("/bin/sh /run/earlyinit/bootcmd")
	if strings.Join(got.Env, " ") != "INSTANCE_ID=iid-1" {
		t.Errorf("env %q", got.Env)
	}
	te.WantFile("/run/earlyinit/bootcmd", "#!/bin/sh\necho hello > /tmp/x\n'cloud-init-per' 'once' 'it'\\''s' 'a b'\n", 0o700, 0, 0)

	te.Fake.Handlers["sh"] = func(core.Cmd) ([]byte, error) { return nil, coretest.ExitErr(3) }
	if err := te.RunFunc(Bootcmd); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("failing bootcmd: %v", err)
	}
}

func TestShellifyErrors(t *testing.T) {
	for _, cfg := range []string{"bootcmd: echo", "bootcmd: [{a: b}]", "bootcmd: [[a, [b]]]"} {
		te := coretest.NewEnv(t, cfg)
		if err := te.RunFunc(Bootcmd); err == nil {
			t.Errorf("%s: no error", cfg)
		}
		te.WantCalls()
	}
}

func TestRuncmdAndScriptsUser(t *testing.T) {
	te := coretest.NewEnv(t, `runcmd:
  - [ls, -l, /]
  - echo "$HOME"
`)
	if err := te.RunFunc(Runcmd); err != nil {
		t.Fatal(err)
	}
	dir := core.ScriptsDir("iid-1")
	te.WantFile(dir+"/runcmd", "#!/bin/sh\n'ls' '-l' '/'\necho \"$HOME\"\n", 0o700, 0, 0)
	te.WantCalls() // runcmd only writes

	te.Write(dir+"/part-001", "#!/bin/sh\n", 0o700)
	te.Write(dir+"/notexec", "#!/bin/sh\n", 0o644)
	if err := te.RunFunc(ScriptsUser); err != nil {
		t.Fatal(err)
	}
	te.WantCalls(dir+"/part-001", dir+"/runcmd")
}

// TestScriptsExitCodes: cloudbase-init's documented meaning, as the
// reference notes (../shared/seeds/002_6dcf7c1d94353b3f.txt) give it:
// "1001 - 立刻重启，并且下次重启不再执行" (reboot now, do not run again at
// the next boot); "1002 - 现在不重启，下次重启再次执行该plugin" (do not
// reboot now, run it again at the next boot); "1003 - 重启并且下次开机再次
// 执行" (reboot, and run it again at the next boot).
func TestScriptsExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name     string
		codes    map[string]int // script -> the code it passes to exit
		wantRun  []string
		wantErr  string
		reboot   bool
		rerun    bool
		marked   []string
		unmarked []string
	}{
		{name: "all ok", codes: map[string]int{}, wantRun: []string{"a", "b", "c"}, marked: []string{"a", "b", "c"}},
		{name: "failure goes on", codes: map[string]int{"b": 2}, wantRun: []string{"a", "b", "c"}, wantErr: "1 script(s) failed", marked: []string{"a", "c"}, unmarked: []string{"b"}},
		{name: "1003 reboots and reruns", codes: map[string]int{"b": 1003}, wantRun: []string{"a", "b"}, reboot: true, rerun: true, marked: []string{"a"}, unmarked: []string{"b", "c"}},
		{name: "1002 reruns without reboot", codes: map[string]int{"a": 1002}, wantRun: []string{"a", "b", "c"}, rerun: true, marked: []string{"b", "c"}, unmarked: []string{"a"}},
		{name: "1001 reboots, done", codes: map[string]int{"b": 1001}, wantRun: []string{"a", "b"}, reboot: true, rerun: true, marked: []string{"a", "b"}, unmarked: []string{"c"}},
		{name: "1001 last script", codes: map[string]int{"c": 1001}, wantRun: []string{"a", "b", "c"}, reboot: true, rerun: false, marked: []string{"a", "b", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := coretest.NewEnv(t, "")
			te.StateDir = "/var/lib/earlyinit/sem/scripts_per_once.d"
			for _, n := range []string{"a", "b", "c"} {
				te.Write(ScriptsPerOnceDir+"/"+n, "#!/bin/sh\n", 0o755)
				code := tc.codes[n]
				te.Fake.Handlers[n] = func(core.Cmd) ([]byte, error) {
					if code != 0 {
						// What the parent sees: 8 bits of it.
						return nil, coretest.ExitErr(code % 256)
					}
					return nil, nil
				}
			}
			err := te.RunFunc(ScriptsPerOnce)
			var inc *core.Incomplete
			isInc := errors.As(err, &inc)
			switch {
			case tc.reboot || tc.rerun:
				if !isInc || inc.Reboot != tc.reboot || inc.Rerun != tc.rerun {
					t.Errorf("err %v (%#v), want reboot %v rerun %v", err, inc, tc.reboot, tc.rerun)
				}
			case tc.wantErr != "":
				if err == nil || isInc || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("err %v, want %q", err, tc.wantErr)
				}
			case err != nil:
				t.Errorf("err %v", err)
			}
			var want []string
			for _, n := range tc.wantRun {
				want = append(want, ScriptsPerOnceDir+"/"+n)
			}
			te.WantCalls(want...)
			for _, n := range tc.marked {
				if !te.Root.Exists(te.StateDir + "/" + n) {
					t.Errorf("%s not marked done", n)
				}
			}
			for _, n := range tc.unmarked {
				if te.Root.Exists(te.StateDir + "/" + n) {
					t.Errorf("%s marked done", n)
				}
			}
			// A second run runs only what is not marked.
			te.Fake.Calls = nil
			for _, n := range []string{"a", "b", "c"} {
				te.Fake.Handlers[n] = nil
			}
			if err := te.RunFunc(ScriptsPerOnce); err != nil {
				t.Fatal(err)
			}
			want = nil
			for _, n := range []string{"a", "b", "c"} {
				if !contains(tc.marked, n) {
					want = append(want, ScriptsPerOnceDir+"/"+n)
				}
			}
			te.WantCalls(want...)
		})
	}
}

// TestScriptsExitCodesRealProcess runs real scripts doing `exit 1001`
// (1002, 1003...) through SystemExec: what Linux delivers (233, 234, 235)
// must make the reboot and rerun decisions.
func TestScriptsExitCodesRealProcess(t *testing.T) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Fatalf("this test needs /bin/sh: %v", err)
	}
	for _, tc := range []struct {
		exit           int
		reboot, rerun  bool
		failed, marked bool
	}{
		{exit: 0, marked: true},
		{exit: 1001, reboot: true, marked: true},
		{exit: 1002, rerun: true},
		{exit: 1003, reboot: true, rerun: true},
		{exit: 2, failed: true},
		{exit: 1000, failed: true}, // 232: no meaning
	} {
		t.Run(fmt.Sprint(tc.exit), func(t *testing.T) {
			te := coretest.NewEnv(t, "")
			te.Exec = core.SystemExec{}
			te.StateDir = "/var/lib/earlyinit/sem/scripts_per_once.d"
			te.Write(ScriptsPerOnceDir+"/a", fmt.Sprintf("#!/bin/sh\necho ran a\nexit %d\n", tc.exit), 0o755)
			err := te.RunFunc(ScriptsPerOnce)
			var inc *core.Incomplete
			isInc := errors.As(err, &inc)
			switch {
			case tc.reboot || tc.rerun:
				if !isInc || inc.Reboot != tc.reboot || inc.Rerun != tc.rerun || inc.Err != nil {
					t.Errorf("exit %d: err %v (%+v), want reboot %v rerun %v", tc.exit, err, inc, tc.reboot, tc.rerun)
				}
			case tc.failed:
				if err == nil || isInc || !strings.Contains(err.Error(), fmt.Sprintf("exit status %d", tc.exit%256)) {
					t.Errorf("exit %d: err %v, want a failure", tc.exit, err)
				}
			case err != nil:
				t.Errorf("exit %d: err %v", tc.exit, err)
			}
			if got := te.Root.Exists(te.StateDir + "/a"); got != tc.marked {
				t.Errorf("exit %d: marked done %v, want %v", tc.exit, got, tc.marked)
			}
			if !strings.Contains(te.OutBuf.String(), "ran a") {
				t.Errorf("exit %d: script output %q", tc.exit, te.OutBuf.String())
			}
		})
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestScriptsPerBootNoMarkers(t *testing.T) {
	te := coretest.NewEnv(t, "")
	te.Write(ScriptsPerBootDir+"/10-x", "#!/bin/sh\n", 0o755)
	for range 2 {
		if err := te.RunFunc(ScriptsPerBoot); err != nil {
			t.Fatal(err)
		}
	}
	te.WantCalls(ScriptsPerBootDir+"/10-x", ScriptsPerBootDir+"/10-x")
	// No directory: nothing to do.
	te2 := coretest.NewEnv(t, "")
	if err := te2.RunFunc(ScriptsPerInstance); err != nil {
		t.Fatal(err)
	}
	te2.WantCalls()
}

func TestScriptOutput(t *testing.T) {
	te := coretest.NewEnv(t, "")
	te.Write(ScriptsPerBootDir+"/x", "#!/bin/sh\n", 0o755)
	te.Fake.Handlers["x"] = func(c core.Cmd) ([]byte, error) {
		c.Output.Write([]byte("hello from x\n"))
		return nil, nil
	}
	if err := ScriptsPerBoot(context.Background(), te.Env); err != nil {
		t.Fatal(err)
	}
	if te.OutBuf.String() != "hello from x\n" {
		t.Errorf("output %q", te.OutBuf.String())
	}
}
