package ccfg

import (
	"reflect"
	"strings"
	"testing"
)

// The key types as they were declared before the reading types of
// read_disks.go: the schema must not have changed.
type oldDiskSetup struct {
	TableType string `yaml:"table_type" cc:"enum=mbr|gpt"`
	Layout    any    `yaml:"layout"`
	Overwrite bool   `yaml:"overwrite"`
}

func (oldDiskSetup) Shape(s *Schema) { DiskSetup{}.Shape(s) }

type oldFSSetup struct {
	Label      string `yaml:"label"`
	Filesystem string `yaml:"filesystem"`
	Device     string `yaml:"device"`
	ReplaceFS  string `yaml:"replace_fs"`
	Partition  any    `yaml:"partition"`
	Overwrite  bool   `yaml:"overwrite"`
	ExtraOpts  any    `yaml:"extra_opts"`
	Cmd        any    `yaml:"cmd"`
}

func (oldFSSetup) Shape(s *Schema) { FSSetup{}.Shape(s) }

type oldSwap struct {
	Filename string `yaml:"filename"`
	Size     any    `yaml:"size"`
	MaxSize  any    `yaml:"maxsize"`
}

func (oldSwap) Shape(s *Schema) { Swap{}.Shape(s) }

type oldDiskKeys struct {
	DeviceAliases      map[string]string       `yaml:"device_aliases"`
	DiskSetup          map[string]oldDiskSetup `yaml:"disk_setup"`
	FSSetup            []oldFSSetup            `yaml:"fs_setup"`
	Mounts             [][]any                 `yaml:"mounts" cc:"min=1"`
	MountDefaultFields []any                   `yaml:"mount_default_fields" cc:"min=6,max=6"`
	Swap               *oldSwap                `yaml:"swap"`
}

// TestDiskReadingSchemas: the disk keys' schemas are those of the plain
// types they had (Config's Shape applied to mounts' fields alike).
func TestDiskReadingSchemas(t *testing.T) {
	old := Of(reflect.TypeFor[oldDiskKeys]()).Props
	field := &Schema{Alts: map[string]*Schema{"string": nil, "null": nil}}
	old["mounts"].Items.Items, old["mounts"].Items.MinItems, old["mounts"].Items.MaxItems = field, 1, 6
	old["mount_default_fields"].Items = field
	now := Schemas()
	for k, want := range old {
		if !reflect.DeepEqual(now[k], want) {
			t.Errorf("%s: schema %+v, was %+v", k, now[k], want)
		}
	}
}

func TestDeviceAliases(t *testing.T) {
	var d DeviceAliases
	in := map[string]any{"s": "/dev/vdb", "n": 5, "b": true, "z": nil, "m": map[string]any{}, "l": []any{"x"}}
	if err := DecodeValue(in, "device_aliases", &d); err != nil {
		t.Fatal(err)
	}
	want := DeviceAliases{
		"s": {Device: "/dev/vdb", Kind: "a string"},
		"n": {Device: "5", Kind: "a number"},
		"b": {Device: "True", Kind: "a boolean"},
		"z": {Kind: "null"},
		"m": {Kind: "a map", Collection: true},
		"l": {Kind: "a list", Collection: true},
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("got %+v\nwant %+v", d, want)
	}
	if err := DecodeValue([]any{}, "device_aliases", &d); err == nil || err.Error() != "device_aliases: want a map, got a list" {
		t.Errorf("a list: %v", err)
	}
}

