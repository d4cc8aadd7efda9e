package blockdev

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Spec is a root=-style device spec: "/dev/vda1", "LABEL=x", "UUID=x",
// "PARTUUID=x", "PARTLABEL=x".
type Spec struct{ Kind, Value string } // Kind: "path", "label", "uuid", "partuuid", "partlabel"

// ParseSpec parses a root=-style device spec.
func ParseSpec(s string) (Spec, error) {
	for _, k := range []struct{ prefix, kind string }{
		{"LABEL=", "label"},
		{"UUID=", "uuid"},
		{"PARTUUID=", "partuuid"},
		{"PARTLABEL=", "partlabel"},
	} {
		v, ok := strings.CutPrefix(s, k.prefix)
		if !ok {
			continue
		}
		if v == "" {
			return Spec{}, fmt.Errorf("device spec %q: empty %s", s, strings.TrimSuffix(k.prefix, "="))
		}
		if k.kind == "partuuid" {
			if i := strings.IndexByte(v, '/'); i >= 0 {
				return Spec{}, fmt.Errorf("device spec %q: %s suffix not supported", s, v[i:])
			}
		}
		return Spec{Kind: k.kind, Value: v}, nil
	}
	switch {
	case s == "":
		return Spec{}, errors.New("empty device spec")
	case strings.HasPrefix(s, "/"):
		return Spec{Kind: "path", Value: s}, nil
	}
	return Spec{}, fmt.Errorf("device spec %q: want /dev/NAME, LABEL=, UUID=, PARTUUID= or PARTLABEL=", s)
}

// Match reports whether d is the device s names. A path also matches
// when it is "/dev/"+d.Name, or a /dev/disk/by-{label,uuid,partuuid,partlabel}
// link naming d's label or ids. Labels and partition names match
// exactly, UUIDs in any case.
func (s Spec) Match(d Device) bool {
	switch s.Kind {
	case "path":
		if s.Value == d.Path || s.Value == "/dev/"+d.Name {
			return true
		}
		for _, l := range []struct{ dir, kind string }{
			{"/dev/disk/by-label/", "label"},
			{"/dev/disk/by-uuid/", "uuid"},
			{"/dev/disk/by-partuuid/", "partuuid"},
			{"/dev/disk/by-partlabel/", "partlabel"},
		} {
			if v, ok := strings.CutPrefix(s.Value, l.dir); ok && v != "" && !strings.Contains(v, "/") {
				return Spec{Kind: l.kind, Value: unescapeUdev(v)}.Match(d)
			}
		}
		return false
	case "label":
		return d.FS.Type != "" && d.FS.Label == s.Value
	case "uuid":
		return d.FS.Type != "" && d.FS.UUID != "" && strings.EqualFold(d.FS.UUID, s.Value)
	case "partuuid":
		return d.PartUUID != "" && strings.EqualFold(d.PartUUID, s.Value)
	case "partlabel":
		return d.PartLabel != "" && d.PartLabel == s.Value
	}
	return false
}

// String gives the spec back in root= form.
func (s Spec) String() string {
	switch s.Kind {
	case "label":
		return "LABEL=" + s.Value
	case "uuid":
		return "UUID=" + s.Value
	case "partuuid":
		return "PARTUUID=" + s.Value
	case "partlabel":
		return "PARTLABEL=" + s.Value
	}
	return s.Value
}

// unescapeUdev undoes udev's \xHH escaping of /dev/disk/by-* names
// (a label "a/b" is linked as "a\x2fb").
func unescapeUdev(s string) string {
	if !strings.Contains(s, `\x`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) && s[i+1] == 'x' {
			if n, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
