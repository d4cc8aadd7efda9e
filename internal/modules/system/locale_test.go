package system

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// localeOracle: [alpine's apply_locale file, rhel_util.update_sysconfig_file
// of an existing file] for each [locale, existing content].
const localeOracle = `
import os, tempfile
from cloudinit.distros import alpine
from cloudinit.distros import rhel_util
from cloudinit import helpers
out = []
for loc, existing in json.load(sys.stdin):
    d = tempfile.mkdtemp()
    a = os.path.join(d, "locale.sh")
    alpine.Distro("alpine", {}, helpers.Paths({})).apply_locale(loc, out_fn=a)
    r = os.path.join(d, "locale.conf")
    open(r, "w").write(existing)
    rhel_util.update_sysconfig_file(r, {"LANG": loc})
    out.append([open(a).read(), open(r).read()])
json.dump(out, sys.stdout)
`

func TestLocaleMatchesCloudInit(t *testing.T) {
	cases := [][2]string{
		{"en_US.UTF-8", "LANG=C.UTF-8\n"},
		{"de_DE.UTF-8", "# comment\nLANG=\"en_US.UTF-8\"\nLC_TIME=C\n"},
		{"fr_FR.UTF-8", "LC_CTYPE=C\n"},
	}
	var want [][2]string
	coretest.CloudinitOracle(t, localeOracle, cases, &want)
	for i, c := range cases {
		te := coretest.DistroEnv(t, "alpine", "locale: "+c[0]+"\n")
		if err := te.RunFunc(Locale); err != nil {
			t.Fatal(err)
		}
		te.WantFile("/etc/profile.d/locale.sh", want[i][0], 0o644, 0, 0)
		for _, d := range []string{"rocky", "opensuse"} {
			te := coretest.DistroEnv(t, d, "locale: "+c[0]+"\n")
			te.Write("/etc/locale.conf", c[1], 0o644)
			if err := te.RunFunc(Locale); err != nil {
				t.Fatal(err)
			}
			te.WantFile("/etc/locale.conf", want[i][1], 0o644, 0, 0)
			te.WantCalls()
		}
	}
}

func TestLocaleDebian(t *testing.T) {
	for _, tt := range []struct {
		name, distro, cfg, current, localeGen string
		calls                                 []string
		wantGen                               string
	}{
		{"new locale on Debian: locale.gen line uncommented", "debian", "locale: de_DE.UTF-8\n", "LANG=C.UTF-8\n", "# de_DE ISO-8859-1\n# de_DE.UTF-8 UTF-8\n# en_US.UTF-8 UTF-8\n",
			[]string{"locale-gen de_DE.UTF-8", "update-locale --locale-file=/etc/default/locale LANG=de_DE.UTF-8"}, "# de_DE ISO-8859-1\nde_DE.UTF-8 UTF-8\n# en_US.UTF-8 UTF-8\n"},
		{"same locale: nothing", "debian", "locale: en_US.UTF-8\n", "LANG=\"en_US.UTF-8\"\n", "", nil, ""},
		{"C.UTF-8 needs no generation", "debian", "locale: C.UTF-8\n", "", "", []string{"update-locale --locale-file=/etc/default/locale LANG=C.UTF-8"}, ""},
		{"ubuntu with locale_configfile", "ubuntu", "locale: en_GB.UTF-8\nlocale_configfile: /etc/locale.conf\n", "", "",
			[]string{"locale-gen en_GB.UTF-8", "update-locale --locale-file=/etc/locale.conf LANG=en_GB.UTF-8"}, ""},
		{"locale false", "debian", "locale: false\n", "", "", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			te := coretest.DistroEnv(t, tt.distro, tt.cfg)
			if tt.current != "" {
				te.Write("/etc/default/locale", tt.current, 0o644)
			}
			if tt.localeGen != "" {
				te.Write("/etc/locale.gen", tt.localeGen, 0o644)
			}
			if err := te.RunFunc(Locale); err != nil {
				t.Fatal(err)
			}
			te.WantCalls(tt.calls...)
			if tt.wantGen != "" {
				te.WantFile("/etc/locale.gen", tt.wantGen, 0o644, 0, 0)
			}
		})
	}
}

func TestLocaleRejects(t *testing.T) {
	for _, tt := range []struct{ cfg, want string }{
		{"locale: \"en_US.UTF-8\\nLD_PRELOAD=/tmp/x.so\"\n", "locale \"en_US.UTF-8\\nLD_PRELOAD"},
		{"locale: \"$(reboot)\"\n", "locale \"$(reboot)\": not a locale name"},
		{"locale: \"--help\"\n", "not a locale name"},
		{"locale: en_US.UTF-8\nlocale_configfile: etc/locale\n", "locale_configfile"},
	} {
		for _, d := range []string{"debian", "rocky", "alpine"} {
			te := coretest.DistroEnv(t, d, tt.cfg)
			err := te.RunFunc(Locale)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s %q: err %v, want %q", d, tt.cfg, err, tt.want)
			}
			if te.Root.Exists("/etc/locale.conf") || te.Root.Exists("/etc/profile.d/locale.sh") || len(te.Calls()) > 0 {
				t.Errorf("%s %q: wrote or ran something", d, tt.cfg)
			}
		}
	}
	te := coretest.DistroEnv(t, "debian", "locale: xx_YY.UTF-8\n")
	te.Write("/etc/locale.gen", "# en_US.UTF-8 UTF-8\n", 0o644)
	te.Write("/usr/share/i18n/SUPPORTED", "en_US.UTF-8 UTF-8\n", 0o644)
	if err := te.RunFunc(Locale); err == nil || !strings.Contains(err.Error(), "not a supported locale") {
		t.Errorf("unsupported locale: err %v", err)
	}
}
