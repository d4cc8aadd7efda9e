package ccfg

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// The readings of cc_disk_setup's and cc_mounts' keys that Decode's
// defaults do not make: an entry that cannot be read fails alone, a value
// read only in some cases is refused only then, null told from missing.

// DeviceAliases is device_aliases: a device (or a name the datasource
// maps) by alias. Its values are kept as they come (DeviceAlias), none
// refused here: disk_setup refuses a value that is not a string only when
// an entry names its alias, as cloud-init looks an alias up only then;
// mounts refuses a map or a list at once.
type DeviceAliases map[string]DeviceAlias

// DecodeCC reads a map, each value (null included) as DeviceAlias.
func (d *DeviceAliases) DecodeCC(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, "a map", v)
	}
	out := make(DeviceAliases, len(m))
	for k, x := range m {
		var a DeviceAlias
		if err := a.DecodeCC(x, path+"."+k); err != nil {
			return err
		}
		out[k] = a
	}
	*d = out
	return nil
}

// DeviceAlias is one device_aliases value.
type DeviceAlias struct {
	// Device is the value: a string, or str() of a number or boolean;
	// "" for null, a map or a list.
	Device string
	// Kind is the value's kind ("a string", "null", "a number", "a map").
	Kind string
	// Collection: the value is a map or a list.
	Collection bool
}

// Schema: a string.
func (DeviceAlias) Schema() *Schema { return &Schema{Types: []string{"string"}} }

// DecodeCC keeps v's kind and its str(); it refuses nothing.
func (a *DeviceAlias) DecodeCC(v any, _ string) error {
	*a = DeviceAlias{Kind: scalar.YAMLNoun(v), Collection: isCollection(v)}
	if v != nil && !a.Collection {
		a.Device = String(v)
	}
	return nil
}

// DiskSetups is disk_setup: an entry by device or alias. Each entry, null
// included, is read on its own (DiskSetup.Err), so that one that is not
// a map fails alone and the others are done.
type DiskSetups map[string]DiskSetup

// DecodeCC reads a map of entries.
func (d *DiskSetups) DecodeCC(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, "a map", v)
	}
	out := make(DiskSetups, len(m))
	for k, x := range m {
		var s DiskSetup
		if err := s.DecodeCC(x, path+"."+k); err != nil {
			return err
		}
		out[k] = s
	}
	*d = out
	return nil
}

// DecodeCC reads the entry; what cannot be read is its Err, not an error
// of disk_setup.
func (s *DiskSetup) DecodeCC(v any, path string) error {
	type plain DiskSetup
	s.err = DecodeValue(v, path, (*plain)(s))
	return nil
}

// Err is why the entry could not be read (its key path named), nil when
// it was.
func (s DiskSetup) Err() error { return s.err }

// PartTable is disk_setup's table_type: str() of the value, lower case.
// cc_disk_setup reads it only for a disk it partitions: any value is
// taken here (a map or a list as text that is no table type), and the
// module refuses one that is not mbr or gpt then.
type PartTable string

// DecodeCC takes any value.
func (t *PartTable) DecodeCC(v any, _ string) error {
	*t = PartTable(strings.ToLower(String(v)))
	return nil
}

// DecodeCC reads the entry; what cannot be read is its Err, not an error
// of fs_setup: cloud-init skips an entry that is not a map and goes on.
func (f *FSSetup) DecodeCC(v any, path string) error {
	type plain FSSetup
	f.err = DecodeValue(v, path, (*plain)(f))
	return nil
}

// Err is why the entry could not be read (its key path named), nil when
// it was.
func (f FSSetup) Err() error { return f.err }

// ReplaceFS is fs_setup's replace_fs: the file system type that may be
// replaced, "" for none. cloud-init compares the value with the file
// system types lsblk lists, which false (its default) and a map or a
// list never equal: those are none, and no error.
type ReplaceFS string

// DecodeCC takes any value.
func (r *ReplaceFS) DecodeCC(v any, _ string) error {
	*r = ""
	if s := String(v); !isCollection(v) && s != "False" {
		*r = ReplaceFS(s)
	}
	return nil
}

// MkfsCmd is fs_setup's cmd, as the module formats it with Python's %:
// a string, "" for null (mkfs, not a command). A list or any other kind
// is an error, as cloud-init's % raises on it; so is an empty string,
// which cloud-init reads as no cmd (earlyinit's reading, kept).
type MkfsCmd string

// DecodeCC reads a string.
func (c *MkfsCmd) DecodeCC(v any, path string) error {
	switch t := v.(type) {
	case nil:
		*c = ""
	case string:
		if t == "" {
			return fmt.Errorf("%s: want a command, got an empty string", path)
		}
		*c = MkfsCmd(t)
	default:
		return wrongType(path, "a string", v)
	}
	return nil
}

