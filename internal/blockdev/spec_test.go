package blockdev

import (
	"errors"
	"strings"
	"testing"
)

func TestParseSpec(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    Spec
		wantErr string
	}{
		{in: "/dev/vda1", want: Spec{"path", "/dev/vda1"}},
		{in: "/dev/disk/by-label/root", want: Spec{"path", "/dev/disk/by-label/root"}},
		{in: "LABEL=cloudimg-rootfs", want: Spec{"label", "cloudimg-rootfs"}},
		{in: "LABEL=a=b", want: Spec{"label", "a=b"}},
		{in: "UUID=0B9B-3A5D", want: Spec{"uuid", "0B9B-3A5D"}},
		{in: "PARTUUID=1c7b5e1d-01", want: Spec{"partuuid", "1c7b5e1d-01"}},
		{in: "PARTUUID=1c7b5e1d-01/PARTNROFF=1", wantErr: "not supported"},
		{in: "PARTLABEL=root", want: Spec{"partlabel", "root"}},
		{in: "PARTLABEL=EFI System", want: Spec{"partlabel", "EFI System"}},
		{in: "PARTLABEL=Räksmörgås", want: Spec{"partlabel", "Räksmörgås"}},
		{in: "PARTLABEL=", wantErr: "empty PARTLABEL"},
		{in: "partlabel=x", wantErr: "want /dev/NAME"},
		{in: "LABEL=", wantErr: "empty LABEL"},
		{in: "UUID=", wantErr: "empty UUID"},
		{in: "", wantErr: "empty device spec"},
		{in: "vda1", wantErr: "want /dev/NAME"},
		{in: "fe01", wantErr: "want /dev/NAME"},
		{in: "label=x", wantErr: "want /dev/NAME"},
	} {
		got, err := ParseSpec(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseSpec(%q) = %+v, %v; want error containing %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ParseSpec(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			continue
		}
		if got.String() != tc.in {
			t.Errorf("ParseSpec(%q).String() = %q", tc.in, got.String())
		}
	}
}

func TestSpecMatch(t *testing.T) {
	root := Device{Name: "vda1", Path: "/tmp/dev/vda1", Partition: true, Size: 1 << 30, PartUUID: "1c7b5e1d-01",
		FS: FS{Type: "ext4", Label: "root", UUID: "3f1c7a52-0b9e-4c1e-9d2a-0c7e5a1b2c3d"}}
	esp := Device{Name: "vda15", Path: "/dev/vda15", Partition: true, Size: 1 << 20, PartUUID: "8c5e9f0a-6b1d-4f2e-8a3c-1d2e3f4a5b6c",
		FS: FS{Type: "vfat", Label: "UEFI", UUID: "0B9B-3A5D"}}
	named := Device{Name: "vdd2", Path: "/dev/vdd2", Partition: true, Size: 1 << 20, PartLabel: "Räksmörgås ✓",
		FS: FS{Type: "xfs", Label: "root", UUID: "01234567-89ab-cdef-0123-456789abcdef"}}
	odd := Device{Name: "vdb", Path: "/dev/vdb", Size: 1 << 20, FS: FS{Type: "ext2", Label: "a/b c"}}
	unknown := Device{Name: "vdc", Path: "/dev/vdc", Size: 1 << 20, ProbeErr: errors.New("x")}
	for _, tc := range []struct {
		spec string
		dev  Device
		want bool
	}{
		{"/tmp/dev/vda1", root, true},
		{"/dev/vda1", root, true},
		{"/dev/vda", root, false},
		{"/dev/vda15", esp, true},
		{"/dev/vda1", esp, false},
		{"LABEL=root", root, true},
		{"LABEL=ROOT", root, false},
		{"LABEL=root", esp, false},
		{"UUID=3F1C7A52-0B9E-4C1E-9D2A-0C7E5A1B2C3D", root, true},
		{"UUID=0b9b-3a5d", esp, true},
		{"UUID=0B9B-3A5E", esp, false},
		{"PARTUUID=1C7B5E1D-01", root, true},
		{"PARTUUID=1c7b5e1d-02", root, false},
		{"PARTUUID=8c5e9f0a-6b1d-4f2e-8a3c-1d2e3f4a5b6c", esp, true},
		{"/dev/disk/by-label/root", root, true},
		{"/dev/disk/by-label/UEFI", root, false},
		{"/dev/disk/by-uuid/0B9B-3A5D", esp, true},
		{"/dev/disk/by-partuuid/1c7b5e1d-01", root, true},
		{"PARTLABEL=Räksmörgås ✓", named, true},
		{"PARTLABEL=räksmörgås ✓", named, false},
		{"PARTLABEL=Räksmörgås", named, false},
		{"PARTLABEL=root", named, false},
		{"PARTLABEL=root", root, false},
		{`/dev/disk/by-partlabel/R\xc3\xa4ksm\xc3\xb6rg\xc3\xa5s\x20\xe2\x9c\x93`, named, true},
		{"/dev/disk/by-partlabel/root", named, false},
		{"UUID=01234567-89AB-CDEF-0123-456789ABCDEF", named, true},
		{"LABEL=root", named, true},
		{`/dev/disk/by-label/a\x2fb\x20c`, odd, true},
		{"/dev/disk/by-label/a", odd, false},
		{"LABEL=", unknown, false},
		{"/dev/vdc", unknown, true},
	} {
		s, err := ParseSpec(tc.spec)
		if err != nil {
			if tc.want {
				t.Errorf("ParseSpec(%q): %v", tc.spec, err)
			}
			continue
		}
		if got := s.Match(tc.dev); got != tc.want {
			t.Errorf("%q.Match(%s) = %v, want %v", tc.spec, tc.dev, got, tc.want)
		}
	}
}

func TestDeviceString(t *testing.T) {
	for _, tc := range []struct {
		dev  Device
		want string
	}{
		{Device{Name: "vda1", Size: 1, FS: FS{Type: "ext4", Label: "root", UUID: "u"}}, `vda1 ext4 LABEL="root" UUID="u"`},
		{Device{Name: "vda1", Size: 1, PartUUID: "abcd-01", FS: FS{Type: "ext4", UUID: "u"}}, `vda1 ext4 UUID="u" PARTUUID="abcd-01"`},
		{Device{Name: "sr0", Size: 1, Removable: true, FS: FS{Type: "iso9660", Label: "config-2"}}, `sr0 iso9660 LABEL="config-2"`},
		{Device{Name: "vda2", Size: 1, PartUUID: "u-2", PartLabel: "EFI System", FS: FS{Type: "vfat"}}, `vda2 vfat PARTUUID="u-2" PARTLABEL="EFI System"`},
		{Device{Name: "vda3", Size: 1, PartLabel: "Räk\"s"}, `vda3 unknown PARTLABEL="Räk\"s"`},
		{Device{Name: "vdb", Size: 1, ProbeErr: ErrUnknown}, `vdb unknown (no known filesystem)`},
		{Device{Name: "vdb", Size: 1}, `vdb unknown`},
		{Device{Name: "sr0", Removable: true}, `sr0 no medium`},
		{Device{Name: "vdc", Size: 1, FS: FS{Type: "vfat", Label: `a"b`}}, `vdc vfat LABEL="a\"b"`},
	} {
		if got := tc.dev.String(); got != tc.want {
			t.Errorf("String() = %s, want %s", got, tc.want)
		}
	}
}
