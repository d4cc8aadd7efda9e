package initramfs

import (
	"reflect"
	"strings"
	"testing"
)

func TestFstabRootFS(t *testing.T) {
	for _, tc := range []struct {
		name, fstab string
		want        []string // nil: not known
	}{
		{"debian cloud image", "# /etc/fstab: static file system information.\nUUID=3f1c / ext4 rw,discard,errors=remount-ro,x-systemd.growfs 0 1\nUUID=9A3B /boot/efi vfat defaults 0 0\n", []string{"ext4"}},
		{"rocky, tabs", "UUID=7b1d\t/\txfs\tdefaults\t0 0\n/dev/vda1 /boot xfs defaults 0 0\n", []string{"xfs"}},
		{"fedora, btrfs subvolume", "UUID=a / btrfs subvol=root,compress=zstd:1 0 0\nUUID=a /home btrfs subvol=home 0 0\n", []string{"btrfs"}},
		{"ext3 is ext4.ko's", "LABEL=root / ext3 defaults 0 1\n", []string{"ext4"}},
		{"a list of types", "LABEL=root / btrfs,ext4 defaults 0 1\n", []string{"btrfs", "ext4"}},
		{"two lines for /", "LABEL=a / xfs defaults 0 0\nLABEL=b / ext4 defaults 0 0\n", []string{"xfs", "ext4"}},
		{"commented out", "#LABEL=root / xfs defaults 0 0\nLABEL=root / ext4 defaults 0 1\n", []string{"ext4"}},
		{"auto", "LABEL=root / auto defaults 0 1\n", nil},
		{"another type", "LABEL=root / f2fs defaults 0 1\n", nil},
		{"known and unknown", "LABEL=root / xfs,f2fs defaults 0 1\n", nil},
		{"no root line", "UUID=9A3B /boot/efi vfat defaults 0 0\nproc /proc proc defaults 0 0\n", nil},
		{"empty", "", nil},
		{"short lines", "/dev/vda1 /\n", nil},
		{"over the cap", strings.Repeat("#", MaxFstab) + "\nLABEL=root / xfs defaults 0 0\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := FstabRootFS(strings.NewReader(tc.fstab))
			if ok != (tc.want != nil) || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FstabRootFS = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}

func TestOtherRootFS(t *testing.T) {
	for _, tc := range []struct {
		keep, add, want []string
	}{
		{[]string{"ext4"}, nil, []string{"xfs", "btrfs"}},
		{[]string{"xfs"}, nil, []string{"ext4", "btrfs"}},
		{[]string{"btrfs", "ext4"}, nil, []string{"xfs"}},
		{[]string{"xfs"}, []string{"dm_mod", "btrfs"}, []string{"ext4"}},
		{[]string{"xfs"}, []string{"fs/*"}, []string{"ext4", "btrfs"}}, // fs/* is fs/'s own files
		{[]string{"xfs"}, []string{"fs/*/*"}, nil},
		{[]string{"xfs"}, []string{"fs/btrfs/*"}, []string{"ext4"}},
		{[]string{"ext4", "xfs", "btrfs"}, nil, nil},
	} {
		if got := OtherRootFS(tc.keep, tc.add); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("OtherRootFS(%q, %q) = %q, want %q", tc.keep, tc.add, got, tc.want)
		}
	}
}
