package system

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// timezoneDriver runs cloud-init 22.4's Debian and RHEL distros'
// set_timezone in a directory standing for / (their zoneinfo directory,
// /etc/timezone and /etc/localtime moved under it), systemd running, with
// /etc/localtime first missing, a symlink or a regular file. It prints
// what is left: /etc/timezone's content and /etc/localtime's link target
// (made relative to the directory) or "file".
const timezoneDriver = `
import os, tempfile
from cloudinit import helpers, distros
from cloudinit.distros import debian, rhel
distros.uses_systemd = lambda: True
out = []
for c in json.load(sys.stdin):
    root = tempfile.mkdtemp()
    zd = os.path.join(root, "usr/share/zoneinfo/Europe")
    os.makedirs(zd)
    open(os.path.join(zd, "Paris"), "w").write("TZif")
    os.makedirs(os.path.join(root, "etc"))
    lt = os.path.join(root, "etc/localtime")
    if c["localtime"] == "symlink":
        os.symlink("/usr/share/zoneinfo/UTC", lt)
    elif c["localtime"] == "file":
        open(lt, "w").write("old")
    cls = {"debian": debian.Distro, "redhat": rhel.Distro}[c["family"]]
    d = cls(c["family"], {}, helpers.Paths({}))
    d.tz_zone_dir = os.path.join(root, "usr/share/zoneinfo")
    d.tz_local_fn = lt
    d.uses_systemd = lambda: True
    if c["family"] == "debian":
        d.set_timezone = lambda tz: distros.set_etc_timezone(tz=tz, tz_file=d._find_tz_file(tz), tz_conf=os.path.join(root, "etc/timezone"), tz_local=lt)
    d.set_timezone("Europe/Paris")
    tzc = os.path.join(root, "etc/timezone")
    r = {"timezone": open(tzc).read() if os.path.exists(tzc) else None}
    r["localtime"] = "/" + os.path.relpath(os.readlink(lt), root) if os.path.islink(lt) else "file"
    out.append(r)
print(json.dumps(out))
`

// TestTimezoneAsCloudInit: /etc/timezone and /etc/localtime are left as
// cloud-init's set_timezone leaves them on Debian's family and on RHEL's
// (under systemd), whatever /etc/localtime was.
func TestTimezoneAsCloudInit(t *testing.T) {
	type tc struct{ family, localtime string }
	var cases []tc
	for _, f := range []string{"debian", "redhat"} {
		for _, l := range []string{"missing", "symlink", "file"} {
			cases = append(cases, tc{f, l})
		}
	}
	var in []map[string]string
	for _, c := range cases {
		in = append(in, map[string]string{"family": c.family, "localtime": c.localtime})
	}
	var want []struct {
		Timezone  *string
		Localtime string
	}
	oracle.Run(t, timezoneDriver, in, &want)
	if len(want) != len(cases) {
		t.Fatalf("%d answers for %d cases", len(want), len(cases))
	}
	osRelease := map[string]string{"debian": "ID=debian\n", "redhat": "ID=rocky\nID_LIKE=\"rhel centos fedora\"\n"}
	for i, c := range cases {
		te := coretest.NewEnv(t, "timezone: Europe/Paris")
		te.Write("/etc/os-release", osRelease[c.family], 0o644)
		te.Write("/usr/share/zoneinfo/Europe/Paris", "TZif", 0o644)
		if err := os.MkdirAll(filepath.Join(te.Dir, "run/systemd/system"), 0o755); err != nil {
			t.Fatal(err)
		}
		switch c.localtime {
		case "symlink":
			if err := os.Symlink("/usr/share/zoneinfo/UTC", filepath.Join(te.Dir, "etc/localtime")); err != nil {
				t.Fatal(err)
			}
		case "file":
			te.Write("/etc/localtime", "old", 0o644)
		}
		if err := te.RunFunc(Timezone); err != nil {
			t.Fatalf("%+v: %v", c, err)
		}
		var gotTZ *string
		if b, err := os.ReadFile(filepath.Join(te.Dir, "etc/timezone")); err == nil {
			s := string(b)
			gotTZ = &s
		}
		gotLT := "file"
		if l, err := os.Readlink(filepath.Join(te.Dir, "etc/localtime")); err == nil {
			gotLT = l
		}
		w := want[i]
		if (gotTZ == nil) != (w.Timezone == nil) || gotTZ != nil && *gotTZ != *w.Timezone || gotLT != w.Localtime {
			t.Errorf("%+v: earlyinit timezone %v localtime %q, cloud-init %v %q", c, orNone(gotTZ), gotLT, orNone(w.Timezone), w.Localtime)
		}
	}
}

func orNone(s *string) string {
	if s == nil {
		return "(none)"
	}
	return *s
}
