package system

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

func TestKeyboard(t *testing.T) {
	cfg := "keyboard:\n  layout: de\n  variant: nodeadkeys\n  options: compose:rwin\n"
	t.Run("debian new file, console-setup restarted", func(t *testing.T) {
		te := coretest.DistroEnv(t, "debian", cfg, "/run/systemd/system/", "/lib/systemd/system/console-setup.service")
		if err := te.RunFunc(Keyboard); err != nil {
			t.Fatal(err)
		}
		te.WantFile("/etc/default/keyboard", "# KEYBOARD CONFIGURATION FILE\n\n# Consult the keyboard(5) manual page.\n\nXKBMODEL=\"pc105\"\nXKBLAYOUT=\"de\"\nXKBVARIANT=\"nodeadkeys\"\nXKBOPTIONS=\"compose:rwin\"\n\nBACKSPACE=\"guess\"\n", 0o644, 0, 0)
		te.WantCalls("systemctl --no-block restart console-setup")
	})
	t.Run("debian existing file keeps its other lines", func(t *testing.T) {
		te := coretest.DistroEnv(t, "ubuntu", "keyboard:\n  layout: fr\n  model: pc104\n")
		te.Write("/etc/default/keyboard", "# x\nXKBMODEL=\"pc105\"\nXKBLAYOUT=\"us\"\nXKBVARIANT=\"\"\nXKBOPTIONS=\"\"\n\nBACKSPACE=\"guess\"\n", 0o644)
		if err := te.RunFunc(Keyboard); err != nil {
			t.Fatal(err)
		}
		te.WantFile("/etc/default/keyboard", "# x\nXKBMODEL=\"pc104\"\nXKBLAYOUT=\"fr\"\nXKBVARIANT=\"\"\nXKBOPTIONS=\"\"\n\nBACKSPACE=\"guess\"\n", 0o644, 0, 0)
		te.WantCalls()
	})
	for _, d := range []string{"rocky", "opensuse"} {
		t.Run(d, func(t *testing.T) {
			te := coretest.DistroEnv(t, d, cfg, "/run/systemd/system/")
			if err := te.RunFunc(Keyboard); err != nil {
				t.Fatal(err)
			}
			te.WantFile("/etc/X11/xorg.conf.d/00-keyboard.conf", "# Written by systemd-localed(8), read by systemd-localed and Xorg. It's\n# probably wise not to edit this file manually. Use localectl(1) to\n# update this file.\nSection \"InputClass\"\n        Identifier \"system-keyboard\"\n        MatchIsKeyboard \"on\"\n        Option \"XkbLayout\" \"de\"\n        Option \"XkbModel\" \"pc105\"\n        Option \"XkbVariant\" \"nodeadkeys\"\n        Option \"XkbOptions\" \"compose:rwin\"\nEndSection\n", 0o644, 0, 0)
			te.WantCalls()
		})
	}
}

func TestKeyboardRejects(t *testing.T) {
	for _, tt := range []struct{ distro, cfg, want string }{
		{"debian", "keyboard:\n  layout: \"us\\\"\\nXKBOPTIONS=\\\"evil\"\n", "keyboard.layout"},
		{"debian", "keyboard:\n  layout: us\n  options: \"$(reboot)\"\n", "keyboard.options"},
		{"rocky", "keyboard:\n  layout: us\n  variant: \"a\\\" b\"\n", "keyboard.variant"},
		{"debian", "keyboard:\n  model: pc105\n", "keyboard.layout: required"},
		{"alpine", "keyboard:\n  layout: us\n", "not supported on Alpine"},
	} {
		te := coretest.DistroEnv(t, tt.distro, tt.cfg, "/run/systemd/system/", "/lib/systemd/system/console-setup.service")
		err := te.RunFunc(Keyboard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%q: err %v, want %q", tt.cfg, err, tt.want)
		}
		if te.Root.Exists("/etc/default/keyboard") || te.Root.Exists("/etc/X11") || len(te.Calls()) > 0 {
			t.Errorf("%q: wrote or ran something", tt.cfg)
		}
	}
}