// MkfsOpts is fs_setup's extra_opts: a list of strings, each one argument
// of mkfs and on one line (nil for null). cloud-init extends mkfs's argv
// with the value, so a lone string would be one argument per character:
// it is refused.
type MkfsOpts []string

// DecodeCC reads a list of strings.
func (o *MkfsOpts) DecodeCC(v any, path string) error {
	if v == nil {
		*o = nil
		return nil
	}
	l, ok := v.([]any)
	if !ok {
		return wrongType(path, "a list", v)
	}
	out := make(MkfsOpts, 0, len(l))
	for i, x := range l {
		s, ok := x.(string)
		if !ok || strings.ContainsAny(s, "\n\x00") {
			return fmt.Errorf("%s.%d: want a string without line breaks", path, i)
		}
		out = append(out, s)
	}
	*o = out
	return nil
}

// DiskLayout is disk_setup's layout: Off (false or null: not
// partitioned), Remove ("remove", in any case: the disk wiped), Whole
// (true: one partition of the whole disk), else Parts.
type DiskLayout struct {
	Off, Remove, Whole bool
	Parts              []LayoutPart
}

// LayoutPart is a partition of a layout: its share of the disk in
// percent, and its type code ("" for the default).
type LayoutPart struct {
	Percent float64
	Type    string
}

// DecodeCC reads true, false, null, "remove", or a non-empty list of
// partitions: a percentage (a number, or a string of one), or [percentage,
// type], the type a hexadecimal code (str() of the value).
func (l *DiskLayout) DecodeCC(v any, path string) error {
	*l = DiskLayout{}
	switch t := v.(type) {
	case nil:
		l.Off = true
		return nil
	case bool:
		l.Off, l.Whole = !t, t
		return nil
	case string:
		if strings.ToLower(t) == "remove" {
			l.Remove = true
			return nil
		}
	case []any:
		if len(t) == 0 {
			return fmt.Errorf("%s: empty", path)
		}
		for i, p := range t {
			part, err := layoutPart(p, path+"."+strconv.Itoa(i))
			if err != nil {
				return err
			}
			l.Parts = append(l.Parts, part)
		}
		return nil
	}
	return fmt.Errorf("%s: want true, a list of partitions or remove, got %v", path, v)
}

// layoutPart reads a partition of a layout.
func layoutPart(p any, path string) (LayoutPart, error) {
	var part LayoutPart
	pct := p
	if pair, ok := p.([]any); ok {
		if len(pair) != 2 {
			return part, fmt.Errorf("%s: want percent or [percent, type]", path)
		}
		pct, part.Type = pair[0], String(pair[1])
		if part.Type == "" || len(part.Type) > 36 || strings.Trim(part.Type, "0123456789abcdefABCDEF-") != "" {
			return part, fmt.Errorf("%s: partition type %q: want a hexadecimal code", path, part.Type)
		}
	}
	f, err := strconv.ParseFloat(String(pct), 64)
	if err != nil || f <= 0 || f > 100 {
		return part, fmt.Errorf("%s: size %v: want a percentage", path, pct)
	}
	part.Percent = f
	return part, nil
}

// DecodeCC reads swap as the struct's fields do, but for a null filename,
// which is an error, not the default /swap.img: cloud-init's
// swapcfg.get("filename", ...) is then None, and it makes no swap file.
func (s *Swap) DecodeCC(v any, path string) error {
	type plain Swap
	if err := DecodeValue(v, path, (*plain)(s)); err != nil {
		return err
	}
	if f, ok := v.(map[string]any)["filename"]; ok && f == nil {
		return wrongType(path+".filename", "a string", nil)
	}
	return nil
}

// MountFields is a mounts entry's fields, or mount_default_fields: each
// str() of its value, as cc_mounts makes every field, or nil for null (a
// field the defaults give, a mount point that drops the entry). The
// value of a map or a list is its text, as any other.
type MountFields []*string

// DecodeCC reads a list of fields.
func (f *MountFields) DecodeCC(v any, path string) error {
	l, ok := v.([]any)
	if !ok {
		return wrongType(path, "a list", v)
	}
	out := make(MountFields, len(l))
	for i, x := range l {
		if x != nil {
			s := String(x)
			out[i] = &s
		}
	}
	*f = out
	return nil
}

// MountEntry is one of mounts: its fields, or, for an entry that is not
// a list, NotList, its kind ("null", "a string"): the module skips it, as
// cloud-init does.
type MountEntry struct {
	Fields  MountFields
	NotList string
}

// Schema: a list of fields (Config's Shape says of what).
func (MountEntry) Schema() *Schema { return Of(reflect.TypeFor[MountFields]()) }

// DecodeCC reads a list of fields, or keeps the kind of anything else.
func (m *MountEntry) DecodeCC(v any, path string) error {
	*m = MountEntry{}
	if _, ok := v.([]any); !ok {
		m.NotList = scalar.YAMLNoun(v)
		return nil
	}
	return m.Fields.DecodeCC(v, path)
}
