package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// statusRoot is a root whose boot record and late stages' status say:
// the initramfs's datasource step failed, the boot stage ran bootcmd and
// skipped runcmd, with a warning, and the final stage's scripts_user
// failed.
func statusRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	run := filepath.Join(root, "run/earlyinit")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{
		"boot.json": `{"version": "v1", "init": "/sbin/init", "total_ns": 4000000000, "started_unix": 1700000000.25, "uptime": 1.5,
 "module_load_ns": 1500000000, "device_wait_ns": 500000000, "network_wait_ns": 0,
 "steps": [{"name": "modules", "start_ns": 1000000, "duration_ns": 2000000000}, {"name": "datasource", "start_ns": 2500000000, "duration_ns": 300000000, "error": "bad drive"}]}`,
		"status.json": `{"v1": {"datasource": "DataSourceNoCloud [seed=/dev/sr0]", "stage": null,
 "boot": {"start": 1700000005.0, "finished": 1700000006.5, "errors": [], "recoverable_errors": {"WARNING": ["a warning long enough to be folded by PyYAML at eighty columns, as cloud-init's are: yes"]},
  "modules": [{"name": "bootcmd", "frequency": "always", "status": "ok", "start": 1700000005.1, "duration": 0.25},
   {"name": "runcmd", "frequency": "once-per-instance", "status": "skipped", "start": 1700000005.4, "duration": 0.001, "reason": "already ran"}]},
 "final": {"start": 1700000010.0, "finished": 1700000012.0, "errors": ["module scripts_user: exit status 1"],
  "modules": [{"name": "scripts_user", "frequency": "once-per-instance", "status": "error", "start": 1700000010.5, "duration": 1.2, "error": "x"}]}}}`,
		"result.json": `{"v1": {"datasource": "DataSourceNoCloud [seed=/dev/sr0]", "errors": ["module scripts_user: exit status 1"]}}`,
	} {
		if err := os.WriteFile(filepath.Join(run, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestStatusFlags: cloud-init's short and long flags mean the same, and
// each format says the status; the exit code is the status's.
func TestStatusFlags(t *testing.T) {
	root := statusRoot(t)
	long := []string{"status: error\n", "boot_status_code: enabled\n", "detail:\nmodule scripts_user: exit status 1\n", "error: module scripts_user: exit status 1\n"}
	for _, c := range []cliCase{
		{args: []string{"status", "--root", root}, code: 1, stdout: []string{"status: error\n"}, notStdout: []string{"boot_status_code"}, noStderr: true},
		{args: []string{"status", "--root", root, "--long"}, code: 1, stdout: long, noStderr: true},
		{args: []string{"status", "-l", "--root", root}, code: 1, stdout: long, noStderr: true},
		{args: []string{"status", "--root", root, "-lw"}, code: 1, stdout: append([]string{"\nstatus: error\n"}, long...), notStdout: []string{"."}, noStderr: true},
		{args: []string{"status", "--root", root, "--format", "json"}, code: 1, stdout: []string{`"status": "error"`}, notStdout: []string{`"stages"`}, noStderr: true},
		{args: []string{"status", "--root", root, "--format=json", "-l"}, code: 1, stdout: []string{`"status": "error"`, `"stages"`}, noStderr: true},
	} {
		c.check(t)
	}
	yaml := cliCase{args: []string{"status", "--root", root, "--format", "yaml"}, code: 1, stdout: []string{"---\n", "status: error\n", "errors:\n- 'module scripts_user: exit status 1'\n", "\n...\n\n"}, notStdout: []string{"stages:"}, noStderr: true}
	if !cliFormats {
		yaml = cliCase{args: yaml.args, code: 1, stderr: []string{"--format yaml is not in this build (the initramfs's): run /usr/bin/earlyinit"}}
	}
	yaml.check(t)
	// --wait polls while running: a dot per poll (tabular), then the
	// status once the stages are done.
	wroot := t.TempDir()
	run := filepath.Join(wroot, "run/earlyinit")
	os.MkdirAll(run, 0o755)
	status := `{"v1": {"datasource": "DataSourceNoCloud", "stage": null,
 "boot": {"start": 1700000005.0, "finished": 1700000006.5, "errors": [], "modules": []},
 "final": {"start": 1700000010.0, "finished": %s, "errors": [], "modules": []}}}`
	if err := os.WriteFile(filepath.Join(run, "status.json"), []byte(strings.Replace(status, "%s", "null", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(750 * time.Millisecond) // three of late.WaitStatus's 250 ms polls
		os.WriteFile(filepath.Join(run, "status.json.new"), []byte(strings.Replace(status, "%s", "1700000012.0", 1)), 0o644)
		os.Rename(filepath.Join(run, "status.json.new"), filepath.Join(run, "status.json"))
		os.WriteFile(filepath.Join(run, "result.json"), []byte(`{"v1": {"datasource": "DataSourceNoCloud", "errors": []}}`), 0o644)
	}()
	cliCase{args: []string{"status", "--root", wroot, "-w"}, code: 0, stdout: []string{"..", ".\nstatus: done\n"}, noStderr: true}.check(t)
	<-done
	cliCase{args: []string{"status", "--root", wroot, "--wait"}, code: 0, stdout: []string{"\nstatus: done\n"}, notStdout: []string{"."}, noStderr: true}.check(t)
}

// TestCleanFlags: clean removes the instance state and keeps the seed;
// -s removes the seed, -l the logs, --machine-id /etc/machine-id; -r
// reboots with shutdown -r now, only when the cleaning succeeded.
func TestCleanFlags(t *testing.T) {
	bin := t.TempDir()
	calls := filepath.Join(bin, "calls")
	if err := os.WriteFile(filepath.Join(bin, "shutdown"), []byte("#!/bin/sh\necho \"$@\" >> "+calls+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	mk := func(t *testing.T) string {
		root := t.TempDir()
		for _, f := range []string{"var/lib/earlyinit/instances/i-1/x", "var/lib/earlyinit/seed/nocloud/user-data", "var/log/earlyinit.log", "var/log/earlyinit-output.log", "etc/machine-id"} {
			p := filepath.Join(root, f)
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return root
	}
	exists := func(root, f string) bool { _, err := os.Lstat(filepath.Join(root, f)); return err == nil }
	for _, tc := range []struct {
		args              []string
		seed, logs, mid   bool // still there after
		reboots           bool
		code              int
		instanceRemaining bool
	}{
		{args: nil, seed: true, logs: true, mid: true},
		{args: []string{"-s"}, logs: true, mid: true},
		{args: []string{"--seed", "--logs"}, mid: true},
		{args: []string{"-ls"}, mid: true},
		{args: []string{"--machine-id"}, seed: true, logs: true},
		{args: []string{"-r"}, seed: true, logs: true, mid: true, reboots: true},
		{args: []string{"--reboot", "-l", "-s", "--machine-id"}, reboots: true},
	} {
		os.Remove(calls)
		root := mk(t)
		code, out, errOut := captureAll(t, append([]string{"clean", "--root", root}, tc.args...)...)
		if code != tc.code || out != "" || errOut != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", tc.args, code, out, errOut)
		}
		if exists(root, "var/lib/earlyinit/instances") {
			t.Errorf("%q: the instances are still there", tc.args)
		}
		if got := exists(root, "var/lib/earlyinit/seed"); got != tc.seed {
			t.Errorf("%q: seed there: %v, want %v", tc.args, got, tc.seed)
		}
		if got := exists(root, "var/log/earlyinit.log") || exists(root, "var/log/earlyinit-output.log"); got != tc.logs {
			t.Errorf("%q: logs there: %v, want %v", tc.args, got, tc.logs)
		}
		if got := exists(root, "etc/machine-id"); got != tc.mid {
			t.Errorf("%q: machine-id there: %v, want %v", tc.args, got, tc.mid)
		}
		b, _ := os.ReadFile(calls)
		if got := string(b) == "-r now\n"; got != tc.reboots || (!tc.reboots && len(b) > 0) {
			t.Errorf("%q: shutdown calls %q, want a reboot: %v", tc.args, b, tc.reboots)
		}
	}
	// A failed cleaning does not reboot, but the machine id goes.
	os.Remove(calls)
	root := mk(t)
	os.RemoveAll(filepath.Join(root, "var/lib/earlyinit"))
	os.WriteFile(filepath.Join(root, "var/lib/earlyinit"), nil, 0o644) // not a directory
	code, _, errOut := captureAll(t, "clean", "--root", root, "-r", "--machine-id")
	if b, _ := os.ReadFile(calls); code != 1 || len(b) != 0 || exists(root, "etc/machine-id") || !strings.Contains(errOut, "not a directory") {
		t.Errorf("failed clean: exit %d, shutdown %q, machine-id there %v, stderr %q", code, b, exists(root, "etc/machine-id"), errOut)
	}
	// A planted link is removed, not followed.
	root = mk(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "keep"), []byte("x"), 0o644)
	os.Symlink(outside, filepath.Join(root, "var/lib/earlyinit/seed/link"))
	if code, _, errOut := captureAll(t, "clean", "--root", root, "-s"); code != 0 || exists(root, "var/lib/earlyinit/seed") || !exists(outside, "keep") {
		t.Errorf("seed with a link: exit %d %q; seed there %v, the link's target kept %v", code, errOut, exists(root, "var/lib/earlyinit/seed"), exists(outside, "keep"))
	}
}

// TestSchemaFlags: -c is --config-file, --system checks the instance's
// user-data (its cloud-config parts when it is a multipart), --annotate
// prints cloud-init's annotated file, and the flags that exclude each
// other are refused.
func TestSchemaFlags(t *testing.T) {
	if verbs["schema"].flags == nil {
		t.Skip("this build has no schema")
	}
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
	os.WriteFile(good, []byte("#cloud-config\nruncmd: [echo hi]\n"), 0o644)
	badText := "#cloud-config\nruncmd: [echo hi]\nno_such_key: 1\nwrite_files:\n  - path: 5\nsnap: {}\n"
	os.WriteFile(bad, []byte(badText), 0o644)

	root := t.TempDir()
	idir := filepath.Join(root, "var/lib/earlyinit/instances/i-1")
	os.MkdirAll(idir, 0o755)
	os.Symlink("instances/i-1", filepath.Join(root, "var/lib/earlyinit/instance"))
	mime := "Content-Type: multipart/mixed; boundary=XX\nMIME-Version: 1.0\n\n--XX\nContent-Type: text/x-shellscript\n\n#!/bin/sh\necho hi\n--XX\nContent-Type: text/cloud-config\n\n#cloud-config\nno_such_key: 1\n--XX--\n"
	os.WriteFile(filepath.Join(idir, "user-data.txt"), []byte(mime), 0o600)
	goodRoot := t.TempDir()
	os.MkdirAll(filepath.Join(goodRoot, "var/lib/earlyinit/instance"), 0o755)
	os.WriteFile(filepath.Join(goodRoot, "var/lib/earlyinit/instance/user-data.txt"), []byte("#cloud-config\nruncmd: [ls]\n"), 0o600)

	annotated := "#cloud-config\nruncmd: [echo hi]\nno_such_key: 1\t\t# E1\nwrite_files:\n  - path: 5\t\t# E2\nsnap: {}\t\t# W1\n\n" +
		"# Errors: -------------\n# E1: no_such_key: unknown key\n"
	for _, c := range []cliCase{
		{args: []string{"schema", "-c", good}, code: 0, stdout: []string{"Valid cloud-config: " + good + "\n"}, noStderr: true},
		{args: []string{"schema", "--config-file=" + good}, code: 0, stdout: []string{"Valid cloud-config: " + good + "\n"}, noStderr: true},
		{args: []string{"schema", "-c", bad}, code: 1, stdout: []string{"error: " + bad + ":3:1: no_such_key", "error: " + bad + ":5:"}, noStderr: true},
		{args: []string{"schema", "-c", bad, "--annotate"}, code: 1, stdout: []string{annotated, "# E2: write_files.0.path: ", "# Warnings: -------------\n# W1: snap: "}, notStdout: []string{"error: "}, noStderr: true},
		{args: []string{"schema", "--annotate", "-c", good}, code: 0, stdout: []string{"Valid cloud-config: " + good + "\n"}, notStdout: []string{"# Errors"}, noStderr: true},
		{args: []string{"schema", "--system", "--root", goodRoot}, code: 0, stdout: []string{"Valid cloud-config: system userdata\n"}, noStderr: true},
		{args: []string{"schema", "--system", "--root", root}, code: 1, stdout: []string{"no_such_key"}, notStdout: []string{"Valid"}, noStderr: true},
		{args: []string{"schema", "--system", "--root", t.TempDir()}, code: 1, stderr: []string{"user-data.txt"}, noStdout: true},
		{args: []string{"schema", "-c", good, "--system"}, code: 2, stderr: []string{"--config-file and --system are exclusive"}, noStdout: true},
		{args: []string{"schema", "--annotate"}, code: 2, stderr: []string{"give --config-file FILE, --system or --image"}, noStdout: true},
		{args: []string{"schema", "--image", "--annotate"}, code: 2, stderr: []string{"--annotate goes with --config-file or --system"}, noStdout: true},
		{args: []string{"schema", "-c", good, "extra"}, code: 2, stderr: []string{"takes no operands"}, noStdout: true},
		{args: []string{"schema", "--docs", "all"}, code: 2, stderr: []string{"unknown flag: --docs"}, noStdout: true},
	} {
		c.check(t)
	}
}