// TestDiskSetups: each entry is read on its own; one that is not a map
// (null included) is its Err; table_type takes any value (the module
// refuses one that is not mbr or gpt when it partitions).
func TestDiskSetups(t *testing.T) {
	var d DiskSetups
	in := map[string]any{
		"a": map[string]any{"table_type": "GPT", "layout": true, "overwrite": "yes"},
		"b": nil,
		"c": []any{},
		"d": map[string]any{"table_type": []any{1}},
		"e": map[string]any{},
	}
	if err := DecodeValue(in, "disk_setup", &d); err != nil {
		t.Fatal(err)
	}
	if a := d["a"]; a.Err() != nil || a.TableType == nil || *a.TableType != "gpt" || a.Layout != true || !a.Overwrite {
		t.Errorf("a: %+v", a)
	}
	for k, want := range map[string]string{"b": "disk_setup.b: want a map, got null", "c": "disk_setup.c: want a map, got a list"} {
		if err := d[k].Err(); err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", k, err, want)
		}
	}
	if x := d["d"]; x.Err() != nil || x.TableType == nil || *x.TableType != "[1]" {
		t.Errorf("d: %+v", x)
	}
	if x := d["e"]; x.Err() != nil || x.TableType != nil {
		t.Errorf("e: %+v", x)
	}
	if err := DecodeValue("x", "disk_setup", &d); err == nil || err.Error() != "disk_setup: want a map, got a string" {
		t.Errorf("a string: %v", err)
	}
}

// TestFSSetups: an entry that cannot be read is its Err, the others
// are read; partition is "any" when not given; replace_fs false or a
// map is none.
func TestFSSetups(t *testing.T) {
	var l []FSSetup
	in := []any{
		map[string]any{"device": "/dev/vdb", "filesystem": "ext4", "label": 1, "replace_fs": false, "cmd": []any{"x"}},
		nil,
		"x",
		map[string]any{"device": []any{}},
		map[string]any{"partition": "Auto", "replace_fs": "ext3", "overwrite": "on"},
		map[string]any{"partition": 2, "replace_fs": map[string]any{}},
	}
	if err := DecodeValue(in, "fs_setup", &l); err != nil {
		t.Fatal(err)
	}
	if f := l[0]; f.Err() != nil || f.Label != "1" || f.Partition != "any" || f.ReplaceFS != "" || f.Cmd == nil {
		t.Errorf("0: %+v", f)
	}
	for i, want := range map[int]string{1: "fs_setup.1: want a map, got null", 2: "fs_setup.2: want a map, got a string", 3: "fs_setup.3.device: want a string, got a list"} {
		if err := l[i].Err(); err == nil || err.Error() != want {
			t.Errorf("%d: %v, want %q", i, err, want)
		}
	}
	if f := l[4]; f.Err() != nil || f.Partition != "Auto" || f.ReplaceFS != "ext3" || !f.Overwrite {
		t.Errorf("4: %+v", f)
	}
	if f := l[5]; f.Err() != nil || f.Partition != "2" || f.ReplaceFS != "" {
		t.Errorf("5: %+v", f)
	}
	if err := DecodeValue(map[string]any{}, "fs_setup", &l); err == nil || err.Error() != "fs_setup: want a list, got a map" {
		t.Errorf("a map: %v", err)
	}
}

func TestMkfsCmdAndOpts(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want MkfsCmd
		err  string
	}{
		{nil, "", ""},
		{"mkfs %(device)s", "mkfs %(device)s", ""},
		{"", "", "cmd: want a command, got an empty string"},
		{[]any{"mkfs"}, "", "cmd: want a string, got a list"},
		{5, "", "cmd: want a string, got a number"},
	} {
		var c MkfsCmd
		err := DecodeValue(tt.in, "cmd", &c)
		if tt.err != "" && (err == nil || err.Error() != tt.err) || tt.err == "" && (err != nil || c != tt.want) {
			t.Errorf("cmd %#v: %q %v, want %q %q", tt.in, c, err, tt.want, tt.err)
		}
	}
	for _, tt := range []struct {
		in   any
		want MkfsOpts
		err  string
	}{
		{nil, nil, ""},
		{[]any{"-m", " 0 "}, MkfsOpts{"-m", " 0 "}, ""},
		{"-F", nil, "extra_opts: want a list, got a string"},
		{[]any{"-m", 0}, nil, "extra_opts.1: want a string without line breaks"},
		{[]any{"a\nb"}, nil, "extra_opts.0: want a string without line breaks"},
	} {
		var o MkfsOpts
		err := DecodeValue(tt.in, "extra_opts", &o)
		if tt.err != "" && (err == nil || err.Error() != tt.err) || tt.err == "" && (err != nil || !reflect.DeepEqual(o, tt.want)) {
			t.Errorf("extra_opts %#v: %q %v, want %q %q", tt.in, o, err, tt.want, tt.err)
		}
	}
}

