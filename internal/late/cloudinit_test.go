package late

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/oracle"
	"github.com/earlyinit/earlyinit/internal/paths"
)

// ciPrelude points cloud-init 22.4's status CLI (cmd/status.py) at the
// root in root: its paths (read_cfg_paths), its disabled file, and what it
// reads of the machine (uses_systemd, the kernel command line), so that
// the test machine's own cloud-init (disabled by
// /etc/cloud/cloud-init.disabled) does not answer.
const ciPrelude = `
import contextlib, io
from cloudinit import helpers
from cloudinit.cmd import status
def point(root, cmdline=""):
    paths = helpers.Paths({"cloud_dir": root + "/var/lib/cloud", "run_dir": root + "/run/cloud-init"})
    status.read_cfg_paths = lambda: paths
    status.CLOUDINIT_DISABLED_FILE = root + "/etc/cloud/cloud-init.disabled"
    status.uses_systemd = lambda: True
    status.get_cmdline = lambda: cmdline
`

// statusScript runs `cloud-init status --long` and `cloud-init status
// --format json` (handle_status_args, as the CLI does) on each root of
// the input and prints the exit codes and outputs.
const statusScript = ciPrelude + `
inp = json.load(sys.stdin)
out = []
for root in inp["roots"]:
    point(root)
    res = []
    for argv in (["--long"], ["--format", "json"]):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            rc = status.handle_status_args("status", status.get_parser().parse_args(argv))
        res.append({"rc": rc, "out": buf.getvalue()})
    out.append(res)
print(json.dumps(out))
`

type cliResult struct {
	RC  int    `json:"rc"`
	Out string `json:"out"`
}

// ciStatusJSON is `cloud-init status --format json`'s output (22.4's keys).
type ciStatusJSON struct {
	Status         string   `json:"status"`
	Datasource     string   `json:"datasource"`
	Detail         string   `json:"detail"`
	Errors         []string `json:"errors"`
	LastUpdate     string   `json:"last_update"`
	BootStatusCode string   `json:"boot_status_code"`
}

// ciAnswer is what cloud-init's status said of one root.
type ciAnswer struct {
	long cliResult
	js   ciStatusJSON
}

// snapshot copies what cloud-init's status reads of the fixture's root
// (its run directory, with the links, and data directory) into a new
// root, so that one run of cloud-init's Python answers for every moment
// of the test.
func (f *fixture) snapshot() string {
	f.t.Helper()
	dst := f.t.TempDir()
	for _, d := range []string{paths.CloudRunDir, paths.CloudDataDir} {
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(d)), 0o755); err != nil {
			f.t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-a", f.root.Path(d), filepath.Join(dst, d)).CombinedOutput(); err != nil {
			f.t.Fatalf("cp: %v: %s", err, out)
		}
	}
	return dst
}

// cloudInitStatus is cloud-init's `status --long` (text, exit code) and
// `status --format json` of each root.
func cloudInitStatus(t *testing.T, roots ...string) []ciAnswer {
	t.Helper()
	var out [][]cliResult
	oracle.Run(t, statusScript, map[string]any{"roots": roots}, &out)
	ans := make([]ciAnswer, len(out))
	for i, o := range out {
		ans[i].long = o[0]
		if err := json.Unmarshal([]byte(o[1].Out), &ans[i].js); err != nil {
			t.Fatalf("cloud-init status --format json: %v\n%s", err, o[1].Out)
		}
		if o[0].RC != o[1].RC {
			t.Errorf("exit codes differ: %d and %d", o[0].RC, o[1].RC)
		}
	}
	return ans
}

