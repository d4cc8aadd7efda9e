package initramfs

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseConf(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     Conf
		wantErr  string
	}{
		{"empty", "", Conf{Compress: "auto", RootFS: "auto"}, ""},
		{"comments", "# a comment\n\n   # indented\n", Conf{Compress: "auto", RootFS: "auto"}, ""},
		{"all keys", "HOSTONLY=yes\nCOMPRESS=xz\nMODULES_ADD=dm_mod drivers/md/*\nMODULES_OMIT=btrfs\nROOTFS=all\n",
			Conf{HostOnly: true, Compress: "xz", ModulesAdd: []string{"dm_mod", "drivers/md/*"}, ModulesOmit: []string{"btrfs"}, RootFS: "all"}, ""},
		{"quotes and comments", "MODULES_ADD=\"dm_mod raid1\"  # for md\nCOMPRESS='none'\nHOSTONLY=no # default\n",
			Conf{Compress: "none", ModulesAdd: []string{"dm_mod", "raid1"}, RootFS: "auto"}, ""},
		{"spaces around =", "  COMPRESS = gzip\n", Conf{Compress: "gzip", RootFS: "auto"}, ""},
		{"last wins", "COMPRESS=xz\nCOMPRESS=lz4\nMODULES_ADD=a\nMODULES_ADD=b\n", Conf{Compress: "lz4", ModulesAdd: []string{"b"}, RootFS: "auto"}, ""},
		{"empty list", "MODULES_ADD=\n", Conf{Compress: "auto", RootFS: "auto"}, ""},
		{"auto", "COMPRESS=auto\n", Conf{Compress: "auto", RootFS: "auto"}, ""},
		{"unknown key", "HOSTONLY=no\nMODULES=most\n", Conf{}, "initramfs.conf:2: MODULES: unknown key (known: HOSTONLY, COMPRESS, MODULES_ADD, MODULES_OMIT, ROOTFS)"},
		{"lower case key", "compress=xz\n", Conf{}, "initramfs.conf:1: compress: unknown key"},
		{"no =", "COMPRESS xz\n", Conf{}, `initramfs.conf:1: "COMPRESS xz": want KEY=value`},
		{"bad hostonly", "HOSTONLY=y\n", Conf{}, `initramfs.conf:1: HOSTONLY: "y": want yes or no`},
		{"bad rootfs", "ROOTFS=xfs\n", Conf{}, `initramfs.conf:1: ROOTFS: "xfs": want auto or all`},
		{"bad compress", "\nCOMPRESS=bzip2\n", Conf{}, `initramfs.conf:2: COMPRESS: "bzip2": want auto, zstd, xz, gzip, lz4, none`},
		{"unterminated", "MODULES_ADD=\"dm_mod\n", Conf{}, "initramfs.conf:1: MODULES_ADD: unterminated \" quote"},
		{"after quote", "COMPRESS=\"xz\"gzip\n", Conf{}, `initramfs.conf:1: COMPRESS: "gzip" after the closing quote`},
		{"shell", "MODULES_ADD=$(reboot)\n", Conf{}, `MODULES_ADD: "$(reboot)": not a module name`},
		{"absolute", "MODULES_ADD=/etc/shadow\n", Conf{}, `"/etc/shadow": a path glob is relative`},
		{"dotdot", "MODULES_OMIT=../../x\n", Conf{}, `MODULES_OMIT: "../../x": no . or ..`},
		{"bad glob", "MODULES_ADD=drivers/[md\n", Conf{}, `"drivers/[md": syntax error in pattern`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConf(strings.NewReader(tc.in), "initramfs.conf")
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseConf: %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseConf = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// The shipped file parses to the defaults.
func TestShippedConf(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "packaging", "initramfs.conf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := ParseConf(f, f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, DefaultConf()) {
		t.Errorf("packaging/initramfs.conf = %+v, want the defaults %+v", c, DefaultConf())
	}
}