func TestDiskLayout(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want DiskLayout
		err  string
	}{
		{nil, DiskLayout{Off: true}, ""},
		{false, DiskLayout{Off: true}, ""},
		{true, DiskLayout{Whole: true}, ""},
		{"Remove", DiskLayout{Remove: true}, ""},
		{[]any{33, []any{"66", 82}, "1.5"}, DiskLayout{Parts: []LayoutPart{{33, ""}, {66, "82"}, {1.5, ""}}}, ""},
		{[]any{}, DiskLayout{}, "layout: empty"},
		{"wipe", DiskLayout{}, "layout: want true, a list of partitions or remove, got wipe"},
		{0, DiskLayout{}, "layout: want true, a list of partitions or remove, got 0"},
		{[]any{50, []any{50}}, DiskLayout{}, "layout.1: want percent or [percent, type]"},
		{[]any{[]any{50, "82;x"}}, DiskLayout{}, `layout.0: partition type "82;x": want a hexadecimal code`},
		{[]any{0}, DiskLayout{}, "layout.0: size 0: want a percentage"},
		{[]any{"101"}, DiskLayout{}, "layout.0: size 101: want a percentage"},
	} {
		var l DiskLayout
		err := DecodeValue(tt.in, "layout", &l)
		if tt.err != "" && (err == nil || err.Error() != tt.err) || tt.err == "" && (err != nil || !reflect.DeepEqual(l, tt.want)) {
			t.Errorf("layout %#v: %+v %v, want %+v %q", tt.in, l, err, tt.want, tt.err)
		}
	}
}

// TestSwapNullFilename: a null filename is an error (cloud-init makes no
// swap file with it), not the default /swap.img; any other filename is a
// string.
func TestSwapNullFilename(t *testing.T) {
	s, ok, err := Decode[*Swap](map[string]any{"swap": map[string]any{"filename": nil, "size": "1M"}}, "swap")
	if !ok || err == nil || err.Error() != "swap.filename: want a string, got null" {
		t.Errorf("null: %+v %v %v", s, ok, err)
	}
	s, _, err = Decode[*Swap](map[string]any{"swap": map[string]any{"filename": 1}}, "swap")
	if err == nil || err.Error() != "swap.filename: want a string, got a number" {
		t.Errorf("a number: %+v %v", s, err)
	}
	s, _, err = Decode[*Swap](map[string]any{"swap": map[string]any{"size": "auto"}}, "swap")
	if err != nil || s.Filename != nil || s.Size != "auto" {
		t.Errorf("no filename: %+v %v", s, err)
	}
}

// TestMounts: an entry that is not a list is kept as its kind (skipped
// by the module); fields are str() of their values, null kept.
func TestMounts(t *testing.T) {
	m, _, err := Decode[[]MountEntry](map[string]any{"mounts": []any{
		[]any{"vdb", nil, 0, true}, "vdc", nil, []any{},
	}}, "mounts")
	if err != nil {
		t.Fatal(err)
	}
	str := func(e MountEntry) string {
		var b []string
		for _, f := range e.Fields {
			if f == nil {
				b = append(b, "<nil>")
			} else {
				b = append(b, *f)
			}
		}
		return strings.Join(b, ",") + "|" + e.NotList
	}
	for i, want := range []string{"vdb,<nil>,0,True|", "|a string", "|null", "|"} {
		if got := str(m[i]); got != want {
			t.Errorf("%d: %q, want %q", i, got, want)
		}
	}
	if _, _, err := Decode[[]MountEntry](map[string]any{"mounts": "x"}, "mounts"); err == nil || err.Error() != "mounts: want a list, got a string" {
		t.Errorf("a string: %v", err)
	}
	if _, _, err := Decode[MountFields](map[string]any{"mount_default_fields": map[string]any{}}, "mount_default_fields"); err == nil || err.Error() != "mount_default_fields: want a list, got a map" {
		t.Errorf("a map: %v", err)
	}
}