// TestCloudInitStatus: cloud-init 22.4's own `cloud-init status` follows
// earlyinit's stages through the files the late stage writes: not run
// before the boot stage, running after it and while the final stage runs
// (in stage modules-final), done with exit 0 after it, naming the
// datasource; error with exit 1 when a module failed. 22.4 knows no
// "degraded" (23.4 added it, with exit 2): a boot with warnings only is
// done, exit 0, to 22.4, while status.json carries the warnings as
// recoverable_errors for later versions (and earlyinit's own status says
// "degraded done", exit 2).
func TestCloudInitStatus(t *testing.T) {
	f := newFixture(t)
	// What cloud-init's generator leaves when it enables cloud-init.target
	// (the answer earlyinit gives ds-identify makes it do so).
	if err := f.root.WriteFile(paths.CloudRunDir+"/enabled", nil, 0o644, 0, 0); err != nil {
		t.Fatal(err)
	}
	var roots []string
	f.store("iid-1", "")
	roots = append(roots, f.snapshot()) // 0: before the boot stage

	c := &counter{runs: map[string]int{}, fail: map[string]int{}}
	probe := modules.Module{Name: "probe", Stage: modules.StageFinal, Frequency: modules.Always, Run: func(context.Context, *core.Env) error {
		if len(roots) == 2 {
			roots = append(roots, f.snapshot()) // 2: while the first final stage runs
		}
		return nil
	}}
	mods := []modules.Module{c.module("good", modules.StageBoot, modules.Always), probe}
	f.run(modules.StageBoot, mods)
	roots = append(roots, f.snapshot()) // 1: after the boot stage
	if l, err := os.Readlink(f.root.Path(cloudStatusLink)); err != nil || l != "../../var/lib/cloud/data/status.json" {
		t.Errorf("%s -> %q, %v; want cloud-init's relative link", cloudStatusLink, l, err)
	}
	f.run(modules.StageFinal, mods)
	roots = append(roots, f.snapshot()) // 3: done
	if rep, _ := Status(f.dir); rep.Status != statusDone {
		t.Errorf("earlyinit status %q, want done", rep.Status)
	}

	// The next boot: the previous result goes at its start.
	c.fail["bad"] = 1
	mods = append(mods, c.module("bad", modules.StageFinal, modules.Always))
	f.run(modules.StageBoot, mods)
	roots = append(roots, f.snapshot()) // 4: next boot, after the boot stage
	f.run(modules.StageFinal, mods)
	roots = append(roots, f.snapshot()) // 5: error
	var res struct {
		V1 struct {
			Datasource string   `json:"datasource"`
			Errors     []string `json:"errors"`
		} `json:"v1"`
	}
	if err := json.Unmarshal([]byte(f.read(cloudResultLink)), &res); err != nil || res.V1.Datasource != "DataSourceNoCloud [seed-dir (/x)]" || len(res.V1.Errors) != 1 {
		t.Errorf("result.json %+v %v", res, err)
	}

	// Warnings only: done to 22.4, degraded to earlyinit.
	f.store("iid-2", "#cloud-config\nno_such_key: 1\n")
	f.run(modules.StageBoot, mods[:2])
	f.run(modules.StageFinal, mods[:2])
	roots = append(roots, f.snapshot()) // 6: warnings only
	if rep, _ := Status(f.dir); rep.ExtendedStatus != "degraded done" || rep.ExitCode() != 2 {
		t.Errorf("earlyinit status: %+v", rep)
	}
	var st struct {
		V1 map[string]json.RawMessage `json:"v1"`
	}
	if err := json.Unmarshal([]byte(f.read(cloudStatusFile)), &st); err != nil {
		t.Fatal(err)
	}
	var initStage cloudStage
	json.Unmarshal(st.V1["init"], &initStage)
	if len(initStage.RecoverableErrors["WARNING"]) == 0 {
		t.Errorf("status.json's init has no recoverable_errors: %s", st.V1["init"])
	}
	for _, s := range []string{"datasource", "init", "init-local", "modules-config", "modules-final", "modules-init", "stage"} {
		if _, ok := st.V1[s]; !ok {
			t.Errorf("status.json has no v1.%s", s)
		}
	}

	ans := cloudInitStatus(t, roots...)
	for i, tt := range []struct {
		name string
		rc   int
		long *regexp.Regexp
		js   ciStatusJSON
	}{
		{"before the boot stage", 0, regexp.MustCompile(`^status: not run\nboot_status_code: enabled-by-generator\ndetail:\nCloud-init enabled by systemd cloud-init-generator\n$`),
			ciStatusJSON{Status: "not run", Datasource: ""}},
		{"after the boot stage", 0, regexp.MustCompile(`^status: running\n(.*\n)*detail:\nDataSourceNoCloud \[seed-dir \(/x\)\]\n$`),
			ciStatusJSON{Status: "running", Datasource: "nocloud"}},
		{"during the final stage", 0, regexp.MustCompile(`^status: running\n(.*\n)*detail:\nRunning in stage: modules-final\n$`),
			ciStatusJSON{Status: "running", Datasource: "nocloud"}},
		{"after the final stage", 0, regexp.MustCompile(`^status: done\nboot_status_code: enabled-by-generator\nlast_update: \w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d \+0000\ndetail:\nDataSourceNoCloud \[seed-dir \(/x\)\]\n$`),
			ciStatusJSON{Status: "done", Datasource: "nocloud"}},
		{"next boot, after the boot stage", 0, regexp.MustCompile(`^status: running\n`),
			ciStatusJSON{Status: "running", Datasource: "nocloud"}},
		{"a module failed", 1, regexp.MustCompile(`^status: error\n(.*\n)*detail:\nmodule bad: bad broke\n$`),
			ciStatusJSON{Status: "error", Datasource: "nocloud", Errors: []string{"module bad: bad broke"}}},
		{"warnings only", 0, regexp.MustCompile(`^status: done\n`),
			ciStatusJSON{Status: "done", Datasource: "nocloud"}},
	} {
		a := ans[i]
		if a.long.RC != tt.rc || !tt.long.MatchString(a.long.Out) || a.js.Status != tt.js.Status || a.js.Datasource != tt.js.Datasource ||
			strings.Join(a.js.Errors, "|") != strings.Join(tt.js.Errors, "|") || a.js.BootStatusCode != "enabled-by-generator" {
			t.Errorf("%s: cloud-init status exit %d\n%s%+v", tt.name, a.long.RC, a.long.Out, a.js)
		}
	}
}

