package disks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/looptest"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"golang.org/x/sys/unix"
)

// TestGrowpartLate: the growpart module grows what growpart.devices
// names besides "/", on loop devices: a mount point (partition and
// filesystem) and a /dev path (partition only, as cloud-init); "/" is
// left to the initramfs; mode off and /etc/growroot-disabled stop it; an
// entry that is not mounted is an error naming it.
func TestGrowpartLate(t *testing.T) {
	looptest.Require(t)
	const mib = 1 << 20
	// A 320 MiB partition (XFS's minimum is 300 MiB) on a 400 MiB
	// image, the volume grown to 512 MiB.
	disk := func(t *testing.T, fstype string) string {
		file := looptest.Image(t, 400*mib)
		looptest.RunIn(t, "label: dos\nstart=2048, size=655360, type=83\n", "sfdisk", "-q", file)
		looptest.Resize(t, file, 512*mib)
		part := looptest.Attach(t, file, 512) + "p1"
		looptest.WaitBlock(t, part)
		looptest.Mkfs(t, fstype, part)
		return part
	}
	grown := int64(1048576-33-2048) * 512

	t.Run("mount point", func(t *testing.T) {
		// XFS: its online grow needs no CAP_SYS_RESOURCE, which some
		// sandboxes deny root (ext4's does).
		part := disk(t, "xfs")
		te := coretest.NewEnv(t, "growpart: {devices: [/, /srv]}\n")
		if err := os.MkdirAll(filepath.Join(te.Dir, "srv"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount(part, filepath.Join(te.Dir, "srv"), "xfs", 0, ""); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Unmount(filepath.Join(te.Dir, "srv"), unix.MNT_DETACH) })
		if err := te.RunFunc(Growpart); err != nil {
			t.Fatalf("growpart: %v\n%s", err, te.LogBuf.String())
		}
		if got := looptest.SysSize(t, part); got != grown {
			t.Errorf("partition %d bytes, want %d", got, grown)
		}
		if fs := looptest.Statfs(t, filepath.Join(te.Dir, "srv")); fs < 400*mib {
			t.Errorf("xfs on /srv is %d bytes: not grown", fs)
		}
		log := te.LogBuf.String()
		for _, want := range []string{"growpart: /srv: " + part + " grown from 655360 to", "resizefs: /srv (xfs) grown from"} {
			if !strings.Contains(log, want) {
				t.Errorf("log lacks %q:\n%s", want, log)
			}
		}
		if strings.Contains(log, "growpart: /:") {
			t.Errorf("the module touched /:\n%s", log)
		}
	})
	t.Run("device path", func(t *testing.T) {
		part := disk(t, "ext4")
		te := coretest.NewEnv(t, "growpart: {devices: [/dev/disk/by-test/data]}\n")
		link := filepath.Join(te.Dir, "dev/disk/by-test/data")
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(part, link); err != nil {
			t.Fatal(err)
		}
		if err := te.RunFunc(Growpart); err != nil {
			t.Fatalf("growpart: %v\n%s", err, te.LogBuf.String())
		}
		if got := looptest.SysSize(t, part); got != grown {
			t.Errorf("partition %d bytes, want %d", got, grown)
		}
		if strings.Contains(te.LogBuf.String(), "resizefs:") {
			t.Errorf("a device entry's filesystem was resized:\n%s", te.LogBuf.String())
		}
	})
	for _, tc := range []struct{ name, cfg, disabled, wantErr, wantLog string }{
		{name: "off", cfg: "growpart: {mode: 'off', devices: [/srv]}\n"},
		{name: "only the root", cfg: "growpart: {devices: [/]}\n"},
		{name: "growroot-disabled", cfg: "growpart: {devices: [/srv]}\n", disabled: "x", wantLog: "growpart: disabled by /etc/growroot-disabled"},
		{name: "not mounted", cfg: "growpart: {devices: [/srv]}\n", wantErr: `growpart.devices "/srv": nothing is mounted there`},
		{name: "relative", cfg: "growpart: {devices: [srv]}\n", wantErr: `growpart.devices "srv": want an absolute path`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := coretest.NewEnv(t, tc.cfg)
			if tc.disabled != "" {
				te.Write("/etc/growroot-disabled", tc.disabled, 0o644)
			}
			err := te.RunFunc(Growpart)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("growpart: %v, want %q", err, tc.wantErr)
			}
			if !strings.Contains(te.LogBuf.String(), tc.wantLog) {
				t.Errorf("log:\n%s", te.LogBuf.String())
			}
		})
	}
}
