// Package datasource holds what the datasource readers share: the Source
// each declares, the capped reads of drives and files, public-keys
// normalizing, and for the metadata services the HTTP settings every Client
// embeds (HTTPClient) and the read of a one-document service.
//
// The readers import this package, so it must never import them: the
// registry that lists every source is internal/discover.
package datasource

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// MaxFileSize is the most a reader takes from any one datasource file
// (user-data, vendor-data, metadata): anything bigger is rejected, never
// truncated. cloud-init has no limit; 16 MiB is far beyond any real payload
// (OpenStack caps user_data at 64 KiB, EC2 at 16 KiB) and bounds memory in the
// initramfs.
const MaxFileSize = 16 << 20

// ReadFile reads name from fsys, refusing a file over limit bytes before
// reading it and, should the size lie, after limit+1 bytes. Errors from Open
// are returned as is (an *fs.PathError naming the file), so callers can test
// errors.Is(err, fs.ErrNotExist).
func ReadFile(fsys fs.FS, name string, limit int64) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat %s: %w", name, err)
	}
	if fi.IsDir() {
		return nil, fmt.Errorf("read %s: is a directory", name)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("read %s: %d bytes is over the %d byte limit", name, fi.Size(), limit)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		return nil, err // names the file already
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("read %s: over the %d byte limit", name, limit)
	}
	return b, nil
}

// PublicKeys normalizes a public-keys value decoded from JSON or YAML into
// authorized_keys lines, as cloud-init's normalize_pubkey_data does: a string
// is split into lines; a list holds keys; an object maps key names to a key
// or a list of keys. Empty lines are dropped and each key is trimmed. Object
// entries come sorted by name (decoded maps have lost the source order), list
// and line order is kept. Unlike cloud-init, a value of any other type, or a
// list element that is not a string, is an error rather than silently
// ignored; the error gives only the reason, the caller names file and key.
func PublicKeys(v any) ([]string, error) {
	var keys []string
	add := func(s string) {
		for _, line := range strings.Split(s, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				keys = append(keys, line)
			}
		}
	}
	addList := func(l []any, where string) error {
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				return fmt.Errorf("%selement %d: want a string, got %s", where, i, scalar.JSONNoun(e))
			}
			add(s)
		}
		return nil
	}
	switch v := v.(type) {
	case nil:
	case string:
		add(v)
	case []any:
		if err := addList(v, ""); err != nil {
			return nil, err
		}
	case map[string]any:
		names := make([]string, 0, len(v))
		for name := range v {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			switch kv := v[name].(type) {
			case nil:
			case string:
				add(kv)
			case []any:
				if err := addList(kv, fmt.Sprintf("%q: ", name)); err != nil {
					return nil, err
				}
			default:
				return nil, fmt.Errorf("%q: want a string or a list, got %s", name, scalar.JSONNoun(kv))
			}
		}
	default:
		return nil, fmt.Errorf("want a string, a list or an object, got %s", scalar.JSONNoun(v))
	}
	return keys, nil
}

// ReadOptional is ReadFile for a file that may be missing: it returns nil and
// no error then, and a non-nil (possibly empty) slice when the file exists.
func ReadOptional(fsys fs.FS, name string, limit int64) ([]byte, error) {
	b, err := ReadFile(fsys, name, limit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}
