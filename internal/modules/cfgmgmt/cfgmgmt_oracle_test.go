package cfgmgmt

import (
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// The oracle for the config-management modules (ansible, puppet, chef,
// salt_minion, rh_subscription): cloud-init 22.4's own handle() runs
// (internal/oracle) against a root of its own, seeded as earlyinit's, with
// subp, the distribution's install_packages and do_as, URL fetches and
// chownbyname recorded instead of run, and every file cloud-init reads or
// writes taken inside that root. The tests compare what each side ran,
// installed and wrote.

// ccDriver runs one cc_ module's handle() in inp["root"].
const ccDriver = `
import os, types, importlib, contextlib, shutil, io
logging.disable(logging.NOTSET)
from cloudinit import subp as real_subp, util as real_util, templater as real_templater
inp = json.load(sys.stdin)
root = inp["root"]
os.umask(0o022)
events, warnings = [], []

class Grab(logging.Handler):
    def emit(self, rec):
        if rec.levelno >= logging.WARNING:
            warnings.append(rec.getMessage())
log = logging.getLogger("oracle")
log.setLevel(logging.DEBUG)
log.addHandler(Grab())
log.propagate = False
logging.getLogger().addHandler(Grab())
logging.getLogger().setLevel(logging.WARNING)

def R(p):
    return root + p if isinstance(p, str) and p.startswith("/") else p

def answer(argv):
    argv = ["python3" if i == 0 and a == sys.executable else a for i, a in enumerate(argv)]
    for r in inp.get("rules") or []:
        pre = r["argv"]
        if [str(a) for a in argv[:len(pre)]] == pre:
            if r.get("seq"):
                out = r["seq"][0]
                if len(r["seq"]) > 1:
                    r["seq"].pop(0)
                return (out, "")
            if r.get("rc", 0):
                raise real_subp.ProcessExecutionError(stdout=r.get("out", ""), stderr=r.get("err", ""), exit_code=r["rc"], cmd=argv)
            return (r.get("out", ""), "")
    return ("", "")

INSTALLERS = ("puppet-install", "chef-omnibus-install")

def record(argv, user=None, cwd=None):
    argv = [str(a) for a in argv]
    if argv and os.path.basename(argv[0]) in INSTALLERS:
        with open(R(argv[0])) as f:
            events.append({"kind": "script", "content": f.read()})
        argv[0] = "<installer>/" + os.path.basename(argv[0])
    ev = {"kind": "cmd", "argv": argv}
    if user:
        ev["user"] = user
    if cwd:
        ev["cwd"] = cwd
    events.append(ev)

def fake_subp(args, *a, **kw):
    argv = [args] if isinstance(args, str) else list(args)
    if argv[:3] == ["sed", "-i", "-e"] and argv[3] == "s/^START=.*/START=yes/":
        # the tool's work, which earlyinit does itself
        p = R(argv[4])
        with open(p) as f:
            lines = f.read().split("\n")
        with open(p, "w") as f:
            f.write("\n".join("START=yes" if l.startswith("START=") else l for l in lines))
        events.append({"kind": "sed", "path": argv[4]})
        return ("", "")
    record(argv, cwd=kw.get("cwd"))
    return answer(argv)

class Proxy:
    def __init__(self, real, **over):
        self._real = real
        self.__dict__.update(over)
    def __getattr__(self, n):
        return getattr(self._real, n)

def chownbyname(p, user=None, group=None):
    events.append({"kind": "chown", "path": p, "user": user, "group": group})

def sym_link(src, link, force=False):
    events.append({"kind": "symlink", "target": src, "path": link})
    real_util.sym_link(src, R(link), force)

util = Proxy(real_util,
    write_file=lambda fn, content, mode=0o644, *a, **kw: real_util.write_file(R(fn), content, mode, *a, **kw),
    ensure_dir=lambda p, mode=None: real_util.ensure_dir(R(p), mode),
    ensure_dirs=lambda ps, mode=0o755: [real_util.ensure_dir(R(p), mode) for p in ps],
    load_file=lambda fn, *a, **kw: real_util.load_file(R(fn), *a, **kw),
    rename=lambda a, b: os.rename(R(a), R(b)),
    chownbyname=chownbyname,
    sym_link=sym_link,
)
ospath = Proxy(os.path, exists=lambda p: os.path.exists(R(p)), isfile=lambda p: os.path.isfile(R(p)), isdir=lambda p: os.path.isdir(R(p)))
fake_os = Proxy(os, path=ospath, unlink=lambda p: (events.append({"kind": "unlink", "path": p}), os.unlink(R(p))))
which = lambda name, *a, **kw: ("/usr/bin/" + name) if name in (inp.get("which") or []) else None
subp = Proxy(real_subp, subp=fake_subp, which=which,
    is_exe=lambda p: os.path.isfile(R(p)) and os.access(R(p), os.X_OK))

class Contents:
    def __init__(self, b):
        self.contents = b
def readurl(url, retries=0, **kw):
    events.append({"kind": "fetch", "url": url, "retries": retries})
    return Contents(inp.get("script", "").encode())
url_helper = types.SimpleNamespace(readurl=readurl)

@contextlib.contextmanager
def tempdir(dir=None, needs_exe=False, **kw):
    os.makedirs(R("/oracle-tmp/d"), exist_ok=True)
    try:
        yield "/oracle-tmp/d"
    finally:
        shutil.rmtree(R("/oracle-tmp"))
temp_utils = types.SimpleNamespace(tempdir=tempdir)

def render_to_file(fn, outfn, params, mode=0o644):
    util.write_file(outfn, real_templater.render_from_file(fn, params), mode=mode)
templater = Proxy(real_templater, render_to_file=render_to_file)

class Distro:
    osfamily = inp.get("osfamily", "debian")
    pip_package_name = "python3-pip"
    def install_packages(self, pkgs):
        pkgs = real_util.expand_package_list("%s=%s", pkgs)
        events.append({"kind": "install", "pkgs": pkgs})
        for p in pkgs:
            f = (inp.get("installs") or {}).get(p)
            if f:
                os.makedirs(os.path.dirname(R(f)), exist_ok=True)
                with open(R(f), "w") as fh:
                    pass
                os.chmod(R(f), 0o755)
                inp["which"] = (inp.get("which") or []) + [os.path.basename(f)]
    def get_tmp_exec_path(self):
        return "/oracle-tmp"
    def do_as(self, command, user, cwd="", **kw):
        record(command, user=user, cwd=cwd)
        return answer(command)

class DS:
    def get_instance_id(self):
        return inp["iid"]

class Cloud:
    distro = Distro()
    datasource = DS()
    def get_instance_id(self):
        return inp["iid"]
    def get_template_filename(self, name):
        return "/etc/cloud/templates/%s.tmpl" % name

mod = importlib.import_module("cloudinit.config." + inp["module"])
for name, val in [("util", util), ("os", fake_os), ("subp", subp), ("url_helper", url_helper),
                  ("temp_utils", temp_utils), ("templater", templater)]:
    if hasattr(mod, name):
        setattr(mod, name, val)
if inp["module"] == "cc_ansible":
    mod.subp = fake_subp
    mod.which = which
    if inp.get("pip"):
        sys.modules["pip"] = types.ModuleType("pip")
    else:
        sys.modules["pip"] = None
if inp["module"] == "cc_puppet":
    mod.socket = types.SimpleNamespace(getfqdn=lambda: inp["fqdn"])
error = None
try:
    with contextlib.redirect_stdout(io.StringIO()):
        mod.handle(inp["module"][3:], inp["cfg"], Cloud(), log, [])
except Exception as e:
    error = "%s: %s" % (type(e).__name__, e)
print(json.dumps({"events": events, "error": error, "warnings": warnings}))
`

// ocRule answers a command whose argv starts with Argv.
type ocRule struct {
	Argv []string `json:"argv"`
	Out  string   `json:"out,omitempty"`
	RC   int      `json:"rc,omitempty"`
	// Seq are the outputs of successive calls, the last one repeated.
	Seq []string `json:"seq,omitempty"`
}

// ocEvent is one thing a side did: a command (argv, as user, in cwd), an
// install (pkgs), a chown, a fetch, a symlink, an unlink, an installer
// script's content.
type ocEvent struct {
	Kind    string   `json:"kind"`
	Argv    []string `json:"argv,omitempty"`
	User    string   `json:"user,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Pkgs    []string `json:"pkgs,omitempty"`
	Path    string   `json:"path,omitempty"`
	Group   string   `json:"group,omitempty"`
	URL     string   `json:"url,omitempty"`
	Target  string   `json:"target,omitempty"`
	Content string   `json:"content,omitempty"`
	Retries int      `json:"retries,omitempty"`
}

type ocResult struct {
	Events   []ocEvent `json:"events"`
	Error    *string   `json:"error"`
	Warnings []string  `json:"warnings"`
}

// ocSetup is what both roots start with.
type ocSetup struct {
	files map[string]string // 0644 root
	exes  []string          // empty, 0755
	// which are the tools on PATH (cloud-init's subp.which); earlyinit's
	// root gets /usr/bin/NAME.
	which []string
	rules []ocRule
	pip   bool // python3 can import pip (cloud-init's own interpreter)
	// installs are the files a package's install makes (an executable).
	installs map[string]string
}

// ocFile is a file of a root after a run.
type ocFile struct {
	content  string
	mode     fs.FileMode
	uid, gid int
	dir      bool
	link     string
}

// snapshot lists root's files and directories, but earlyinit's own
// state and the oracle's temporary directory.
func snapshot(t *testing.T, root string) map[string]ocFile {
	t.Helper()
	out := map[string]ocFile{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, root)
		if rel == "" {
			return nil
		}
		if rel == "/var/lib/earlyinit" || rel == "/oracle-tmp" {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		f := ocFile{mode: fi.Mode().Perm(), uid: int(st.Uid), gid: int(st.Gid), dir: fi.IsDir()}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			f.link, _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			f.content = string(b)
		}
		out[rel] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// seed makes a root of s in dir.
func (s ocSetup) seed(t *testing.T, dir string, earlyinit bool) {
	t.Helper()
	r, err := rootfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range s.files {
		if err := r.WriteFile(name, []byte(content), 0o644, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"/etc", "/usr/bin", "/var/lib", "/run"} {
		if err := r.MkdirAll(d, 0o755, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	exes := s.exes
	if earlyinit {
		for _, w := range s.which {
			exes = append(exes, "/usr/bin/"+w)
		}
		// systemd runs: services are started through systemctl.
		if err := r.MkdirAll("/run/systemd/system", 0o755, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range exes {
		if err := r.WriteFile(x, nil, 0o755, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// ccOracle runs cloud-init's module on a root seeded with s and returns
// what it did and the root's files.
func ccOracle(t *testing.T, module, cfgYAML string, s ocSetup, extra map[string]any) (ocResult, map[string]ocFile) {
	t.Helper()
	dir := t.TempDir()
	s.seed(t, dir, false)
	before := snapshot(t, dir)
	cfg := map[string]any{}
	if cfgYAML != "" {
		parts, _, err := userdata.Decode([]byte("#cloud-config\n" + cfgYAML))
		if err != nil {
			t.Fatal(err)
		}
		cfg, _ = userdata.Merge(parts, nil)
	}
	in := map[string]any{"module": module, "root": dir, "cfg": cfg, "iid": "iid-1", "fqdn": "node1.example.org",
		"rules": s.rules, "which": s.which, "pip": s.pip, "installs": s.installs}
	for k, v := range extra {
		in[k] = v
	}
	var res ocResult
	oracle.Run(t, ccDriver, in, &res)
	return res, changed(before, snapshot(t, dir))
}

// changed is after's entries that are new or differ from before's.
func changed(before, after map[string]ocFile) map[string]ocFile {
	out := map[string]ocFile{}
	for k, v := range after {
		if b, ok := before[k]; !ok || !reflect.DeepEqual(b, v) {
			out[k] = v
		}
	}
	return out
}

// ocExec is earlyinit's side: commands recorded and answered by the
// rules, matched on the argv inside su and sh wrappers.
type ocExec struct {
	mu       sync.Mutex
	root     string
	rules    []ocRule
	installs map[string]string
	calls    []core.Cmd
	seq      map[int]int
}

func (x *ocExec) Run(_ context.Context, c core.Cmd) ([]byte, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.calls = append(x.calls, c)
	ev := x.event(c)
	if i := indexOf(ev.Argv, "install"); i > 0 && strings.HasSuffix(ev.Argv[0], "apt-get") {
		for _, p := range ev.Argv[i+1:] {
			if f, ok := x.installs[p]; ok {
				os.MkdirAll(filepath.Dir(x.root+f), 0o755)
				if err := os.WriteFile(x.root+f, nil, 0o755); err != nil {
					return nil, err
				}
			}
		}
	}
	for i, r := range x.rules {
		if len(ev.Argv) >= len(r.Argv) && reflect.DeepEqual(ev.Argv[:len(r.Argv)], r.Argv) {
			if len(r.Seq) > 0 {
				if x.seq == nil {
					x.seq = map[int]int{}
				}
				n := min(x.seq[i], len(r.Seq)-1)
				x.seq[i]++
				return []byte(r.Seq[n]), nil
			}
			if r.RC != 0 {
				return []byte(r.Out), coretest.ExitErr(r.RC)
			}
			return []byte(r.Out), nil
		}
	}
	return nil, nil
}

// event is c as a cloud-init event: the argv inside su/sh wrappers (with
// its user and directory), paths under the test root as in the root.
func (x *ocExec) event(c core.Cmd) ocEvent {
	argv := append([]string{c.Name}, c.Args...)
	for i := range argv {
		argv[i] = strings.ReplaceAll(argv[i], x.root, "")
	}
	ev := ocEvent{Kind: "cmd"}
	switch {
	// ansible's wrappers: su --login --shell=/bin/sh --command=SCRIPT --
	// USER sh PATH DIR ARGV..., sh -c SCRIPT sh PATH DIR ARGV...
	case argv[0] == "su" && len(argv) > 8 && strings.HasPrefix(argv[3], "--command=") && argv[4] == "--":
		ev.User, ev.Cwd, argv = argv[5], argv[8], argv[9:]
	case argv[0] == "sh" && len(argv) > 5 && argv[1] == "-c" && argv[3] == "sh":
		ev.Cwd, argv = argv[5], argv[6:]
	}
	if len(argv) > 0 && argv[0] == "env" {
		argv = argv[1:]
		for len(argv) > 0 && strings.Contains(argv[0], "=") {
			argv = argv[1:]
		}
	}
	ev.Argv = argv
	return ev
}

// events are earlyinit's commands as cloud-init's events: apt-get update
// left out (Debian's install_packages does it, unrecorded), apt-get
// install an install, installer scripts by name.
func (x *ocExec) events() []ocEvent {
	var out []ocEvent
	for _, c := range x.calls {
		ev := x.event(c)
		a := ev.Argv
		switch {
		case len(a) > 1 && a[0] == "eatmydata":
			a = a[1:]
			fallthrough
		case a[0] == "apt-get":
			switch {
			case slicesContains(a, "update"):
				continue
			case slicesContains(a, "install"):
				i := indexOf(a, "install")
				out = append(out, ocEvent{Kind: "install", Pkgs: a[i+1:]})
				continue
			}
		case strings.HasSuffix(a[0], ".d/puppet-install") || strings.HasSuffix(a[0], ".d/chef-omnibus-install"):
			a[0] = "<installer>/" + filepath.Base(a[0])
		}
		ev.Argv = a
		out = append(out, ev)
	}
	return out
}

func slicesContains(l []string, s string) bool { return indexOf(l, s) >= 0 }

func indexOf(l []string, s string) int {
	for i, x := range l {
		if x == s {
			return i
		}
	}
	return -1
}

// ccEarlyinit runs earlyinit's module on a root seeded with s.
func ccEarlyinit(t *testing.T, module, cfgYAML string, s ocSetup, http *httpget.Getter) (*coretest.Env, *ocExec, error, map[string]ocFile) {
	t.Helper()
	te := coretest.NewEnv(t, cfgYAML)
	s.seed(t, te.Dir, true)
	for _, f := range []string{"/usr/bin/apt-get"} {
		te.Write(f, "", 0o755)
	}
	before := snapshot(t, te.Dir)
	x := &ocExec{root: te.Dir, rules: s.rules, installs: s.installs}
	te.Exec = x
	te.HTTP = http
	err := te.RunFunc(cfgMgmtRun(module))
	return te, x, err, changed(before, snapshot(t, te.Dir))
}

// cfgMgmtRun is the function of one of this family's modules.
func cfgMgmtRun(module string) func(context.Context, *core.Env) error {
	return map[string]func(context.Context, *core.Env) error{
		"ansible": Ansible, "chef": Chef, "puppet": Puppet, "salt_minion": SaltMinion, "rh_subscription": RHSubscription,
	}[module]
}

// ocNormalize is the oracle's events as earlyinit's are compared: the
// script events and the sed cloud-init runs (earlyinit edits the file
// itself) out, sys.executable as python3, `service NAME VERB` as
// systemctl.
func ocNormalize(evs []ocEvent) []ocEvent {
	var out []ocEvent
	for _, ev := range evs {
		switch ev.Kind {
		case "script", "sed", "chown", "fetch", "symlink", "unlink":
			continue
		}
		a := ev.Argv
		if ev.Kind == "cmd" && len(a) > 0 {
			if a[0] == "/usr/bin/python3" {
				a[0] = "python3"
			}
			if a[0] == "service" && len(a) == 3 {
				a = []string{"systemctl", a[2], a[1]}
			}
		}
		ev.Argv = a
		out = append(out, ev)
	}
	return out
}

// ourNormalize is earlyinit's events as compared: systemctl's --no-block
// out, git clone's "--" out.
func ourNormalize(evs []ocEvent) []ocEvent {
	var out []ocEvent
	for _, ev := range evs {
		var a []string
		for i, s := range ev.Argv {
			if s == "--no-block" && i == 1 && ev.Argv[0] == "systemctl" {
				continue
			}
			if s == "--" && len(ev.Argv) > 2 && ev.Argv[0] == "git" && ev.Argv[1] == "clone" {
				continue
			}
			a = append(a, s)
		}
		ev.Argv = a
		out = append(out, ev)
	}
	return out
}

func jsonString(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}

// ocCase is one config run by both sides.
type ocCase struct {
	name  string
	cfg   string
	setup ocSetup
	// modes are files earlyinit writes with another mode than cloud-init
	// (its secrets), and that mode.
	modes map[string]fs.FileMode
	// known adjusts cloud-init's events and files for a documented
	// difference before they are compared.
	known func(evs []ocEvent, files map[string]ocFile) []ocEvent
	// err: both sides fail. ourErr: only earlyinit does (a documented
	// refusal).
	err, ourErr bool
	// norm turns both sides' content of a file into what is compared
	// (a header with a date, JSON keys in another order).
	norm  map[string]func(string) string
	extra map[string]any
	http  *httpget.Getter
	check func(t *testing.T, te *coretest.Env)
}

// runOracleCases runs each case with cloud-init's ccModule and
// earlyinit's module and compares their commands, installs, files (content,
// mode, owner) and failure.
func runOracleCases(t *testing.T, module, ccModule string, cases []ocCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			res, theirs := ccOracle(t, ccModule, c.cfg, c.setup, c.extra)
			te, x, err, ours := ccEarlyinit(t, module, c.cfg, c.setup, c.http)
			switch {
			case c.ourErr:
				if err == nil {
					t.Errorf("earlyinit: no error")
				}
			case (res.Error != nil) != c.err || (err != nil) != c.err:
				t.Fatalf("errors: cloud-init %v, earlyinit %v (want failure: %v)", deref(res.Error), err, c.err)
			}
			want := res.Events
			if c.known != nil {
				want = c.known(want, theirs)
			}
			// owners cloud-init gives with chownbyname
			owners := map[string][2]int{}
			for _, ev := range want {
				if ev.Kind == "chown" {
					uid, gid, err := core.ResolveOwner(te.Root, ev.User+":"+ev.Group)
					if err != nil {
						t.Fatal(err)
					}
					owners[ev.Path] = [2]int{uid, gid}
				}
			}
			if g, w := ourNormalize(x.events()), ocNormalize(want); !reflect.DeepEqual(g, w) {
				t.Errorf("commands:\nearlyinit %s\ncloud-init %s", jsonString(g), jsonString(w))
			}
			for p, f := range c.norm {
				if o, ok := ours[p]; ok {
					o.content = f(o.content)
					ours[p] = o
				}
				if o, ok := theirs[p]; ok {
					o.content = f(o.content)
					theirs[p] = o
				}
			}
			// On a failure earlyinit has checked everything first and
			// written nothing; cloud-init may have written some.
			if !c.ourErr && !c.err {
				compareFiles(t, ours, theirs, owners, c.modes)
			}
			if c.check != nil {
				c.check(t, te)
			}
			if os.Getenv("EARLYINIT_ORACLE_DEBUG") != "" {
				t.Logf("cloud-init: %s\nfiles %v\nerror %s", jsonString(res.Events), keysOf(theirs), deref(res.Error))
			}
			if t.Failed() {
				t.Logf("cloud-init warnings: %q; earlyinit log:\n%s", res.Warnings, te.LogBuf.String())
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// compareFiles compares the files each side changed.
func compareFiles(t *testing.T, ours, theirs map[string]ocFile, owners map[string][2]int, modes map[string]fs.FileMode) {
	t.Helper()
	for p, w := range theirs {
		g, ok := ours[p]
		if !ok {
			t.Errorf("%s: cloud-init wrote it, earlyinit did not", p)
			continue
		}
		if g.dir != w.dir || g.content != w.content || g.link != w.link {
			t.Errorf("%s:\nearlyinit  %q (dir %v, link %q)\ncloud-init %q (dir %v, link %q)", p, g.content, g.dir, g.link, w.content, w.dir, w.link)
		}
		wantMode := w.mode
		if m, ok := modes[p]; ok {
			wantMode = m
		}
		if g.link == "" && g.mode != wantMode {
			t.Errorf("%s: mode %#o, want %#o (cloud-init's %#o)", p, g.mode, wantMode, w.mode)
		}
		wantOwner := [2]int{w.uid, w.gid}
		if o, ok := owners[p]; ok {
			wantOwner = o
		}
		if g.link == "" && [2]int{g.uid, g.gid} != wantOwner {
			t.Errorf("%s: owner %d:%d, want %d:%d", p, g.uid, g.gid, wantOwner[0], wantOwner[1])
		}
	}
	for p := range ours {
		if _, ok := theirs[p]; !ok {
			t.Errorf("%s: earlyinit wrote it, cloud-init did not", p)
		}
	}
}

func keysOf(m map[string]ocFile) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// schemaScript gives cloud-init 22.4's examples of the modules named in
// "examples" (their meta) and its own schema's verdict on each document of
// "docs" (validate_cloudconfig_schema, strict): null for valid, else the
// message.
const schemaScript = `
import importlib, yaml
from cloudinit.config.schema import validate_cloudconfig_schema, SchemaValidationError, get_schema
inp = json.load(sys.stdin)
out = {"examples": {}, "verdicts": []}
for m in inp.get("examples") or []:
    out["examples"][m] = importlib.import_module("cloudinit.config." + m).meta["examples"]
schema = get_schema()
for doc in inp.get("docs") or []:
    try:
        validate_cloudconfig_schema(yaml.safe_load(doc), schema, strict=True, log_details=False)
        out["verdicts"].append(None)
    except SchemaValidationError as e:
        out["verdicts"].append(str(e))
print(json.dumps(out))
`

type schemaAnswer struct {
	Examples map[string][]string `json:"examples"`
	Verdicts []*string           `json:"verdicts"`
}

// schemaErrors are userdata.Validate's errors (not its warnings) on doc.
func schemaErrors(doc string) []string {
	var out []string
	for _, e := range userdata.Validate("test.yaml", []byte("#cloud-config\n"+doc)) {
		if !e.Warning {
			out = append(out, e.Error())
		}
	}
	return out
}

var cfgMgmtModules = []string{"cc_ansible", "cc_puppet", "cc_chef", "cc_salt_minion", "cc_rh_subscription"}

// TestCfgMgmtSchemaExamples: `earlyinit schema` accepts every example of
// cloud-init 22.4's ansible, puppet, chef, salt_minion and rh_subscription
// (their meta, taken from cloud-init itself), which cloud-init's own
// schema accepts too; the examples the module tests run are those.
func TestCfgMgmtSchemaExamples(t *testing.T) {
	var ans schemaAnswer
	oracle.Run(t, schemaScript, map[string]any{"examples": cfgMgmtModules}, &ans)
	var docs []string
	for _, m := range cfgMgmtModules {
		if len(ans.Examples[m]) == 0 {
			t.Errorf("%s: cloud-init has no examples", m)
		}
		docs = append(docs, ans.Examples[m]...)
	}
	var verdicts schemaAnswer
	oracle.Run(t, schemaScript, map[string]any{"docs": docs}, &verdicts)
	for i, d := range docs {
		if v := verdicts.Verdicts[i]; v != nil {
			t.Errorf("cloud-init's own schema refuses its example:\n%s\n%s", d, *v)
		}
		if errs := schemaErrors(d); len(errs) > 0 {
			t.Errorf("earlyinit schema refuses cloud-init's example:\n%s\n%s", d, strings.Join(errs, "\n"))
		}
	}
	ours := map[string][]string{
		"cc_ansible":         {ansibleExample1, ansibleExample2},
		"cc_salt_minion":     {saltExample},
		"cc_rh_subscription": rhExamples,
		"cc_chef":            {chefExample},
	}
	for m, exs := range ours {
		for _, ex := range exs {
			found := false
			for _, theirs := range ans.Examples[m] {
				found = found || strings.TrimSpace(theirs) == strings.TrimSpace(ex)
			}
			if !found {
				t.Errorf("%s: the test's example is not cloud-init's:\n%s", m, ex)
			}
		}
	}
}

// TestCfgMgmtSchemaVerdicts: `earlyinit schema` accepts and refuses what
// cloud-init 22.4's JSON schema accepts and refuses for these modules'
// keys (unknown keys, wrong types, enums, required keys, minimums), but
// for the differences it names.
func TestCfgMgmtSchemaVerdicts(t *testing.T) {
	type doc struct {
		yaml string
		// differs: earlyinit accepts what 22.4's schema refuses, and why.
		differs string
	}
	docs := []doc{
		{yaml: "ansible: {}"},
		{yaml: "ansible: null"},
		{yaml: "ansible: []"},
		{yaml: "ansible: {install_method: apt}"},
		{yaml: "ansible: {install_method: pip, package_name: ansible-core, run_user: u, ansible_config: /x, galaxy: {actions: [[ansible-galaxy, install, x]]}}"},
		{yaml: "ansible: {setup_controller: {repositories: [{path: /a, source: s}], run_ansible: [{playbook_name: p, playbook_dir: d, forks: 5, timeout: 1.5, anything: else}]}}"},
		{yaml: "ansible: {setup_controller: {run_ansible: [{forks: -1}]}}"},
		{yaml: "ansible: {setup_controller: {run_ansible: [{forks: '5'}]}}"},
		{yaml: "ansible: {setup_controller: {run_ansible: [{check: 'yes'}]}}"},
		{yaml: "ansible: {setup_controller: {repositories: [{path: /a}]}}"},
		{yaml: "ansible: {setup_controller: {other: 1}}"},
		{yaml: "ansible: {pull: {url: u}}"},
		{yaml: "ansible: {pull: {url: u, playbook_name: p, accept_host_key: 'yes'}}"},
		{yaml: "ansible: {pull: {url: u, playbook_name: p, timeout: 30}}"},
		{yaml: "ansible: {pull: {url: u, playbook_name: p, extra_vars: x}}"},
		{yaml: "ansible: {galaxy: {}}"},
		{yaml: "ansible: {galaxy: {actions: [ansible-galaxy]}}"},
		{yaml: "ansible: {galaxy: {actions: [[\"a\\nb\"]]}}"},
		{yaml: "ansible: {unknown: 1}"},
		{yaml: "puppet: {}"},
		{yaml: "puppet: null"},
		{yaml: "puppet: {install_type: snap}"},
		{yaml: "puppet: {install: 'yes'}"},
		{yaml: "puppet: {version: 7}"},
		{yaml: "puppet: {exec_args: --test}"},
		{yaml: "puppet: {exec_args: [--test, --noop]}"},
		{yaml: "puppet: {conf: {main: {a: 1}, server: {}, agent: {}, user: {}, ca_cert: x}}"},
		{yaml: "puppet: {conf: {foo: {}}}"},
		{yaml: "puppet: {conf: {agent: x}}"},
		{yaml: "puppet: {csr_attributes: {custom_attributes: {}, extension_requests: {}}}"},
		{yaml: "puppet: {csr_attributes: {other: {}}}"},
		{yaml: "puppet: {package: puppet}"},
		{yaml: "chef: {}"},
		{yaml: "chef: {server_url: s}"},
		{yaml: "chef: {directories: []}"},
		{yaml: "chef: {directories: [/a, /a]}"},
		{yaml: "chef: {exec_arguments: [x], server_url: s}"},
		{yaml: "chef: {delete_validation_post_exec: true}"},
		{yaml: "chef: {omnibus_url_retries: '5'}"},
		{yaml: "chef: {install_type: rpm}"},
		{yaml: "chef: {run_list: 'recipe[a]'}"},
		{yaml: "chef: {initial_attributes: {a: 1}, show_time: false, force_install: true, chef_license: accept}"},
		{yaml: "salt_minion: {}"},
		{yaml: "salt_minion: {conf: 'master: x'}"},
		{yaml: "salt_minion: {pki: x}"},
		{yaml: "salt_minion: {public_key: 1}"},
		{yaml: "salt_minion: {grains: {a: [1]}, pkg_name: salt, service_name: salt, config_dir: /etc/salt, pki_dir: /x}"},
		{yaml: "rh_subscription: {}"},
		{yaml: "rh_subscription: {pools: []}"},
		{yaml: "rh_subscription: {auto-attach: 'yes'}"},
		{yaml: "rh_subscription: {add-pool: x}"},
		{yaml: "rh_subscription: {org: true}"},
		{yaml: "rh_subscription: {activation-key: k, org: Default_Organization}",
			differs: "an organization's key as text: 22.4's schema wants an integer, its module and later schemas take text (a warning here)"},
	}
	var texts []string
	for _, d := range docs {
		texts = append(texts, d.yaml)
	}
	var ans schemaAnswer
	oracle.Run(t, schemaScript, map[string]any{"docs": texts}, &ans)
	for i, d := range docs {
		theirs := ans.Verdicts[i] == nil
		errs := schemaErrors(d.yaml + "\n")
		ours := len(errs) == 0
		switch {
		case d.differs != "":
			if theirs || !ours {
				t.Errorf("%s: cloud-init valid %v, earlyinit valid %v; the documented difference (%s) is gone", d.yaml, theirs, ours, d.differs)
			}
		case theirs != ours:
			t.Errorf("%s: cloud-init valid %v (%s), earlyinit valid %v (%q)", d.yaml, theirs, deref(ans.Verdicts[i]), ours, errs)
		}
	}
}

// TestCfgMgmtSchemaHidesSecrets: the schema's findings on these modules'
// secrets (a validator's key, an activation key, a password, salt's
// private key, a challengePassword, ansible's key file and variables)
// name the key, never the value.
func TestCfgMgmtSchemaHidesSecrets(t *testing.T) {
	for _, doc := range []string{
		"chef: {validation_cert: 12345678, server_url: s}",
		"chef: {validation_key: 12345678}",
		"rh_subscription: {activation-key: 12345678}",
		"rh_subscription: {password: 12345678}",
		"salt_minion: {private_key: 12345678}",
		"puppet: {csr_attributes: {custom_attributes: 12345678}}",
		"puppet: {csr_attributes: {extension_requests: 12345678}}",
		"ansible: {pull: {url: u, playbook_name: p, private_key: 12345678}}",
		"ansible: {pull: {url: u, playbook_name: p, vault_password_file: 12345678}}",
		"ansible: {setup_controller: {run_ansible: [{extra_vars: 12345678}]}}",
	} {
		errs := schemaErrors(doc + "\n")
		if len(errs) == 0 {
			t.Errorf("%s: no finding", doc)
		}
		for _, e := range errs {
			if strings.Contains(e, "12345678") {
				t.Errorf("%s: the value is shown: %s", doc, e)
			}
		}
	}
}
