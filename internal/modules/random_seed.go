package modules

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/ccfg"
)

// seedRandom is cc_seed_random (random_seed): data, decoded per encoding
// (raw, the default; b64 or base64; gz or gzip; b64-gz, gz+b64 or
// gzip+base64 for gzip then base64), is appended to file (default
// /dev/urandom; a regular file is created 0600); then command, if given,
// runs with RANDOM_SEED_FILE set to file. A command that is not in the
// root is an error only with command_required (as is command_required
// without a command). The data is a secret: only its size is logged. The
// metadata's random_seed (OpenStack, Azure) went into the kernel pool in
// the initramfs already and is not written again.
func seedRandom(ctx context.Context, e *Env) error {
	rc, ok, err := ccfg.Decode[ccfg.RandomSeed](e.Cfg, "random_seed")
	if !ok || err != nil {
		return err
	}
	file := rc.File
	if _, err := confPath("random_seed.file", file); err != nil {
		return err
	}
	data, err := seedData(rc)
	if err != nil {
		return err
	}
	if len(data) > 0 {
		e.logf("random_seed: adding %d bytes of random seed entropy to %s", len(data), file)
		if err := e.appendSeed(file, data); err != nil {
			return fmt.Errorf("random_seed.file: %w", err)
		}
	}
	return e.seedCommand(ctx, rc, file)
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
	out, err := writeFilesEncoding(wf, data)
	if err != nil {
		// The decoder's message names the encoding, never the data.
		return nil, fmt.Errorf("random_seed.data: %w", err)
	}
	return out, nil
}

// appendSeed appends data to file: a character device (/dev/urandom) is
// written directly, anything else through Root (a regular file, created
// 0600, never a symlink).
func (e *Env) appendSeed(file string, data []byte) error {
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
func (e *Env) seedCommand(ctx context.Context, rc ccfg.RandomSeed, file string) error {
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
		_, found = e.tool(name)
	}
	if !found {
		if required {
			return fmt.Errorf("random_seed.command: %q not found but command_required is true", name)
		}
		e.logf("random_seed: command %q not found: skipped", name)
		return nil
	}
	if _, err := e.run(ctx, Cmd{Name: name, Args: argv[1:], Env: []string{"RANDOM_SEED_FILE=" + file}, Output: e.output()}); err != nil {
		return fmt.Errorf("random_seed.command: %w", err)
	}
	return nil
}
