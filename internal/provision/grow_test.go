package provision

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/growpart"
	"github.com/earlyinit/earlyinit/internal/looptest"
	"github.com/earlyinit/earlyinit/internal/settings"
	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"
)

// TestParseGrowConfig: cloud-init 22.4's keys and defaults; bad values
// are one warning naming the key and the type, and the default.
func TestParseGrowConfig(t *testing.T) {
	def := growpart.Config{Grow: true, Devices: []string{"/"}, Resize: true}
	with := func(f func(g *growpart.Config)) growpart.Config { g := def; f(&g); return g }
	for _, tt := range []struct {
		yaml     string
		want     growpart.Config // warnings and notes not compared
		warnings []string        // each a part of one warning, in order
	}{
		{yaml: ``, want: def},
		{yaml: `growpart: {mode: auto, devices: ["/"], ignore_growroot_disabled: false}`, want: def},
		{yaml: `growpart: {mode: growpart}`, want: def},
		{yaml: `growpart: {}`, want: def},
		{yaml: `growpart: {mode: "off"}`, want: with(func(g *growpart.Config) { g.Grow = false })},
		// PyYAML reads an unquoted off as false, and cloud-init warns.
		{yaml: `growpart: {mode: false}`, want: with(func(g *growpart.Config) { g.Grow = false }),
			warnings: []string{"growpart.mode: false is deprecated, use off"}},
		{yaml: `growpart: {mode: "false"}`, want: with(func(g *growpart.Config) { g.Grow = false }),
			warnings: []string{"growpart.mode: false is deprecated"}},
		{yaml: `growpart: {mode: 0}`, want: with(func(g *growpart.Config) { g.Grow = false }),
			warnings: []string{"growpart.mode: 0 is deprecated"}},
		{yaml: `growpart: {mode: gpart}`, want: def, warnings: []string{"growpart.mode: gpart is FreeBSD's resizer: not supported; auto is used"}},
		{yaml: `growpart: {mode: sometimes}`, want: def, warnings: []string{"growpart.mode: want auto, growpart or off, got a string; auto is used"}},
		{yaml: `growpart: {mode: true}`, want: def, warnings: []string{"growpart.mode: want auto, growpart or off, got a boolean"}},
		{yaml: `growpart: {mode: [auto]}`, want: def, warnings: []string{"growpart.mode: want auto, growpart or off, got a list"}},
		{yaml: `growpart: {ignore_growroot_disabled: true}`, want: with(func(g *growpart.Config) { g.IgnoreDisabled = true })},
		{yaml: `growpart: {ignore_growroot_disabled: "yes"}`, want: with(func(g *growpart.Config) { g.IgnoreDisabled = true })},
		{yaml: `growpart: {ignore_growroot_disabled: maybe}`, want: def,
			warnings: []string{"growpart.ignore_growroot_disabled: want a boolean, got a string; false is used"}},
		{yaml: `growpart: {devices: ["/", "/var"]}`, want: with(func(g *growpart.Config) { g.Devices = []string{"/", "/var"} })},
		{yaml: `growpart: {devices: /srv}`, want: with(func(g *growpart.Config) { g.Devices = []string{"/srv"} })},
		{yaml: `growpart: {devices: ["/", 3, {a: b}]}`, want: def,
			warnings: []string{"growpart.devices[1]: want a string, got a number; skipped", "growpart.devices[2]: want a string, got a map; skipped"}},
		{yaml: `growpart: {devices: []}`, want: with(func(g *growpart.Config) { g.Grow, g.Devices = false, nil })},
		{yaml: `growpart: {devices: null}`, want: with(func(g *growpart.Config) { g.Grow, g.Devices = false, nil })},
		{yaml: `growpart: {devices: 5}`, want: def, warnings: []string{"growpart.devices: want a list of mount points, got a number; [/] is used"}},
		{yaml: `growpart: {mode: false, devices: []}`, want: with(func(g *growpart.Config) { g.Grow, g.Devices = false, nil }),
			warnings: []string{"deprecated"}},
		// growpart itself: a "no" stays a no; anything else not a map
		// is the defaults.
		{yaml: `growpart: false`, want: with(func(g *growpart.Config) { g.Grow = false }),
			warnings: []string{"growpart: want a map, got a boolean: read as {mode: off}"}},
		{yaml: `growpart: "off"`, want: with(func(g *growpart.Config) { g.Grow = false }), warnings: []string{"growpart: want a map, got a string"}},
		{yaml: `growpart: [/]`, want: def, warnings: []string{"growpart: want a map, got a list: the defaults are used"}},
		{yaml: `growpart: null`, want: def, warnings: []string{"growpart: want a map, got null"}},
		{yaml: `growpart: true`, want: def, warnings: []string{"growpart: want a map, got a boolean: the defaults"}},

		// resize_rootfs
		{yaml: `resize_rootfs: false`, want: with(func(g *growpart.Config) { g.Resize = false })},
		{yaml: `resize_rootfs: "off"`, want: with(func(g *growpart.Config) { g.Resize = false })},
		{yaml: `resize_rootfs: 0`, want: with(func(g *growpart.Config) { g.Resize = false })},
		{yaml: `resize_rootfs: true`, want: def},
		{yaml: `resize_rootfs: noblock`, want: def},
		{yaml: `resize_rootfs: "1"`, want: def},
		{yaml: `resize_rootfs: later`, want: def, warnings: []string{"resize_rootfs: want true, false or noblock, got a string; true is used"}},
		{yaml: `resize_rootfs: {a: 1}`, want: def, warnings: []string{"resize_rootfs: want true, false or noblock, got a map"}},
		{yaml: `resize_rootfs: null`, want: def, warnings: []string{"resize_rootfs: want true, false or noblock, got null"}},
		{yaml: `{growpart: {mode: no}, resize_rootfs: false}`, want: with(func(g *growpart.Config) { g.Grow, g.Resize = false, false }),
			warnings: []string{"deprecated"}},
	} {
		t.Run(tt.yaml, func(t *testing.T) {
			var cfg map[string]any
			if err := yaml.Unmarshal([]byte(tt.yaml), &cfg); err != nil {
				t.Fatal(err)
			}
			got := growpart.ParseConfig(cfg)
			warnings := got.Warnings
			got.Warnings, got.Notes = nil, nil
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("growpart.ParseConfig = %+v, want %+v", got, tt.want)
			}
			if len(warnings) != len(tt.warnings) {
				t.Fatalf("warnings %q, want %d containing %q", warnings, len(tt.warnings), tt.warnings)
			}
			for i, w := range tt.warnings {
				if !strings.Contains(warnings[i], w) {
					t.Errorf("warning %q, want it to contain %q", warnings[i], w)
				}
			}
		})
	}
	if got := growpart.ParseConfig(nil); !reflect.DeepEqual(got, def) {
		t.Errorf("growpart.ParseConfig(nil) = %+v, want the defaults", got)
	}
}

