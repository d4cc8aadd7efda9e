package disks

import (
	"fmt"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// fakeDisks is the block devices the fake lsblk, blkid and blockdev see.
type fakeDisks struct {
	lsblk map[string]string // device -> lsblk --pairs output
	probe map[string]string // device -> blkid -o export output ("" exits 2)
	label map[string]string // LABEL=x or TYPE=x -> device
}

func (fd fakeDisks) install(te *coretest.Env) {
	te.Fake.Handlers["lsblk"] = func(c core.Cmd) ([]byte, error) {
		return []byte(fd.lsblk[c.Args[3]]), nil
	}
	te.Fake.Handlers["blkid"] = func(c core.Cmd) ([]byte, error) {
		last := c.Args[len(c.Args)-1]
		if c.Args[len(c.Args)-2] == "-t" {
			if d, ok := fd.label[last]; ok {
				return []byte(d + "\n"), nil
			}
			return nil, coretest.ExitErr(2)
		}
		if out := fd.probe[last]; out != "" {
			return []byte(out), nil
		}
		return nil, coretest.ExitErr(2)
	}
	te.Fake.Handlers["blockdev"] = func(c core.Cmd) ([]byte, error) {
		switch c.Args[0] {
		case "--getsize64":
			return []byte("10737418240\n"), nil
		case "--getss":
			return []byte("512\n"), nil
		}
		return nil, nil
	}
}

// mbrOracle is cc_disk_setup.get_partition_mbr_layout for [size, layout].
const mbrOracle = `
from cloudinit.config import cc_disk_setup
json.dump([cc_disk_setup.get_partition_mbr_layout(s, l) + "\n" for s, l in json.load(sys.stdin)], sys.stdout)
`

func TestDiskSetupMBRScriptMatchesCloudInit(t *testing.T) {
	cases := [][2]any{
		{20971520, []any{33, []any{66, 82}}},
		{20971520, []any{100}},
		{20971520, []any{25, 25, 25, []any{25, 83}}},
		{1000, []any{10, []any{20, 82}, 70}},
	}
	var want []string
	coretest.CloudinitOracle(t, mbrOracle, cases, &want)
	for i, c := range cases {
		var layout ccfg.DiskLayout
		if err := ccfg.DecodeValue(c[1], "layout", &layout); err != nil {
			t.Fatal(err)
		}
		parts, err := diskLayout(layout, "mbr")
		if err != nil {
			t.Fatal(err)
		}
		te := coretest.DistroEnv(t, "debian", "")
		if err := writePartitions(t.Context(), te.Env, "/dev/vdb", "mbr", parts, int64(c[0].(int))); err != nil {
			t.Fatal(err)
		}
		if got := string(te.Fake.Calls[0].Stdin); got != want[i] {
			t.Errorf("%v: got %q, want %q", c, got, want[i])
		}
	}
}

const blankVDB = `NAME="vdb" TYPE="disk" FSTYPE="" LABEL="" PARTTYPE=""` + "\n"

func TestDiskSetup(t *testing.T) {
	settle := "udevadm settle"
	reread := []string{settle, "blockdev --rereadpt /dev/vdb", settle}
	for _, tt := range []struct {
		name, cfg string
		disks     fakeDisks
		tools     []string
		calls     []string
		stdin     string // of the sfdisk call
		wantLog   string
	}{
		{
			name:  "blank disk, mbr layout",
			cfg:   "disk_setup:\n  /dev/vdb:\n    table_type: mbr\n    layout: [50, [50, 82]]\n",
			disks: fakeDisks{lsblk: map[string]string{"/dev/vdb": blankVDB}},
			calls: append([]string{"lsblk --pairs --output NAME,TYPE,FSTYPE,LABEL,PARTTYPE /dev/vdb", "blkid -c /dev/null -p -o export /dev/vdb",
				"blockdev --getsize64 /dev/vdb", "blockdev --getss /dev/vdb", "sfdisk --Linux --unit=S --force /dev/vdb"}, reread...),
			stdin: ",10485760,83\n,,82\n",
		},
		{
			name:    "used disk without overwrite: left alone",
			cfg:     "disk_setup:\n  /dev/vdb:\n    layout: [50, 50]\n",
			disks:   fakeDisks{lsblk: map[string]string{"/dev/vdb": blankVDB + `NAME="vdb1" TYPE="part" FSTYPE="ext4" LABEL="data" PARTTYPE="0x83"` + "\n"}, probe: map[string]string{"/dev/vdb": "PTTYPE=dos\n"}},
			calls:   []string{"lsblk --pairs --output NAME,TYPE,FSTYPE,LABEL,PARTTYPE /dev/vdb", "blkid -c /dev/null -p -o export /dev/vdb"},
			wantLog: "overwrite is not true: left alone",
		},
		{
			name:    "empty partition table without overwrite: left alone",
			cfg:     "disk_setup:\n  /dev/vdb:\n    layout: true\n",
			disks:   fakeDisks{lsblk: map[string]string{"/dev/vdb": blankVDB}, probe: map[string]string{"/dev/vdb": "PTTYPE=gpt\n"}},
			calls:   []string{"lsblk --pairs --output NAME,TYPE,FSTYPE,LABEL,PARTTYPE /dev/vdb", "blkid -c /dev/null -p -o export /dev/vdb"},
			wantLog: "left alone",
		},
		{
			name:    "layout already there, overwrite: nothing",
			cfg:     "disk_setup:\n  /dev/vdb:\n    layout: [[100, 82]]\n    overwrite: true\n",
			disks:   fakeDisks{lsblk: map[string]string{"/dev/vdb": blankVDB + `NAME="vdb1" TYPE="part" FSTYPE="swap" LABEL="" PARTTYPE="0x82"` + "\n"}, probe: map[string]string{"/dev/vdb": "PTTYPE=dos\n"}},
			calls:   []string{"lsblk --pairs --output NAME,TYPE,FSTYPE,LABEL,PARTTYPE /dev/vdb", "blkid -c /dev/null -p -o export /dev/vdb"},
			wantLog: "already partitioned",
		},
		{
			name:  "overwrite a different layout: wiped first",
			cfg:   "disk_setup:\n  /dev/vdb:\n    layout: [[100, 83]]\n    overwrite: true\n",
			disks: fakeDisks{lsblk: map[string]string{"/dev/vdb": blankVDB + `NAME="vdb1" TYPE="part" FSTYPE="swap" LABEL="" PARTTYPE="0x82"` + "\n"}, probe: map[string]string{"/dev/vdb": "PTTYPE=dos\n"}},
			calls: append(append([]string{"lsblk --pairs --output NAME,TYPE,FSTYPE,LABEL,PARTTYPE /dev/vdb", "blkid -c /dev/null -p -o export /dev/vdb",
				"blockdev --getsize64 /dev/vdb", "blockdev --getss /dev/vdb", "wipefs --all /dev/vdb1", "wipefs --all --force /dev/vdb"}, reread...), append([]string{"sfdisk --Linux --unit=S --force /dev/vdb"}, reread...)...),
			stdin: ",,83\n",
		},
		{
			name:  "gpt with sgdisk, alias",
			cfg:   "device_aliases:\n  data: /dev/vdb\ndisk_setup:\n  data:\n    table_type: gpt\n    layout: [25, [75, 82]]\n",
			disks: fakeDisks{lsblk: map[string]string{"/dev/vdb": blankVDB}},
			tools: []string{"/usr/sbin/sgdisk", "/usr/sbin/partprobe"},
			calls: []string{"lsblk --pairs --output NAME,TYPE,FSTYPE,LABEL,PARTTYPE /dev/vdb", "blkid -c /dev/null -p -o export /dev/vdb",
				"blockdev --getsize64 /dev/vdb", "blockdev --getss /dev/vdb", "sgdisk -Z /dev/vdb", "sgdisk -n 1:0:+5242880 /dev/vdb",
				"sgdisk -n 2:0:0 /dev/vdb", "sgdisk -t 2:8200 /dev/vdb", settle, "partprobe /dev/vdb", settle},
		},
		{
			name:  "fs on partition 1 of ephemeral0 (found by label)",
			cfg:   "fs_setup:\n  - label: data\n    filesystem: ext4\n    device: ephemeral0.1\n",
			disks: fakeDisks{label: map[string]string{"LABEL=ephemeral0": "/dev/vdb"}},
			tools: []string{"/usr/sbin/mkfs.ext4", "/dev/vdb1"},
			calls: []string{"blkid -c /dev/null -l -o device -t LABEL=ephemeral0", "lsblk --pairs --output NAME,TYPE,FSTYPE,LABEL,PARTTYPE /dev/vdb1 --nodeps",
				"blkid -c /dev/null -p -o export /dev/vdb1", "mkfs.ext4 -L data /dev/vdb1"},
		},
		{
			name:    "fs on a partition with another file system: left alone",
			cfg:     "fs_setup:\n  - label: data\n    filesystem: ext4\n    device: /dev/vdb\n    partition: 1\n",
			disks:   fakeDisks{probe: map[string]string{"/dev/vdb1": "TYPE=xfs\nLABEL=old\n"}},
			tools:   []string{"/usr/sbin/mkfs.ext4", "/dev/vdb1"},
			calls:   []string{"lsblk --pairs --output NAME,TYPE,FSTYPE,LABEL,PARTTYPE /dev/vdb1 --nodeps", "blkid -c /dev/null -p -o export /dev/vdb1"},
			wantLog: "left alone",
		},
		{
			name:    "fs already there",
			cfg:     "fs_setup:\n  - label: data\n    filesystem: ext4\n    device: /dev/vdb\n    partition: 1\n    overwrite: false\n",
			disks:   fakeDisks{probe: map[string]string{"/dev/vdb1": "TYPE=ext4\nLABEL=data\n"}},
			tools:   []string{"/usr/sbin/mkfs.ext4", "/dev/vdb1"},
			calls:   []string{"lsblk --pairs --output NAME,TYPE,FSTYPE,LABEL,PARTTYPE /dev/vdb1 --nodeps", "blkid -c /dev/null -p -o export /dev/vdb1"},
			wantLog: "already has",
		},
		{
			name:  "overwrite an fs with extra_opts",
			cfg:   "fs_setup:\n  - label: data\n    filesystem: xfs\n    device: /dev/vdb\n    partition: none\n    overwrite: true\n    extra_opts: [-m, reflink=1]\n",
			disks: fakeDisks{probe: map[string]string{"/dev/vdb": "TYPE=ext4\n"}},
			tools: []string{"/sbin/mkfs.xfs"},
			calls: []string{"blkid -c /dev/null -p -o export /dev/vdb", "mkfs.xfs -L data -f -m reflink=1 /dev/vdb"},
		},
		{
			name:  "cmd with substitutions",
			cfg:   "fs_setup:\n  - label: data\n    filesystem: ext4\n    device: /dev/vdb\n    partition: none\n    cmd: mkfs -t %(filesystem)s -L %(label)s %(device)s\n",
			disks: fakeDisks{},
			calls: []string{"lsblk --pairs --output NAME,TYPE,FSTYPE,LABEL,PARTTYPE /dev/vdb --nodeps", "blkid -c /dev/null -p -o export /dev/vdb", "sh -c mkfs -t ext4 -L data /dev/vdb"},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			te := coretest.DistroEnv(t, "debian", tt.cfg, append([]string{"/dev/vdb"}, tt.tools...)...)
			tt.disks.install(te)
			de := withDevices(te) // blank and readable
			for _, d := range []string{"/dev/vdb", "/dev/vdb1", "/dev/vdb2"} {
				de.fixed[d] = 10 << 30
			}
			if err := te.RunFunc(DiskSetup); err != nil {
				t.Fatal(err)
			}
			te.WantCalls(tt.calls...)
			for _, c := range te.Fake.Calls {
				if c.Name == "sfdisk" && string(c.Stdin) != tt.stdin {
					t.Errorf("sfdisk stdin %q, want %q", c.Stdin, tt.stdin)
				}
			}
			if !strings.Contains(te.LogBuf.String(), tt.wantLog) {
				t.Errorf("log lacks %q:\n%s", tt.wantLog, te.LogBuf.String())
			}
		})
	}
}

