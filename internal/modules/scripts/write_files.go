package scripts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// WriteFiles is cc_write_files: the entries without defer: true.
func WriteFiles(_ context.Context, e *core.Env) error {
	return writeFilesEntries(e, false)
}

// WriteFilesDeferred is cc_write_files_deferred: the entries with defer:
// true, in the final stage, once users exist.
func WriteFilesDeferred(_ context.Context, e *core.Env) error {
	return writeFilesEntries(e, true)
}

func writeFilesEntries(e *core.Env, deferred bool) error {
	files, _, err := ccfg.Decode[ccfg.WriteFiles](e.Cfg, "write_files")
	if err != nil {
		return err
	}
	var errs []error
	for i, f := range files {
		// Entry by entry: one that cannot be read does not stop the
		// others.
		if f.Err != nil {
			errs = append(errs, f.Err)
			continue
		}
		if f.Defer != deferred {
			continue
		}
		if err := writeFile(e, f); err != nil {
			errs = append(errs, fmt.Errorf("write_files.%d: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// ParsePermissions reads a mode as cloud-init's decode_perms does: an
// integer as it is (YAML 1.1 already read 0644 as octal), a string as
// octal ("0644", "644", "0o644"); def when missing. A value that is not a
// mode is an error here, where decode_perms gives def with a warning
// (TestWriteFilesAsCloudInit).
func ParsePermissions(v any, def fs.FileMode) (fs.FileMode, error) {
	var n int64
	switch t := v.(type) {
	case nil:
		return def, nil
	case int:
		n = int64(t)
	case float64:
		n = int64(t)
	case string:
		s := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(t), "0o"), "0O")
		var err error
		n, err = strconv.ParseInt(s, 8, 32)
		if err != nil {
			return 0, fmt.Errorf("permissions %q: not an octal mode", t)
		}
	default:
		return 0, fmt.Errorf("permissions: want an octal string or an integer, got %s", core.Kind(v))
	}
	if n < 0 || n > 0o7777 {
		return 0, fmt.Errorf("permissions %#o: out of range", n)
	}
	m := fs.FileMode(n & 0o777)
	if n&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if n&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if n&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m, nil
}

func writeFile(e *core.Env, f ccfg.WriteFile) error {
	p := f.Path
	if p == "" {
		return errors.New("path is missing")
	}
	if !path.IsAbs(p) {
		// cloud-init's os.path.abspath: relative to its working
		// directory, "/" under systemd.
		p = "/" + p
	}
	p = path.Clean(p)
	data, err := core.WriteFilesEncoding(f.Encoding, []byte(f.Content))
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	mode, err := ParsePermissions(f.Permissions, 0o644)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	uid, gid, err := core.ResolveOwner(e.Root, f.Owner)
	if err != nil {
		return fmt.Errorf("%s: %w", p, err)
	}
	if f.Append {
		old, err := e.Root.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		data = append(old, data...)
	}
	e.Logf("write_files: %s (%d bytes, mode %#o, owner %d:%d)", p, len(data), mode.Perm(), uid, gid)
	return e.Root.WriteFile(p, data, mode, uid, gid)
}
