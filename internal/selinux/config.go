package selinux

import (
	"fmt"
	"strings"
)

// configPath is SELinux's configuration in a root.
const configPath = "/etc/selinux/config"

// defaultType is libselinux's SELINUXTYPE when the configuration has none.
const defaultType = "targeted"

// Mode values of SELINUX=.
const (
	Enforcing  = "enforcing"
	Permissive = "permissive"
	Disabled   = "disabled"
)

// config is what /etc/selinux/config says.
type config struct {
	mode   string // Enforcing, Permissive or Disabled
	policy string // SELINUXTYPE
}

// parseConfig reads /etc/selinux/config: KEY=value lines as a shell reads
// them (blank lines and "#" comments skipped, the value optionally in
// single or double quotes, a "#" comment after an unquoted value). Keys
// are matched without regard to case, as libselinux does; other keys
// (SETLOCALDEFS, REQUIRESEUSERS, AUTORELABEL) are ignored. SELINUX is
// required, SELINUXTYPE defaults to "targeted" and must be a plain
// directory name. file names the file in errors.
func parseConfig(file string, data []byte) (config, error) {
	c := config{policy: defaultType}
	seenMode := false
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		key, raw, ok := strings.Cut(line, "=")
		if !ok {
			key = strings.Fields(line)[0]
		}
		key = strings.ToUpper(strings.TrimSpace(key))
		if key != "SELINUX" && key != "SELINUXTYPE" {
			continue
		}
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s line %d: %s: %s", file, n+1, key, fmt.Sprintf(format, args...))
		}
		if !ok {
			return config{}, bad("no '='")
		}
		v, err := shellValue(raw)
		if err != nil {
			return config{}, bad("%v", err)
		}
		switch key {
		case "SELINUX":
			switch m := strings.ToLower(v); m {
			case Enforcing, Permissive, Disabled:
				c.mode, seenMode = m, true
			default:
				return config{}, bad("%q: want enforcing, permissive or disabled", v)
			}
		case "SELINUXTYPE":
			if !validType(v) {
				return config{}, bad("%q: want the name of a directory in /etc/selinux", v)
			}
			c.policy = v
		}
	}
	if !seenMode {
		return config{}, fmt.Errorf("%s: no SELINUX= line", file)
	}
	return c, nil
}

// shellValue is the value after "=": quotes removed, a trailing comment
// dropped.
func shellValue(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw != "" && (raw[0] == '"' || raw[0] == '\'') {
		end := strings.IndexByte(raw[1:], raw[0])
		if end < 0 {
			return "", fmt.Errorf("unterminated %c quote", raw[0])
		}
		rest := strings.TrimSpace(raw[end+2:])
		if rest != "" && rest[0] != '#' {
			return "", fmt.Errorf("text after the closing quote")
		}
		return raw[1 : end+1], nil
	}
	if i := strings.IndexAny(raw, " \t"); i >= 0 {
		rest := strings.TrimSpace(raw[i:])
		if rest[0] != '#' {
			return "", fmt.Errorf("spaces in an unquoted value")
		}
		raw = raw[:i]
	}
	return raw, nil
}

// validType tells whether a SELINUXTYPE names a directory: not empty, no
// "/", not "." or "..", printable ASCII without spaces.
func validType(v string) bool {
	if v == "" || v == "." || v == ".." || len(v) > 255 {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c <= ' ' || c >= 0x7f || c == '/' {
			return false
		}
	}
	return true
}