func TestDiskSetupRejects(t *testing.T) {
	for _, tt := range []struct{ cfg, want string }{
		{"fs_setup:\n  - {label: \"x;reboot\", filesystem: ext4, device: /dev/vdb}\n", "fs_setup.0: label \"x;reboot\""},
		{"fs_setup:\n  - {label: \"-O\", filesystem: ext4, device: /dev/vdb}\n", "fs_setup.0: label"},
		{"fs_setup:\n  - {label: data, filesystem: \"ext4 -E x\", device: /dev/vdb}\n", "fs_setup.0: filesystem"},
		{"fs_setup:\n  - {label: data, filesystem: ext4, device: \"/dev/../etc/passwd\"}\n", "fs_setup.0: device \"/dev/../etc/passwd\""},
		{"fs_setup:\n  - {label: data, filesystem: ext4, device: \"--help\"}\n", "fs_setup.0: device"},
		{"fs_setup:\n  - {label: data, filesystem: ext4, device: \"/dev/vdb\\n\"}\n", "fs_setup.0: device"},
		{"fs_setup:\n  - {label: data, filesystem: ext4, device: /dev/vdb, extra_opts: \"-F\"}\n", "fs_setup.0: extra_opts: want a list"},
		{"fs_setup:\n  - {label: data, device: /dev/vdb}\n", "fs_setup.0: no filesystem nor cmd"},
		{"disk_setup:\n  /dev/vdb: {layout: [50, [50, \"82;x\"]]}\n", "disk_setup./dev/vdb: layout.1: partition type"},
		{"disk_setup:\n  /dev/vdb: {layout: [20, 20, 20, 20, 20]}\n", "more than 4 partitions"},
		{"disk_setup:\n  /dev/vdb: {layout: true, table_type: bsd}\n", "table_type \"bsd\""},
		{"disk_setup:\n  \"vdb;x\": {layout: true}\n", "disk_setup.vdb;x: device"},
	} {
		te := coretest.DistroEnv(t, "debian", tt.cfg, "/dev/vdb", "/usr/sbin/mkfs.ext4")
		fakeDisks{}.install(te)
		err := te.RunFunc(DiskSetup)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err %v, want %q", tt.cfg, err, tt.want)
		}
		for _, c := range te.Fake.Calls {
			switch c.Name {
			case "blkid", "lsblk":
			default:
				t.Errorf("%q: ran %s", tt.cfg, c)
			}
		}
	}
}

