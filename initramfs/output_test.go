package initramfs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/earlyinit/earlyinit/internal/imagecfg"
)

func TestBootName(t *testing.T) {
	const k = "6.1.0-56-amd64"
	for _, tc := range []struct {
		name, osRelease string
		existing        []string
		want            string
	}{
		{"debian", "ID=debian\nVERSION_ID=\"12\"\n", nil, "initrd.img-" + k},
		{"ubuntu", "ID=ubuntu\nID_LIKE=debian\n", nil, "initrd.img-" + k},
		{"mint", "ID=linuxmint\nID_LIKE=\"ubuntu debian\"\n", nil, "initrd.img-" + k},
		{"fedora", "ID=fedora\n", nil, "initramfs-" + k + ".img"},
		{"rocky", "ID=\"rocky\"\nID_LIKE=\"rhel centos fedora\"\n", nil, "initramfs-" + k + ".img"},
		{"amazon", "ID=\"amzn\"\nID_LIKE=\"centos rhel fedora\"\n", nil, "initramfs-" + k + ".img"},
		{"openeuler", "NAME=\"openEuler\"\nID=\"openEuler\"\n", nil, "initramfs-" + k + ".img"},
		{"opensuse", "ID=\"opensuse-leap\"\nID_LIKE=\"suse opensuse\"\n", nil, "initrd-" + k},
		{"sles", "ID=\"sles\"\nID_LIKE=\"suse\"\n", nil, "initrd-" + k},
		// The family wins over what is there.
		{"debian, rhel name there", "ID=debian\n", []string{"initramfs-" + k + ".img"}, "initrd.img-" + k},
		{"unknown, rhel name there", "ID=myos\n", []string{"initramfs-" + k + ".img"}, "initramfs-" + k + ".img"},
		{"none, suse name there", "", []string{"initrd-" + k}, "initrd-" + k},
		{"none, both there", "", []string{"initramfs-" + k + ".img", "initrd.img-" + k}, "initrd.img-" + k},
		{"none", "", nil, "initrd.img-" + k},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exists := func(n string) bool {
				for _, e := range tc.existing {
					if e == n {
						return true
					}
				}
				return false
			}
			if got := bootName(imagecfg.ParseOSRelease(tc.osRelease), k, exists); got != tc.want {
				t.Errorf("bootName = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestDefaultOutput(t *testing.T) {
	const k = "6.1.0-test"
	root := t.TempDir()
	if got, want := DefaultOutput(root, k), filepath.Join(root, "boot", "initrd.img-"+k); got != want {
		t.Errorf("no os-release: %s, want %s", got, want)
	}
	writeFile(t, filepath.Join(root, "usr/lib/os-release"), "ID=fedora\n")
	if got, want := DefaultOutput(root, k), filepath.Join(root, "boot", "initramfs-"+k+".img"); got != want {
		t.Errorf("usr/lib/os-release: %s, want %s", got, want)
	}
	// etc/os-release, a link, is not followed (it could lead out of the
	// root): usr/lib/os-release is read.
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := writeFile(t, filepath.Join(t.TempDir(), "os-release"), "ID=debian\n")
	if err := os.Symlink(other, filepath.Join(root, "etc/os-release")); err != nil {
		t.Fatal(err)
	}
	if got, want := DefaultOutput(root, k), filepath.Join(root, "boot", "initramfs-"+k+".img"); got != want {
		t.Errorf("etc/os-release a link: %s, want %s", got, want)
	}
	os.Remove(filepath.Join(root, "etc/os-release"))
	writeFile(t, filepath.Join(root, "etc/os-release"), "ID=debian\n")
	if got, want := DefaultOutput(root, k), filepath.Join(root, "boot", "initrd.img-"+k); got != want {
		t.Errorf("etc/os-release: %s, want %s", got, want)
	}
}
