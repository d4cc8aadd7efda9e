package disks

import (
	"path"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// fsCmdOracle runs cloud-init 22.4's cc_disk_setup.handle() on each
// fs_setup entry alone, with the machine mocked out: subp.subp records
// the commands and runs nothing, subp.which finds only mkfs.ext4, the
// device is there (assert_and_settle_device), is its own real path and a
// disk, and the datasource maps no name. It says which exception handle
// caught for the entry (in its util.logexc: the entry failed), if any,
// and the commands run (a string for a shell command, an argv
// otherwise).
const fsCmdOracle = `
from unittest import mock
from cloudinit.config import cc_disk_setup as ds
out = []
for entry in json.load(sys.stdin):
    runs, failed = [], []
    def subp(cmd, shell=False, **kw):
        runs.append(cmd if shell else [str(a) for a in cmd])
        return ("", "")
    cloud = mock.MagicMock()
    cloud.device_name_to_device.return_value = None
    with mock.patch.object(ds.subp, "subp", subp), \
            mock.patch.object(ds.subp, "which", lambda n: "/usr/sbin/" + n if n == "mkfs.ext4" else None), \
            mock.patch.object(ds, "assert_and_settle_device", lambda d: None), \
            mock.patch.object(ds, "device_type", lambda d: "disk"), \
            mock.patch.object(ds.os.path, "realpath", lambda p: p), \
            mock.patch.object(ds.util, "logexc", lambda *a, **k: failed.append(type(sys.exc_info()[1]).__name__)):
        ds.handle("disk_setup", {"fs_setup": [entry]}, cloud, logging.getLogger(), [])
    out.append({"failed": " ".join(failed), "runs": runs})
json.dump(out, sys.stdout)
`

// fsCmdVerdict is what became of one fs_setup entry: "fails" and the
// Python exception that failed it, or "runs" and its commands (a shell
// command as given to sh, an argv joined by spaces with its program's
// base name).
func fsCmdVerdict(failed string, runs []any) string {
	if failed != "" {
		return "fails " + failed
	}
	var cmds []string
	for _, r := range runs {
		switch r := r.(type) {
		case string:
			cmds = append(cmds, r)
		case []any:
			var argv []string
			for i, a := range r {
				s, _ := a.(string)
				if i == 0 {
					s = path.Base(s)
				}
				argv = append(argv, s)
			}
			cmds = append(cmds, strings.Join(argv, " "))
		}
	}
	return "runs " + strings.Join(cmds, "; ")
}

// fsCmdDifferences are the entries (by cmd) earlyinit deliberately does
// otherwise than cloud-init, and why.
var fsCmdDifferences = map[string]string{
	// pyfmt refuses a conversion without a name, which Python fills
	// with the whole mapping (the dict's repr): cloud-init runs
	// "mkfs {'label': 'data', ...}". docs/cloud-config.md lists it
	// among the templates "Python would refuse".
	"mkfs %s": "earlyinit fails the entry; cloud-init runs the mapping's repr",
	// Padding past pyfmt.MaxPad is refused; Python builds it.
	"mkfs -L %(label)70000s %(device)s": "earlyinit fails the entry; cloud-init pads the label",
	// An empty cmd: cloud-init's `if fs_cmd:` reads it as no cmd and
	// runs mkfs.ext4; earlyinit refuses it.
	"": "earlyinit fails the entry; cloud-init runs mkfs",
	// docs/cloud-config.md: cloud-init passes None for a missing
	// label, so %(label)s is "None"; earlyinit an empty string.
	"mkfs.%(filesystem)s -L '%(label)s' %(device)s|nolabel": "earlyinit's label is empty, cloud-init's None",
}

// TestFSSetupCmdAsCloudInit: an fs_setup entry whose cmd Python's %
// cannot fill fails, and one it can runs the command cloud-init runs,
// but for fsCmdDifferences (docs/cloud-config.md, disk_setup).
func TestFSSetupCmdAsCloudInit(t *testing.T) {
	type tcase struct {
		cmd     any
		noLabel bool
	}
	cases := []tcase{
		{cmd: "mkfs.%(filesystem)s -L %(label)s %(device)s"},
		{cmd: "echo 100%% %(label)-6s| %(device)s"},
		{cmd: "mkfs -L %(label).2s %(device)r %(filesystem)a"},
		{cmd: "mkfs -L %(label)5s%(label)c %(device)s"},
		{cmd: "mkfs -L %(lable)s %(device)s"},
		{cmd: "mkfs -L %(label)s 50% %(device)s"},
		{cmd: "mkfs -L %(label)s %(device)s %"},
		{cmd: "mkfs -L %(label)d %(device)s"},
		{cmd: "mkfs -L %(label) --force"},
		{cmd: "mkfs -L %(label %(device)s"},
		{cmd: "mkfs -L %(label)*s %(device)s"},
		{cmd: "mkfs -L %(label)s %s"},
		{cmd: []any{"mkfs", "%(device)s"}},
		{cmd: "mkfs %s"},
		{cmd: "mkfs -L %(label)70000s %(device)s"},
		{cmd: ""},
		{cmd: "mkfs.%(filesystem)s -L '%(label)s' %(device)s", noLabel: true},
	}
	name := func(c tcase) string {
		s, ok := c.cmd.(string)
		if !ok {
			return "a list"
		}
		if c.noLabel {
			return s + "|nolabel"
		}
		return s
	}
	entry := func(c tcase) map[string]any {
		e := map[string]any{"device": "/dev/vdb", "filesystem": "ext4", "partition": "none", "cmd": c.cmd}
		if !c.noLabel {
			e["label"] = "data"
		}
		return e
	}
	var in []map[string]any
	for _, c := range cases {
		in = append(in, entry(c))
	}
	var want []struct {
		Failed string `json:"failed"`
		Runs   []any  `json:"runs"`
	}
	coretest.CloudinitOracle(t, fsCmdOracle, in, &want)
	seen := map[string]bool{}
	for i, c := range cases {
		n := name(c)
		cloudInit := fsCmdVerdict(want[i].Failed, want[i].Runs)
		got := earlyinitFSVerdict(t, entry(c))
		if why, ok := fsCmdDifferences[n]; ok {
			seen[n] = true
			if got == cloudInit {
				t.Errorf("%q: earlyinit now as cloud-init (%s): drop the difference %q", n, got, why)
			}
			continue
		}
		if got != cloudInit {
			t.Errorf("%q: earlyinit %s, cloud-init %s", n, trunc(got), trunc(cloudInit))
		}
	}
	for n, why := range fsCmdDifferences {
		if !seen[n] {
			t.Errorf("difference %q (%s) was not met: drop it", n, why)
		}
	}
}

// earlyinitFSVerdict runs DiskSetup on fs_setup entry e alone, on a blank
// /dev/vdb, and says what became of it.
func earlyinitFSVerdict(t *testing.T, e map[string]any) string {
	t.Helper()
	te := coretest.DistroEnv(t, "debian", "", "/dev/vdb", "/usr/sbin/mkfs.ext4")
	fakeDisks{}.install(te)
	withDevices(te).fixed["/dev/vdb"] = 10 << 30
	te.Cfg["fs_setup"] = []any{e}
	if err := te.RunFunc(DiskSetup); err != nil {
		// The exception cloud-init's % raises: pyfmt's kind, KeyError
		// for its "no value"; the TypeError of a list % a dict for a cmd
		// that is not a string.
		msg, ok := strings.CutPrefix(err.Error(), "fs_setup.0: cmd: ")
		switch {
		case !ok:
			t.Errorf("error %q: not the entry's cmd", err)
			return "fails"
		case strings.HasPrefix(msg, "no value for %("):
			return "fails KeyError"
		case strings.HasPrefix(msg, "want a string, got"):
			return "fails TypeError"
		}
		kind, _, _ := strings.Cut(msg, ":")
		return "fails " + kind
	}
	var runs []any
	for _, c := range te.Fake.Calls {
		switch {
		case c.Name == "sh" && len(c.Args) == 2 && c.Args[0] == "-c":
			runs = append(runs, c.Args[1])
		case strings.HasPrefix(c.Name, "mkfs"):
			argv := []any{c.Name}
			for _, a := range c.Args {
				argv = append(argv, a)
			}
			runs = append(runs, argv)
		}
	}
	return fsCmdVerdict("", runs)
}

// trunc is s cut for a message.
func trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
