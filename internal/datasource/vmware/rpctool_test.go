package vmware

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/proc"
	"github.com/earlyinit/earlyinit/internal/proc/proctest"
)

// TestRPCToolBackgroundChild: a tool that leaves a child in the background
// holding its stdout answers as soon as it exits (plus proc.WaitDelay at
// most), and a tool that hangs is killed with its group when ctx ends.
// Before, the first waited for the child (30s) and the second's child
// outlived the deadline, holding Get until it exited.
func TestRPCToolBackgroundChild(t *testing.T) {
	t.Parallel()
	proctest.Subreaper(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	tool := filepath.Join(dir, "vmware-rpctool")
	script := `#!/bin/sh
sleep 30 & echo $! > ` + pidFile + `
case "$1" in
"info-get guestinfo.metadata") echo "instance-id: i-bg" ;;
*) sleep 30 ;;
esac
`
	if err := os.WriteFile(tool, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	v, ok, err := RPCTool{Path: tool}.Get(context.Background(), "metadata")
	if took := time.Since(t0); took > proc.WaitDelay+proctest.Slack {
		t.Errorf("Get took %s, want at most %s", took, proc.WaitDelay+proctest.Slack)
	}
	if err != nil || !ok || strings.TrimSpace(v) != "instance-id: i-bg" {
		t.Errorf("Get = %q, %v, %v", v, ok, err)
	}
	pid := proctest.Pid(t, pidFile)
	proctest.KillAtCleanup(t, pid)
	if !proctest.Running(pid) {
		t.Errorf("the tool's background child %d is not running after Get", pid)
	}

	os.Remove(pidFile)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	t0 = time.Now()
	if _, _, err := (RPCTool{Path: tool}).Get(ctx, "hang"); err == nil {
		t.Error("a hanging tool: Get succeeded")
	}
	if took := time.Since(t0); took > time.Second+proc.WaitDelay+proctest.Slack {
		t.Errorf("a hanging tool: Get took %s", took)
	}
	pid = proctest.Pid(t, pidFile)
	proctest.KillAtCleanup(t, pid)
	if !proctest.Gone(pid, 5*time.Second) {
		t.Errorf("the hanging tool's background child %d outlived the deadline", pid)
	}
}

// TestRPCToolSendAndToolsConfig: Send gives the tool's answer without its
// line break; ToolsConfig reads vmware-toolbox-cmd's "[section] key =
// value", and an unset key (no "="), exit 69 and a missing tool are
// "not set", as cloud-init's get_tools_config has them.
func TestRPCToolSendAndToolsConfig(t *testing.T) {
	dir := t.TempDir()
	rpc := filepath.Join(dir, "vmware-rpctool")
	if err := os.WriteFile(rpc, []byte("#!/bin/sh\necho \"got: $1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := RPCTool{Path: rpc}.Send(context.Background(), "deployPkg.update.state 5 0 /run/earlyinit/initramfs.log")
	if err != nil || out != "got: deployPkg.update.state 5 0 /run/earlyinit/initramfs.log" {
		t.Errorf("Send = %q, %v", out, err)
	}
	box := filepath.Join(dir, "vmware-toolbox-cmd")
	for _, tc := range []struct {
		script, want string
		ok, err      bool
	}{
		{`echo "[$3] $4 = true"`, "true", true, false},
		{`echo "[$3] $4 UNSET"`, "", false, false},
		{`exit 69`, "", false, false},
		{`echo broken >&2; exit 3`, "", false, true},
	} {
		if err := os.WriteFile(box, []byte("#!/bin/sh\n[ \"$1 $2\" = \"config get\" ] || exit 9\n"+tc.script+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		v, ok, err := RPCTool{ToolboxPath: box}.ToolsConfig(context.Background(), "deployPkg", "enable-custom-scripts")
		if v != tc.want || ok != tc.ok || (err != nil) != tc.err {
			t.Errorf("%s: ToolsConfig = %q, %v, %v", tc.script, v, ok, err)
		}
	}
	// No vmware-toolbox-cmd in the root: the default applies.
	if v, ok, err := (RPCTool{Root: t.TempDir()}).ToolsConfig(context.Background(), "deployPkg", "enable-custom-scripts"); ok || err != nil || v != "" {
		t.Errorf("no tool: %q, %v, %v", v, ok, err)
	}
}