// waitScript is `cloud-init status --wait` with cloud-init's sleep between
// two readings replaced by a handshake: it says "tick" on stderr and waits
// for a line on stdin, so the test runs a stage between two readings.
const waitScript = ciPrelude + `
import logging, sys
logging.disable(logging.CRITICAL)
point(sys.argv[1])
def sleep(_):
    sys.stderr.write("tick\n")
    sys.stderr.flush()
    sys.stdin.readline()
status.sleep = sleep
sys.exit(status.handle_status_args("status", status.get_parser().parse_args(["--wait"])))
`

// TestCloudInitStatusWait: cloud-init 22.4's `cloud-init status --wait`
// waits while earlyinit's stages run and returns at its first reading
// after the final stage, with "status: done" and exit 0, printing its dots
// as it does.
func TestCloudInitStatusWait(t *testing.T) {
	f := newFixture(t)
	f.store("iid-1", "")
	mods := []modules.Module{{Name: "m", Stage: modules.StageFinal, Frequency: modules.Always, Run: func(context.Context, *core.Env) error { return nil }}}
	cmd := exec.Command(oracle.Python(t), "-c", waitScript, f.dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ticks := 0
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		if sc.Text() != "tick" {
			t.Logf("cloud-init: %s", sc.Text())
			continue
		}
		ticks++
		switch ticks {
		case 1: // read "not run": the boot stage runs
			f.run(modules.StageBoot, mods)
		case 2: // read "running": the final stage runs
			f.run(modules.StageFinal, mods)
		}
		if _, err := stdin.Write([]byte("\n")); err != nil {
			t.Fatal(err)
		}
	}
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	if cmd.ProcessState.ExitCode() != 0 || stdout.String() != "...\nstatus: done\n" || ticks != 3 {
		t.Errorf("cloud-init status --wait: exit %d after %d readings:\n%q", cmd.ProcessState.ExitCode(), ticks, stdout.String())
	}
}

// TestWaitStatus: earlyinit's own `status --wait` prints what cloud-init's
// does while it waits: a dot per reading, a newline once done; nothing in
// JSON or without --wait.
func TestWaitStatus(t *testing.T) {
	f := newFixture(t)
	f.store("iid-1", "")
	var out bytes.Buffer
	if rep, err := WaitStatus(f.dir, false, "tabular", &out); err != nil || rep.Status != StatusNotRun || out.Len() != 0 {
		t.Errorf("without wait: %+v %v %q", rep, err, out.String())
	}
	done := make(chan StatusReport)
	go func() {
		rep, err := WaitStatus(f.dir, true, "tabular", &out)
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	time.Sleep(600 * time.Millisecond)
	f.run(modules.StageBoot, []modules.Module{})
	time.Sleep(600 * time.Millisecond)
	f.run(modules.StageFinal, []modules.Module{})
	rep := <-done
	if rep.Status != statusDone || !regexp.MustCompile(`^\.{3,}\n$`).MatchString(out.String()) {
		t.Errorf("wait: %+v, printed %q", rep, out.String())
	}
	out.Reset()
	if rep, err := WaitStatus(f.dir, true, "json", &out); err != nil || rep.Status != statusDone || out.Len() != 0 {
		t.Errorf("json: %+v %v %q", rep, err, out.String())
	}
}
