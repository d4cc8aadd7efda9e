package system

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"golang.org/x/sys/unix"
)

// SeedRandom is cc_seed_random (random_seed): data, decoded per encoding
// (raw, the default; b64 or base64; gz or gzip; b64-gz, gz+b64 or
// gzip+base64 for gzip then base64), is appended to file (default
// /dev/urandom; a regular file is created 0600); then command, if given,
// runs with RANDOM_SEED_FILE set to file. A command that is not in the
// root is an error only with command_required (as is command_required
// without a command). The data is a secret: only its size is logged. The
// metadata's random_seed (OpenStack, Azure) went into the kernel pool in
// the initramfs already and is not written again.
func SeedRandom(ctx context.Context, e *core.Env) error {
	rc, ok, err := ccfg.Decode[ccfg.RandomSeed](e.Cfg, "random_seed")
	if !ok || err != nil {
		return err
	}
	file := rc.File
	if _, err := core.ConfPath("random_seed.file", file); err != nil {
		return err
	}
	data, err := seedData(rc)
	if err != nil {
		return err
	}
	if len(data) > 0 {
		e.Logf("random_seed: adding %d bytes of random seed entropy to %s", len(data), file)
		if err := appendSeed(e, file, data); err != nil {
			return fmt.Errorf("random_seed.file: %w", err)
		}
	}
	return seedCommand(ctx, e, rc, file)
}

// seedData is random_seed.data decoded per random_seed.encoding.
func seedData(rc ccfg.RandomSeed) ([]byte, error) {
	if rc.Data == nil || len(*rc.Data) == 0 {
		return nil, nil
	}
	data := []byte(*rc.Data)
	enc := strings.ToLower(strings.TrimSpace(rc.Encoding))
	var wf string
	switch enc {
	case "", "raw":
		return data, nil
	case "b64", "base64":
		wf = "b64"
	case "gz", "gzip":
		wf = "gz"
	case "b64-gz", "gz+b64", "gzip+base64", "gz+base64", "gzip+b64":
		wf = "gz+b64"
	default:
		return nil, fmt.Errorf("random_seed.encoding %q: want raw, b64, base64, gz, gzip or b64-gz", enc)
	}
	out, err := core.WriteFilesEncoding(wf, data)
	if err != nil {
		// The decoder's message names the encoding, never the data.
		return nil, fmt.Errorf("random_seed.data: %w", err)
	}
	return out, nil
}

// appendSeed appends data to file: a character device (/dev/urandom) is
// written directly, anything else through Root (a regular file, created
// 0600, never a symlink).
func appendSeed(e *core.Env, file string, data []byte) error {
	fi, err := e.Root.Stat(file)
	if err == nil && fi.Mode()&fs.ModeCharDevice != 0 {
		if !strings.HasPrefix(file, "/dev/") {
			return fmt.Errorf("%s: a device outside /dev", file)
		}
		f, err := os.OpenFile(e.Root.Path(file), os.O_WRONLY|unix.O_NOFOLLOW, 0)
		if err != nil {
			return err
		}
		defer f.Close()
		if st, err := f.Stat(); err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			return fmt.Errorf("%s: not a character device", file)
		}
		if _, err := f.Write(data); err != nil {
			return fmt.Errorf("write %s: %w", file, err)
		}
		return nil
	}
	return e.Root.AppendFile(file, data, 0o600, 0, 0)
}

// seedCommand is handle_random_seed_command.
func seedCommand(ctx context.Context, e *core.Env, rc ccfg.RandomSeed, file string) error {
	required, argv := rc.CommandRequired, rc.Command
	if len(argv) == 0 {
		if required {
			return fmt.Errorf("random_seed.command: none given but command_required is true")
		}
		return nil
	}
	name := argv[0]
	found := false
	if strings.HasPrefix(name, "/") {
		found = e.Root.Exists(name)
	} else if !strings.Contains(name, "/") {
		_, found = e.Tool(name)
	}
	if !found {
		if required {
			return fmt.Errorf("random_seed.command: %q not found but command_required is true", name)
		}
		e.Logf("random_seed: command %q not found: skipped", name)
		return nil
	}
	if _, err := e.Run(ctx, core.Cmd{Name: name, Args: argv[1:], Env: []string{"RANDOM_SEED_FILE=" + file}, Output: e.Out()}); err != nil {
		return fmt.Errorf("random_seed.command: %w", err)
	}
	return nil
}