func TestDiskSetupRemoveNeedsOverwrite(t *testing.T) {
	for _, ow := range []bool{false, true} {
		te := coretest.DistroEnv(t, "debian", fmt.Sprintf("disk_setup:\n  /dev/vdb: {layout: remove, overwrite: %v}\n", ow), "/dev/vdb")
		fakeDisks{lsblk: map[string]string{"/dev/vdb": blankVDB + `NAME="vdb1" TYPE="part" FSTYPE="ext4" LABEL="" PARTTYPE="0x83"` + "\n"}}.install(te)
		if err := te.RunFunc(DiskSetup); err != nil {
			t.Fatal(err)
		}
		wiped := strings.Contains(strings.Join(te.Calls(), "\n"), "wipefs")
		if wiped != ow {
			t.Errorf("overwrite %v: wiped %v: %q", ow, wiped, te.Calls())
		}
	}
}

func TestGPTTypeGUID(t *testing.T) {
	for _, tt := range []struct{ code, want string }{
		{"83", "0fc63daf-8483-4772-8e79-3d69d8477de4"},
		{"8300", "0fc63daf-8483-4772-8e79-3d69d8477de4"},
		{"82", "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f"},
		{"8200", "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f"},
		{"ef00", "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"},
		{"8e00", "e6d6d379-f507-44c2-a23c-238f2a3df928"},
		{"fd00", "a19d880f-05fc-4d3b-a006-743f0f84911e"},
		{"EF00", ""}, // callers lower-case first
		{"0700", ""},
		{"", ""},
	} {
		if got := gptTypeGUID(tt.code); got != tt.want {
			t.Errorf("gptTypeGUID(%q) = %q, want %q", tt.code, got, tt.want)
		}
	}
}
