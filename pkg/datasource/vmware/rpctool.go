package vmware

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Tools are open-vm-tools' programs that speak the backdoor's RPCI
// channel, in the order tried (as cloud-init tries them).
var Tools = []string{"vmware-rpctool", "vmtoolsd"}

// noValue is what the tools print when a key is not set.
const noValue = "No value found"

// RPCTool is the GuestInfo of open-vm-tools' command-line tools:
// vmware-rpctool "info-get guestinfo.KEY", or vmtoolsd --cmd "...".
type RPCTool struct {
	// Path is the tool to run; "" means the first of Tools found in PATH.
	Path string
}

// Get runs "info-get guestinfo.<key>".
func (t RPCTool) Get(ctx context.Context, key string) (string, bool, error) {
	out, stderr, err := t.run(ctx, "info-get guestinfo."+key)
	if err != nil {
		if strings.Contains(stderr, noValue) {
			return "", false, nil
		}
		return "", false, err
	}
	return out, true, nil
}

// Set runs "info-set guestinfo.<key> <value>"; an empty value is sent as a
// blank, which the tools cannot tell from clearing.
func (t RPCTool) Set(ctx context.Context, key, value string) error {
	if value == "" {
		value = " "
	}
	_, _, err := t.run(ctx, "info-set guestinfo."+key+" "+value)
	return err
}

// run runs the tool with one RPC command; errors name the tool and the
// command's first two words (never a value).
func (t RPCTool) run(ctx context.Context, rpc string) (stdout, stderr string, err error) {
	path := t.Path
	if path == "" {
		for _, name := range Tools {
			if p, err := exec.LookPath(name); err == nil {
				path = p
				break
			}
		}
		if path == "" {
			return "", "", fmt.Errorf("none of %s found: reading guestinfo needs open-vm-tools", strings.Join(Tools, ", "))
		}
	}
	args := []string{rpc}
	if filepath.Base(path) == "vmtoolsd" {
		args = []string{"--cmd", rpc}
	}
	what := strings.Join(strings.Fields(rpc)[:min(2, len(strings.Fields(rpc)))], " ")
	var o, e bytes.Buffer
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(e.String())
		if len(msg) > 200 {
			msg = msg[:200] + "..."
		}
		var ee *exec.ExitError
		if errors.As(err, &ee) && msg != "" {
			return o.String(), e.String(), fmt.Errorf("%s %q: %v: %s", path, what, err, msg)
		}
		return o.String(), e.String(), fmt.Errorf("%s %q: %w", path, what, err)
	}
	return o.String(), e.String(), nil
}
