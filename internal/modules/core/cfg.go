package core

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// Helpers for the generic YAML values (map[string]any, []any, string,
// bool, int, float64, nil) that a module's ccfg type keeps as they come
// (fields of type any), with cloud-init's leniency: util.get_cfg_option_bool's
// true strings, numbers as strings where a string is wanted.

// ScalarString is Python's str() of a YAML scalar, as cloud-init formats
// one where it wants text (ccfg.String: TestShellifyAsCloudInit).
func ScalarString(v any) string { return ccfg.String(v) }

// IsTrue is cloud-init's util.is_true / get_cfg_option_bool, which also
// takes "y" (cloud-init does not).
func IsTrue(v any) bool { return ccfg.IsTrue(v) }

// Kind names v's type for a message ("a map", "a list", "null").
func Kind(v any) string { return scalar.YAMLNoun(v) }

// shellQuote quotes s for sh, as cloud-init's shellify does: in single
// quotes, an embedded quote closing the quotes, escaped, and reopening them.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Shellify is cloud-init's util.shellify: a "#!/bin/sh" script with one
// line per item, a string as it is, a list's items quoted and joined by
// spaces; null items are skipped.
func Shellify(key string, items any) (string, error) {
	list, ok := items.([]any)
	if !ok {
		return "", fmt.Errorf("%s: want a list, got %s", key, Kind(items))
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	for i, it := range list {
		switch t := it.(type) {
		case nil:
		case string:
			b.WriteString(t + "\n")
		case []any:
			q := make([]string, len(t))
			for j, a := range t {
				switch a.(type) {
				case map[string]any, []any:
					return "", fmt.Errorf("%s.%d.%d: want a string, got %s", key, i, j, Kind(a))
				}
				if a == nil {
					a = "None" // str(None), as cloud-init
				}
				q[j] = shellQuote(ScalarString(a))
			}
			b.WriteString(strings.Join(q, " ") + "\n")
		default:
			return "", fmt.Errorf("%s.%d: want a string or a list, got %s", key, i, Kind(it))
		}
	}
	return b.String(), nil
}

// AlnumOr tells whether every rune of s is an ASCII letter, a digit or
// one of extra (true for ""; callers bound the length).
func AlnumOr(s, extra string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(extra, r):
		default:
			return false
		}
	}
	return true
}

// RedactURL hides the user information of the URLs in s
// (https://user:token@host/ is https://(credentials)@host/).
func RedactURL(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexAny(s, "/?# \t\n\"'")
		if end < 0 {
			end = len(s)
		}
		if at := strings.LastIndex(s[:end], "@"); at >= 0 {
			b.WriteString("(credentials)")
			s = s[at:]
		}
	}
}

// IniSafe refuses control characters (a line break would start a new
// line of the file).
func IniSafe(s string) bool {
	for _, r := range s {
		if r < ' ' && r != '\t' || r == 0x7f {
			return false
		}
	}
	return true
}

func SortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// WriteFilesEncoding decodes content per a write_files encoding, as
// cloud-init's canonicalize_extraction and extract_contents: gz/gzip,
// gz+base64 (gzip+base64, gz+b64, gzip+b64), b64/base64, text/plain or
// empty as is. Unlike cloud-init, an unknown encoding is an error rather
// than plain text with a warning: writing base64 text where a binary was
// meant helps nobody.
func WriteFilesEncoding(encoding string, content []byte) ([]byte, error) {
	enc := strings.ToLower(strings.TrimSpace(encoding))
	var steps []string
	switch enc {
	case "", "text/plain":
	case "gz", "gzip":
		steps = []string{"gzip"}
	case "gz+base64", "gzip+base64", "gz+b64", "gzip+b64":
		steps = []string{"base64", "gzip"}
	case "b64", "base64":
		steps = []string{"base64"}
	default:
		return nil, fmt.Errorf("encoding %q: want b64, gzip, gz+b64 or text/plain", encoding)
	}
	out := content
	for _, s := range steps {
		switch s {
		case "base64":
			// Python's b64decode drops characters outside the alphabet
			// (newlines from YAML block scalars, spaces).
			clean := strings.Map(func(r rune) rune {
				if r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '/' || r == '=' {
					return r
				}
				return -1
			}, string(out))
			b, err := base64.StdEncoding.DecodeString(clean)
			if err != nil {
				return nil, fmt.Errorf("encoding %s: bad base64: %w", encoding, err)
			}
			out = b
		case "gzip":
			zr, err := gzip.NewReader(bytes.NewReader(out))
			if err != nil {
				return nil, fmt.Errorf("encoding %s: bad gzip: %w", encoding, err)
			}
			b, err := io.ReadAll(io.LimitReader(zr, MaxFileSize+1))
			if err != nil {
				return nil, fmt.Errorf("encoding %s: bad gzip: %w", encoding, err)
			}
			if len(b) > MaxFileSize {
				return nil, fmt.Errorf("encoding %s: inflates past %d bytes", encoding, MaxFileSize)
			}
			out = b
		}
	}
	return out, nil
}

// MaxFileSize bounds a write_files entry's decoded content.
const MaxFileSize = 64 << 20