// TestGrowRootOff: the switches that leave the disk alone do so without
// looking at a device (the root here is not even a mount point).
func TestGrowRootOff(t *testing.T) {
	for _, tt := range []struct {
		name     string
		noGrow   bool
		cfg      string
		disabled string // content of /etc/growroot-disabled, "" for none
		want     []string
	}{
		{name: "earlyinit.growpart=0", noGrow: true, cfg: `growpart: {mode: auto}`,
			want: []string{"growpart: disabled by earlyinit.growpart=0 (resizefs too)"}},
		{name: "mode off, resize_rootfs false", cfg: `{growpart: {mode: "off"}, resize_rootfs: false}`,
			want: []string{"growpart: disabled (growpart.mode is off)", "resizefs: disabled (resize_rootfs is false)"}},
		{name: "growroot-disabled", cfg: `resize_rootfs: false`, disabled: "x",
			want: []string{"growpart: disabled by /etc/growroot-disabled (growpart.ignore_growroot_disabled ignores it)", "resizefs: disabled (resize_rootfs is false)"}},
		{name: "devices left to the late stage", cfg: `{growpart: {devices: [/dev/vdb1, var, /srv]}, resize_rootfs: false}`,
			want: []string{
				"growpart: /dev/vdb1, var, /srv: left to the late stage (growpart module), once mounted",
				"resizefs: disabled (resize_rootfs is false)",
			}},
		{name: "empty device list", cfg: `{growpart: {devices: []}, resize_rootfs: false}`,
			want: []string{"growpart: empty device list", "resizefs: disabled"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.disabled != "" {
				os.MkdirAll(filepath.Join(root, "etc"), 0o755)
				if err := os.WriteFile(filepath.Join(root, growpart.DisabledFile), []byte(tt.disabled), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var cfg map[string]any
			if err := yaml.Unmarshal([]byte(tt.cfg), &cfg); err != nil {
				t.Fatal(err)
			}
			log := &testLog{}
			err := growRoot(Env{Root: root, Log: log, Settings: settings.Settings{NoGrow: tt.noGrow}}, cfg)
			if err != nil {
				t.Fatalf("growRoot: %v\n%s", err, log)
			}
			lines := strings.Split(strings.TrimSpace(log.String()), "\n")
			if len(lines) != len(tt.want) {
				t.Fatalf("log:\n%s\nwant %d lines: %q", log, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.HasPrefix(lines[i], w) {
					t.Errorf("log line %q, want %q", lines[i], w)
				}
			}
		})
	}
}

func TestHasFile(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "etc/dir"), 0o755)
	os.WriteFile(filepath.Join(root, "etc/file"), nil, 0o644)
	os.Symlink("file", filepath.Join(root, "etc/link"))
	os.Symlink("/etc/file", filepath.Join(root, "etc/abslink"))
	os.Symlink("nothing", filepath.Join(root, "etc/dangling"))
	os.Symlink("dir", filepath.Join(root, "etc/dirlink"))
	for name, want := range map[string]bool{
		"/etc/file": true, "/etc/link": true, "/etc/abslink": true,
		"/etc/dangling": false, "/etc/dir": false, "/etc/dirlink": false, "/etc/none": false, "/none/x": false,
	} {
		if got, err := hasFile(root, name); got != want || err != nil {
			t.Errorf("hasFile(%s) = %v, %v; want %v", name, got, err, want)
		}
	}
}

// TestGrowRootLoop runs growRoot on a real root: a GPT image made with a
// 32 MiB partition, its file grown after, attached to a
// loop device, its filesystem mounted (XFS and btrfs need bigger ones). The partition (sysfs) and the
// filesystem (statfs) fill the disk; a second run changes nothing; mode
// off changes nothing.
func TestGrowRootLoop(t *testing.T) {
	looptest.Require(t)
	for _, tt := range []struct {
		fstype            string
		image, part, disk int64 // bytes
	}{
		{"ext4", 64 << 20, 32 << 20, 128 << 20},
		{"xfs", 512 << 20, 320 << 20, 1 << 30},
		{"btrfs", 192 << 20, 128 << 20, 320 << 20}, // mkfs.btrfs wants 114 MiB
	} {
		t.Run(tt.fstype, func(t *testing.T) {
			file := looptest.Image(t, tt.image)
			looptest.RunIn(t, "label: gpt\nstart=2048, size="+itoa(tt.part/512)+", type=L\n", "sfdisk", "-q", file)
			looptest.Resize(t, file, tt.disk)
			loop := looptest.Attach(t, file, 512)
			part := loop + "p1"
			looptest.WaitBlock(t, part)
			looptest.Mkfs(t, tt.fstype, part)
			root := looptest.Mount(t, part, tt.fstype)
			fsBefore := looptest.Statfs(t, root)
			env := func(log *testLog) Env { return Env{Root: root, Log: log} }

			// growpart: {mode: off}, resize_rootfs: false: nothing.
			log := &testLog{}
			cfg := map[string]any{"growpart": map[string]any{"mode": "off"}, "resize_rootfs": false}
			if err := growRoot(env(log), cfg); err != nil {
				t.Fatalf("growRoot with mode off: %v\n%s", err, log)
			}
			if got := looptest.SysSize(t, part); got != tt.part {
				t.Fatalf("mode off: the partition is %d bytes, want %d", got, tt.part)
			}

			log = &testLog{}
			err := growRoot(env(log), nil)
			wantPart := (tt.disk/512 - 34 - 2048 + 1) * 512 // to the last usable LBA, N-34
			wantLine := "growpart: " + part + " grown from " + itoa(tt.part/512) + " to " + itoa(wantPart/512) + " sectors (GPT backup header moved)"
			if !strings.Contains(log.String(), wantLine) {
				t.Errorf("log:\n%s\nwant %q", log, wantLine)
			}
			if got := looptest.SysSize(t, part); got != wantPart {
				t.Fatalf("the partition is %d bytes, want %d\n%s", got, wantPart, log)
			}
			if tt.fstype == "ext4" && !looptest.HasCap(t, unix.CAP_SYS_RESOURCE) {
				if err == nil || !strings.Contains(err.Error(), "CAP_SYS_RESOURCE") {
					t.Fatalf("growRoot without CAP_SYS_RESOURCE: %v; want the resize refused", err)
				}
				t.Logf("no CAP_SYS_RESOURCE: ext4 online resize refused (%v); the filesystem is not checked", err)
				return
			}
			if err != nil {
				t.Fatalf("growRoot: %v\n%s", err, log)
			}
			if !strings.Contains(log.String(), "resizefs: / ("+tt.fstype+") grown from ") {
				t.Errorf("log:\n%s\nwant a resizefs line", log)
			}
			fsAfter := looptest.Statfs(t, root)
			if fsAfter-fsBefore < (wantPart-tt.part)*3/4 {
				t.Fatalf("statfs: %d bytes before, %d after; want about %d more\n%s", fsBefore, fsAfter, wantPart-tt.part, log)
			}

			// Again: nothing to grow, the table's sectors untouched.
			table := readTable(t, file)
			log = &testLog{}
			if err := growRoot(env(log), nil); err != nil {
				t.Fatalf("second growRoot: %v\n%s", err, log)
			}
			for _, want := range []string{"growpart: " + part + ": nothing to grow: it cannot be grown", "resizefs: / (" + tt.fstype + "): nothing to grow"} {
				if !strings.Contains(log.String(), want) {
					t.Errorf("second run log:\n%s\nwant %q", log, want)
				}
			}
			if strings.Contains(log.String(), "E ") {
				t.Errorf("second run logged errors:\n%s", log)
			}
			if looptest.SysSize(t, part) != wantPart || looptest.Statfs(t, root) != fsAfter || readTable(t, file) != table {
				t.Fatalf("the second run changed something")
			}
		})
	}
}

// readTable is an image's GPT: the first and last 34 sectors.
func readTable(t *testing.T, file string) string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	b := make([]byte, 2*34*512)
	if _, err := f.ReadAt(b[:34*512], 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(b[34*512:], fi.Size()-34*512); err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
