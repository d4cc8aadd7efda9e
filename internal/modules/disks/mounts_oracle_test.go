package disks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// sanitizeOracle is cloud-init 22.4's cc_mounts.sanitize_devname on each
// name, in a root of files standing for /dev and /sys (os.path.exists and
// realpath read under it; the datasource maps nothing), device_aliases
// given; null where it returns None (handle then keeps the name as
// written).
const sanitizeOracle = `
import os
from unittest import mock
from cloudinit.config import cc_mounts
req = json.load(sys.stdin)
root, aliases = req["root"], req["aliases"]
real_exists, real_realpath = os.path.exists, os.path.realpath
def exists(p):
    return real_exists(root + p) if p.startswith("/") else False
def realpath(p):
    if not p.startswith("/"):
        return p
    r = real_realpath(root + p)
    return r[len(root):] if r.startswith(root) else r
out = []
with mock.patch.object(cc_mounts.os.path, "exists", exists), mock.patch.object(cc_mounts.os.path, "realpath", realpath):
    for name in req["names"]:
        out.append(cc_mounts.sanitize_devname(name, lambda n: None, logging.getLogger(), aliases=aliases))
json.dump(out, sys.stdout)
`

// TestMountDeviceAsCloudInit: a mounts entry's device becomes what
// cloud-init's sanitize_devname makes of it (a disk with a partition is
// its first partition), but for mountDevice's listed differences.
func TestMountDeviceAsCloudInit(t *testing.T) {
	te := coretest.DistroEnv(t, "debian", "")
	root := te.Root.Dir()
	for _, f := range []string{
		"/dev/vdb", "/dev/vdb1", "/dev/vdb2", "/sys/block/vdb/vdb1/", "/sys/block/vdb/vdb2/",
		"/dev/vdc", "/sys/block/vdc/",
		"/dev/nvme0n1", "/dev/nvme0n1p1", "/sys/block/nvme0n1/nvme0n1p1/",
		"/dev/sdb", "/dev/sdb1", "/sys/block/sdb/sdb1/",
		"/dev/mapper/", "/dev/dm-0", "/sys/block/dm-0/",
		"/dev/disk/by-id/",
	} {
		p := filepath.Join(root, f)
		if f[len(f)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for link, target := range map[string]string{"/dev/disk/by-id/virtio-data": "../../vdb", "/dev/disk/by-id/virtio-data-part1": "../../vdb1", "/dev/mapper/vg-data": "../dm-0"} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	aliases := map[string]string{"data": "/dev/vdb", "scratch": "/dev/vdc"}
	// The names and what earlyinit makes of them where that differs
	// from cloud-init's (its None: the name kept as written), and why.
	differs := map[string]string{
		"nvme0n1":    "/dev/nvme0n1p1", // 22.4's short names are [x][shv]d.. and sr..: nvme0n1 is kept as written
		"sdz":        "/dev/sdz",       // a disk not there (yet): /dev/ all the same, as nofail mounts it when it comes
		"vdb.2":      "/dev/vdb2",      // a dotted short name is its partition
		"/dev/vdc.3": "",               // no such partition: skipped, not written as a name nothing mounts
		"ephemeral0": "",               // no datasource mapping: skipped
	}
	names := []string{
		"/dev/vdb", "/dev/vdc", "/dev/nvme0n1", "sdb", "/dev/sdb", "/dev/sdb1", "/dev/vdb.2",
		"/dev/disk/by-id/virtio-data", "/dev/mapper/vg-data", "data", "scratch", "data.2",
		"LABEL=logs", "UUID=1234", "server:/export", "/dev/sdz", "vdb", "vdc",
	}
	for n := range differs {
		names = append(names, n)
	}
	var want []*string
	coretest.CloudinitOracle(t, sanitizeOracle, map[string]any{"root": root, "aliases": aliases, "names": names}, &want)
	for i, n := range names {
		got, why := mountDevice(context.Background(), te.Env, n, aliases)
		cloudInit := n // None: the name as written
		if want[i] != nil {
			cloudInit = *want[i]
		}
		if d, ok := differs[n]; ok {
			if got != d {
				t.Errorf("%q: got %q (%s), want %q", n, got, why, d)
			}
			if got == cloudInit {
				t.Errorf("%q: now as cloud-init (%q): drop it from the differences", n, got)
			}
			continue
		}
		if got != cloudInit {
			t.Errorf("%q: earlyinit %q (%s), cloud-init %q", n, got, why, cloudInit)
		}
	}
}

// TestMountsPartitionedDisk: a disk that has a partition, named through
// device_aliases, is mounted by its first partition (as cloud-init's
// sanitize_devname makes it), and a partition it lacks skips its entry.
func TestMountsPartitionedDisk(t *testing.T) {
	te := coretest.NewEnv(t, "device_aliases: {data: /dev/sdc}\nmounts:\n  - [data, /data]\n  - [sdc.3, /three]\n")
	te.Write("/dev/sdc", "", 0o644)
	te.Write("/dev/sdc1", "", 0o644)
	if err := te.Root.MkdirAll("/sys/block/sdc/sdc1", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	if err := te.RunFunc(Mounts); err != nil {
		t.Fatal(err)
	}
	te.WantFile("/etc/fstab", "/dev/sdc1\t/data\tauto\tdefaults,nofail,comment=earlyinit\t0\t2\n", 0o644, 0, 0)
	if !strings.Contains(te.LogBuf.String(), "mounts.1: sdc.3 has no partition 3: skipped") {
		t.Errorf("log: %s", te.LogBuf.String())
	}
}
