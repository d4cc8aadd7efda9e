package vmware

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/earlyinit/earlyinit/internal/proc"
)

// Tools are open-vm-tools' programs that speak the backdoor's RPCI
// channel, in the order tried (as cloud-init tries them).
var Tools = []string{"vmware-rpctool", "vmtoolsd"}

// noValue is what the tools print when a key is not set.
const noValue = "No value found"

// RPCTool is the GuestInfo of open-vm-tools' command-line tools:
// vmware-rpctool "info-get guestinfo.KEY", or vmtoolsd --cmd "...".
type RPCTool struct {
	// Path is the tool to run; "" means the first of Tools found in PATH,
	// or in Root's toolDirs when Root is set.
	Path string
	// Root, if set, is the real root (mounted by the initramfs): the
	// image's own open-vm-tools are run there, chrooted, since earlyinit's
	// initramfs has none. Path is then inside Root.
	Root string
	// ToolboxPath is vmware-toolbox-cmd, "" to look for it as Path's
	// tools are looked for.
	ToolboxPath string
}

// toolDirs are where a root's open-vm-tools are looked for.
var toolDirs = []string{"/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin"}

// maxToolOutput bounds what a tool may print: a value larger than
// maxValue is refused anyway, and base64 makes it a third larger.
const maxToolOutput = 2*maxValue + 4096

// cappedBuffer keeps at most max bytes and remembers that more came. It
// does not embed bytes.Buffer: io.Copy would use its ReadFrom and pass
// Write by.
type cappedBuffer struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (b *cappedBuffer) String() string { return b.buf.String() }

// errTooMuch stops the copy of a tool's output: the pipe closes and the
// tool gets SIGPIPE rather than printing on.
var errTooMuch = errors.New("output over the cap")

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); len(p) > room {
		b.over = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return 0, errTooMuch
	}
	return b.buf.Write(p)
}

// find is the tool to run, as the path to give exec (inside Root when it
// is set).
func (t RPCTool) find() (string, error) {
	if t.Path != "" {
		return t.Path, nil
	}
	return t.lookup(Tools)
}

// lookup is the first of names found in PATH, or in Root's toolDirs when
// Root is set (as the path to give exec, inside Root).
func (t RPCTool) lookup(names []string) (string, error) {
	for _, name := range names {
		if t.Root == "" {
			if p, err := exec.LookPath(name); err == nil {
				return p, nil
			}
			continue
		}
		for _, dir := range toolDirs {
			// Lstat: a link is resolved by the chroot, never here.
			if _, err := os.Lstat(filepath.Join(t.Root, dir, name)); err == nil {
				return filepath.Join(dir, name), nil
			}
		}
	}
	where := "PATH"
	if t.Root != "" {
		where = t.Root + " (" + strings.Join(toolDirs, ", ") + ")"
	}
	return "", fmt.Errorf("none of %s found in %s: %w", strings.Join(names, ", "), where, errNoTool)
}

// errNoTool is what lookup's error wraps.
var errNoTool = errors.New("reading guestinfo needs open-vm-tools")

// toolboxCmd is open-vm-tools' program that reads VMware Tools'
// configuration (tools.conf).
const toolboxCmd = "vmware-toolbox-cmd"

// ToolsConfig is cloud-init's get_tools_config: `vmware-toolbox-cmd config
// get SECTION KEY`, run as the tools are (chrooted in Root when it is set;
// ToolboxPath, if set, is the program). Its answer "[SECTION] KEY = VALUE"
// gives VALUE; ok is false when the program is not there, exits 69
// (unavailable) or prints no "=" (the key is not set). Another failure is
// an error.
func (t RPCTool) ToolsConfig(ctx context.Context, section, key string) (string, bool, error) {
	path := t.ToolboxPath
	if path == "" {
		var err error
		if path, err = t.lookup([]string{toolboxCmd}); err != nil {
			return "", false, nil
		}
	}
	out, _, err := RunInRoot(ctx, t.Root, "config get", path, "config", "get", section, key)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 69 {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	_, v, ok := strings.Cut(strings.SplitN(out, "\n", 2)[0], "=")
	if !ok {
		return "", false, nil
	}
	return strings.TrimSpace(v), true, nil
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
// command's first two words (never a value). It runs through proc.Run (in
// the initramfs, as PID 1): in a group of its own, killed as a group when
// ctx ends, and a helper the image's tools leave in the background holds
// nothing up.
func (t RPCTool) run(ctx context.Context, rpc string) (stdout, stderr string, err error) {
	path, err := t.find()
	if err != nil {
		return "", "", err
	}
	args := []string{rpc}
	if filepath.Base(path) == "vmtoolsd" {
		args = []string{"--cmd", rpc}
	}
	what := strings.Join(strings.Fields(rpc)[:min(2, len(strings.Fields(rpc)))], " ")
	return RunInRoot(ctx, t.Root, what, path, args...)
}

// Send runs one RPC command, as cloud-init's send_rpc
// ("deployPkg.update.state 5 0 ...", "info-set guestinfo.gc.status ..."),
// and returns its answer without the final line break. Errors name the
// command's first two words only.
func (t RPCTool) Send(ctx context.Context, rpc string) (string, error) {
	out, _, err := t.run(ctx, rpc)
	return strings.TrimRight(out, "\r\n"), err
}

// RunInRoot runs the program path with args and returns what it printed:
// chrooted in root when root is set (path is then inside it; the
// environment a bare PATH and LC_ALL=C), through proc.Run (its own group,
// killed with it when ctx ends). Output is capped; errors name path and
// what (never an argument, which may be a value), with the start of
// stderr.
func RunInRoot(ctx context.Context, root, what, path string, args ...string) (stdout, stderr string, err error) {
	o, e := &cappedBuffer{max: maxToolOutput}, &cappedBuffer{max: 4096}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdout, cmd.Stderr = o, e
	if root != "" {
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	}
	err = proc.Run(cmd)
	if o.over {
		return "", "", fmt.Errorf("%s %q: more than %d bytes of output", path, what, maxToolOutput)
	}
	if err != nil {
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
