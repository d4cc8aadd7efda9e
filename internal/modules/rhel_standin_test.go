package modules

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/modules/repos"
	"github.com/earlyinit/earlyinit/internal/modules/system"
)

// The RHEL paths of yum_add_repo, package_update_upgrade_install and
// ca_certs run here with the real SystemExec against stand-ins: shell
// scripts named dnf, yum, needs-restarting and update-ca-trust in the
// test root's /usr/bin, found on PATH, that record what they are given
// (argv, stdin, environment, the files they see) under /standin in the
// root and behave as the real tools do in what the modules depend on
// (exit codes, prompts, messages, the files they read and write). Debian
// has no RHEL root to run them in. The .repo files are read by the real
// dnf (Debian's dnf 4.14, libdnf's parser through its Python API), which
// `make deps` installs.

// standinLog is the part every stand-in starts with: it records its call
// as /standin/NNN.{argv,stdin,env,repos} (argv NUL-separated; repos the
// .repo files it sees with their sizes), NNN counting calls.
const standinLog = `#!/bin/sh
root=$(cd "$(dirname "$0")/../.." && pwd)
tool=$(basename "$0")
log=$root/standin
mkdir -p "$log"
n=$(ls "$log" | grep -c '\.argv$')
n=$(printf %03d $((n + 1)))
printf '%s\0' "$tool" "$@" >"$log/$n.argv"
cat >"$log/$n.stdin"
env >"$log/$n.env"
for f in "$root"/etc/yum.repos.d/*.repo; do
	[ -f "$f" ] && echo "/etc/yum.repos.d/${f##*/} $(wc -c <"$f")"
done >"$log/$n.repos"
`

// standinDnf is dnf (and, as yum, EL7's yum): -y or it aborts at the
// prompt as dnf does without a terminal; makecache; upgrade (a pending
// kernel update leaves the reboot marker needs-restarting reads);
// install of the packages /var/lib/standin/available lists, else dnf's
// "Error: Unable to find a match" (yum: "No package X available." and
// "Error: Nothing to do") and exit 1; check-update's exit 100 when
// updates are pending; an unknown option or command exits 2 or 1.
const standinDnf = standinLog + `
yes= tolerant= op= pkgs=
for a; do
	case $a in
	-y|--assumeyes) yes=1 ;;
	-t|--tolerant)
		[ "$tool" = yum ] || { echo "usage: dnf [options] COMMAND" >&2; echo "dnf: error: unrecognized arguments: $a" >&2; exit 2; }
		tolerant=1 ;;
	-*) echo "$tool: error: unrecognized arguments: $a" >&2; exit 2 ;;
	*) if [ -z "$op" ]; then op=$a; else pkgs="$pkgs $a"; fi ;;
	esac
done
state=$root/var/lib/standin
case $op in
makecache)
	echo "Metadata cache created."
	touch "$state/makecache"
	exit 0 ;;
check-update)
	[ -s "$state/updates" ] && { cat "$state/updates"; exit 100; }
	exit 0 ;;
upgrade|install)
	if [ -z "$yes" ]; then
		echo "Is this ok [y/N]: Operation aborted."
		exit 1
	fi ;;
*)
	echo "No such command: $op. Please use /usr/bin/$tool --help" >&2
	exit 1 ;;
esac
if [ "$op" = upgrade ]; then
	if [ -s "$state/updates" ]; then
		grep -q '^kernel' "$state/updates" && touch "$state/reboot"
		echo "Upgraded:"; cat "$state/updates"; : >"$state/updates"
	else
		echo "Dependencies resolved."; echo "Nothing to do."
	fi
	echo "Complete!"
	exit 0
fi
missing= found=
for p in $pkgs; do
	if grep -qx -- "$p" "$state/available" 2>/dev/null; then
		found="$found $p"
	else
		missing="$missing $p"
	fi
done
if [ -n "$missing" ]; then
	for p in $missing; do
		if [ "$tool" = yum ]; then echo "No package $p available."; else echo "No match for argument: $p"; fi
	done
	if [ "$tool" = yum ]; then
		[ -z "$found" ] && { echo "Error: Nothing to do"; exit 1; }
	else
		echo "Error: Unable to find a match:$missing"
		exit 1
	fi
fi
for p in $found; do echo "$p" >>"$state/installed"; done
echo "Installed:$found"; echo "Complete!"
`

// standinNeedsRestarting is dnf-utils' needs-restarting -r: exit 1 and
// its message when a reboot is needed, 0 otherwise.
const standinNeedsRestarting = standinLog + `
[ "$1" = -r ] || { echo "needs-restarting: only -r is stood in for" >&2; exit 2; }
if [ -e "$root/var/lib/standin/reboot" ]; then
	echo "Core libraries or services have been updated since boot-up:"
	echo "  * kernel"
	echo "Reboot is required to fully utilize these updates."
	exit 1
fi
echo "No core libraries or services have been updated since boot-up."
echo "Reboot should not be necessary."
`

// standinUpdateCATrust is ca-certificates' update-ca-trust (extract, its
// default): the anchors in the two source directories p11-kit's trust
// module reads on RHEL (/etc/pki/ca-trust/source, /usr/share/pki/
// ca-trust-source; a file's certificates under anchors/ are trusted),
// each parsed by openssl (a file that is not PEM certificates fails, as
// p11-kit would skip it with an error), written to the extracted bundle
// /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem. It needs the
// extracted directories, as the real one does.
const standinUpdateCATrust = standinLog + `
case ${1:-extract} in
extract) ;;
*) echo "Error: unknown command: '$1'" >&2; exit 1 ;;
esac
out=$root/etc/pki/ca-trust/extracted/pem
[ -d "$out" ] || { echo "p11-kit: couldn't create file: $out/tls-ca-bundle.pem: No such file or directory" >&2; exit 1; }
tmp=$out/.tls-ca-bundle.pem.tmp
: >"$tmp"
for d in "$root/etc/pki/ca-trust/source/anchors" "$root/usr/share/pki/ca-trust-source/anchors"; do
	for f in "$d"/*; do
		[ -f "$f" ] || continue
		echo "${f#$root}" >>"$log/$n.anchors"
		openssl crl2pkcs7 -nocrl -certfile "$f" 2>/dev/null | openssl pkcs7 -print_certs 2>/dev/null | grep -v '^subject=\|^issuer=\|^$' >>"$tmp" || {
			echo "p11-kit: ${f#$root}: invalid PEM certificate" >&2; rm -f "$tmp"; exit 1; }
	done
done
mv "$tmp" "$out/tls-ca-bundle.pem"
`

// standinCall is one recorded call of a stand-in.
type standinCall struct {
	Argv  []string
	Stdin string
	Env   map[string]string
	Repos []string // the .repo files it saw, "path size"
	Files []string // anchors update-ca-trust read
}

// standinEnv is distroEnv with the real SystemExec and the stand-ins in
// the root's /usr/bin, on PATH first.
func standinEnv(t *testing.T, distro, cfg string, tools ...string) *coretest.Env {
	t.Helper()
	te := coretest.DistroEnv(t, distro, cfg)
	scripts := map[string]string{"dnf": standinDnf, "yum": standinDnf, "needs-restarting": standinNeedsRestarting, "update-ca-trust": standinUpdateCATrust}
	for _, name := range tools {
		s, ok := scripts[name]
		if !ok {
			t.Fatalf("no stand-in %s", name)
		}
		te.Write("/usr/bin/"+name, s, 0o755)
	}
	if err := te.Root.MkdirAll("/var/lib/standin", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", filepath.Join(te.Dir, "usr/bin")+":"+core.DefaultPath)
	te.Env.Exec = core.SystemExec{}
	return te
}

// standinCalls reads the recorded calls in order.
func standinCalls(te *coretest.Env) []standinCall {
	te.T.Helper()
	dir := filepath.Join(te.Dir, "standin")
	argvs, _ := filepath.Glob(filepath.Join(dir, "*.argv"))
	sort.Strings(argvs)
	var out []standinCall
	for _, a := range argvs {
		base := strings.TrimSuffix(a, ".argv")
		read := func(ext string) string {
			b, _ := os.ReadFile(base + ext)
			return string(b)
		}
		c := standinCall{Argv: strings.Split(strings.TrimSuffix(read(".argv"), "\x00"), "\x00"), Stdin: read(".stdin"), Env: map[string]string{}}
		for _, l := range strings.Split(read(".env"), "\n") {
			if k, v, ok := strings.Cut(l, "="); ok {
				c.Env[k] = v
			}
		}
		c.Repos = nonEmpty(strings.Split(read(".repos"), "\n"))
		c.Files = nonEmpty(strings.Split(read(".anchors"), "\n"))
		out = append(out, c)
	}
	return out
}

func nonEmpty(l []string) []string {
	var out []string
	for _, s := range l {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

func argvs(calls []standinCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, strings.Join(c.Argv, " "))
	}
	return out
}

// TestStandinPackagesDnf: package_update_upgrade_install on a dnf root
// with SystemExec: makecache, upgrade, install, each with -y (the stand-in
// aborts at the prompt without it, as dnf does with no terminal), no
// stdin, nothing asked of the environment, the repositories
// yum_add_repo wrote already there; a kernel upgrade makes
// needs-restarting -r exit 1, which asks the runner for a reboot.
func TestStandinPackagesDnf(t *testing.T) {
	te := standinEnv(t, "rocky", "yum_repos: {corp: {baseurl: 'http://mirror.corp/el9/$basearch', name: Corp}}\npackage_update: true\npackage_upgrade: true\npackage_reboot_if_required: true\npackages: [pwgen, [libfoo, 1.2-3]]\n", "dnf", "needs-restarting")
	te.Write("/var/lib/standin/available", "pwgen\nlibfoo-1.2-3\n", 0o644)
	te.Write("/var/lib/standin/updates", "kernel-5.14.0-362.el9.x86_64\n", 0o644)
	if err := te.RunFunc(repos.YumAddRepo); err != nil {
		t.Fatal(err)
	}
	err := te.RunFunc(repos.PackageUpdateUpgradeInstall)
	var inc *core.Incomplete
	if !errors.As(err, &inc) || !inc.Reboot || inc.Err != nil {
		t.Fatalf("want a reboot request and no failure, got %v", err)
	}
	calls := standinCalls(te)
	want := []string{"dnf -y makecache", "dnf -y upgrade", "dnf -y install pwgen libfoo-1.2-3", "needs-restarting -r"}
	if got := argvs(calls); !reflect.DeepEqual(got, want) {
		t.Fatalf("calls:\n got %q\nwant %q", got, want)
	}
	for _, c := range calls {
		if c.Stdin != "" {
			t.Errorf("%s: stdin %q", c.Argv, c.Stdin)
		}
		if c.Argv[0] == "dnf" && !reflect.DeepEqual(c.Repos, []string{"/etc/yum.repos.d/corp.repo " + size(t, te, "/etc/yum.repos.d/corp.repo")}) {
			t.Errorf("%s saw repositories %q", c.Argv, c.Repos)
		}
		// The module adds nothing to the environment it runs in (apt's
		// DEBIAN_FRONTEND is apt's only): -y is how dnf is kept from
		// asking.
		for k, v := range c.Env {
			if own, ok := os.LookupEnv(k); (!ok || own != v) && k != "PWD" && k != "SHLVL" && k != "_" && k != "OLDPWD" {
				t.Errorf("%s: environment %s=%q added", c.Argv, k, v)
			}
		}
	}
	if got := te.Read("/var/lib/standin/installed"); got != "pwgen\nlibfoo-1.2-3\n" {
		t.Errorf("installed %q", got)
	}
	for _, w := range []string{"Metadata cache created.", "Upgraded:", "Complete!"} {
		if !strings.Contains(te.OutBuf.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, te.OutBuf.String())
		}
	}
	if !te.Root.Exists(te.UpdateSourcesSem()) {
		t.Error("the refresh is not marked done")
	}
}

func size(t *testing.T, te *coretest.Env, p string) string {
	t.Helper()
	fi, err := te.Root.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(fi.Size(), 10)
}

// TestStandinPackagesFailures: a package the repositories lack fails the
// module with dnf's own error line; without a reboot marker
// needs-restarting -r exits 0 and no reboot is asked for. yum (a root
// without dnf, as EL7's) is run with -t -y, and a package it lacks is
// only its message.
func TestStandinPackagesFailures(t *testing.T) {
	te := standinEnv(t, "rocky", "package_reboot_if_required: true\npackages: [pwgen, nosuchpkg]\n", "dnf", "needs-restarting")
	te.Write("/var/lib/standin/available", "pwgen\n", 0o644)
	err := te.RunFunc(repos.PackageUpdateUpgradeInstall)
	if err == nil || !strings.Contains(err.Error(), "Error: Unable to find a match: nosuchpkg") || !strings.Contains(err.Error(), "exit status 1") {
		t.Fatalf("error %v, want dnf's line and status", err)
	}
	var inc *core.Incomplete
	if errors.As(err, &inc) {
		t.Errorf("reboot asked for: %v", err)
	}
	if got := argvs(standinCalls(te)); !reflect.DeepEqual(got, []string{"dnf -y makecache", "dnf -y install pwgen nosuchpkg", "needs-restarting -r"}) {
		t.Errorf("calls %q", got)
	}

	te = standinEnv(t, "rocky", "package_upgrade: true\npackages: [pwgen, [libfoo, '1.2']]\n", "yum")
	te.Write("/var/lib/standin/available", "pwgen\n", 0o644)
	// EL7's yum installs what it finds and exits 0 ("No package ...
	// available."), as cloud-init's -t asks: the module, like
	// cloud-init's, reports no failure.
	if err := te.RunFunc(repos.PackageUpdateUpgradeInstall); err != nil {
		t.Errorf("yum: error %v", err)
	}
	if got := argvs(standinCalls(te)); !reflect.DeepEqual(got, []string{"yum -t -y makecache", "yum -t -y upgrade", "yum -t -y install pwgen libfoo-1.2"}) {
		t.Errorf("yum calls %q", got)
	}
	if !strings.Contains(te.OutBuf.String(), "No package libfoo-1.2 available.") {
		t.Errorf("yum output %q", te.OutBuf.String())
	}
}

// dnfRepos is what the real dnf (libdnf's repository parser, through
// dnf's Python API) reads from the .repo files in dir: id, name, baseurl
// ($basearch as x86_64), enabled, gpgcheck, gpgkey, priority, and the
// errors and warnings it logs.
func dnfRepos(t *testing.T, root, dir string) (map[string]map[string]any, string) {
	t.Helper()
	py := "/usr/bin/python3"
	if exec.Command(py, "-c", "import dnf").Run() != nil {
		t.Fatal("dnf's Python API is not installed: `make deps` installs it (Debian package dnf)")
	}
	script := `import dnf, json, logging, sys, io
log = io.StringIO()
h = logging.StreamHandler(log)
for n in ("dnf", "libdnf"):
    logging.getLogger(n).addHandler(h)
b = dnf.Base()
b.conf.installroot = sys.argv[1]
b.conf.reposdir = [sys.argv[2]]
b.conf.substitutions["releasever"] = "9"
b.conf.substitutions["basearch"] = "x86_64"
b.read_all_repos()
out = {}
for r in b.repos.all():
    out[r.id] = {"name": r.name, "baseurl": list(r.baseurl), "enabled": bool(r.enabled), "gpgcheck": bool(r.gpgcheck),
                 "gpgkey": list(r.gpgkey), "priority": r.priority, "mirrorlist": r.mirrorlist or "", "metalink": r.metalink or ""}
json.dump({"repos": out, "log": log.getvalue()}, sys.stdout)
`
	cmd := exec.Command(py, "-c", script, root, dir)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	o, err := cmd.Output()
	if err != nil {
		t.Fatalf("dnf reading %s: %v\n%s", dir, err, stderr.String())
	}
	var res struct {
		Repos map[string]map[string]any
		Log   string
	}
	if err := json.Unmarshal(o, &res); err != nil {
		t.Fatalf("dnf's output %q: %v", o, err)
	}
	return res.Repos, res.Log + stderr.String()
}

// TestStandinYumReposRealDnf: the .repo files yum_add_repo writes are
// read by the real dnf as meant, and as it reads cloud-init 22.4's for
// the same config (cc_yum_add_repo._format_repository_config, the
// oracle); `dnf repolist --all` in the root lists them without a word on
// stderr.
func TestStandinYumReposRealDnf(t *testing.T) {
	const cfg = `yum_repos:
  corp el9:
    name: Corp EL9 "main"
    baseurl: [http://mirror.corp/el9/$basearch, http://mirror2.corp/el9/$basearch]
    enabled: true
    gpgcheck: false
    gpgkey: [http://mirror.corp/k1, http://mirror.corp/k2]
    priority: 10
  epel-x:
    name: EPEL X
    metalink: https://mirrors.example/metalink?repo=epel-9&arch=$basearch
    gpgcheck: true
    enabled: false
`
	te := standinEnv(t, "rocky", cfg)
	if err := te.RunFunc(repos.YumAddRepo); err != nil {
		t.Fatal(err)
	}
	got, log := dnfRepos(t, te.Dir, filepath.Join(te.Dir, "etc/yum.repos.d"))
	if log != "" {
		t.Errorf("dnf logs reading our .repo files:\n%s", log)
	}
	want := map[string]map[string]any{
		"corp-el9": {"name": `Corp EL9 "main"`, "baseurl": []any{"http://mirror.corp/el9/x86_64", "http://mirror2.corp/el9/x86_64"}, "enabled": true, "gpgcheck": false,
			"gpgkey": []any{"http://mirror.corp/k1", "http://mirror.corp/k2"}, "priority": float64(10), "mirrorlist": "", "metalink": ""},
		"epel-x": {"name": "EPEL X", "baseurl": []any{}, "enabled": false, "gpgcheck": true, "gpgkey": []any{}, "priority": float64(99), "mirrorlist": "",
			"metalink": "https://mirrors.example/metalink?repo=epel-9&arch=x86_64"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dnf reads:\n got %v\nwant %v", got, want)
	}

	// cloud-init's files for the same entries, read by the same dnf.
	var ci map[string]string
	coretest.CiOracle(t, `from cloudinit.config import cc_yum_add_repo as y
out = {}
for rid, opts in json.load(sys.stdin).items():
    cid = y._canonicalize_id(rid)
    n = {}
    for k, v in opts.items():
        k = k.lower().strip().replace("-", "_")
        if k: n[k] = v
    out[cid] = y._format_repository_config(cid, n)
print(json.dumps(out))`, te.Cfg["yum_repos"], &ci)
	cidir := filepath.Join(t.TempDir(), "yum.repos.d")
	if err := os.MkdirAll(cidir, 0o755); err != nil {
		t.Fatal(err)
	}
	for id, text := range ci {
		if err := os.WriteFile(filepath.Join(cidir, id+".repo"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ciGot, _ := dnfRepos(t, te.Dir, cidir)
	if !reflect.DeepEqual(got, ciGot) {
		t.Errorf("dnf reads ours and cloud-init's differently:\n ours %v\n cloud-init's %v", got, ciGot)
	}

	dnf, err := exec.LookPath("dnf")
	if err != nil {
		for _, p := range []string{"/usr/bin/dnf", "/bin/dnf"} {
			if _, err := os.Stat(p); err == nil {
				dnf = p
			}
		}
	}
	if dnf == "" || strings.HasPrefix(dnf, te.Dir) {
		t.Fatal("dnf is not installed: `make deps` installs it (Debian package dnf)")
	}
	cmd := exec.Command(dnf, "--installroot="+te.Dir, "--setopt=reposdir="+filepath.Join(te.Dir, "etc/yum.repos.d"), "--releasever=9", "-C", "repolist", "--all")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Errorf("dnf repolist --all: %v\n%s", err, stderr.String())
	}
	for _, id := range []string{"corp-el9", "epel-x"} {
		if !strings.Contains(stdout.String(), id) {
			t.Errorf("dnf repolist does not list %s:\n%s", id, stdout.String())
		}
	}
}

// testCA is a self-signed CA certificate, PEM.
func testCA(t *testing.T, cn string) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// bundleCNs are the subjects of the certificates in a PEM bundle.
func bundleCNs(t *testing.T, data string) []string {
	t.Helper()
	var out []string
	rest := []byte(data)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c.Subject.CommonName)
	}
	sort.Strings(out)
	return out
}

// TestStandinCACertsRHEL: ca_certs on a RHEL root with SystemExec: the
// certificates go where update-ca-trust reads anchors
// (/usr/share/pki/ca-trust-source/anchors, beside /etc/pki/ca-trust/
// source/anchors), update-ca-trust runs once, without arguments or
// stdin, and its bundle has them; with remove_defaults the anchors that
// were there are gone from both source directories and from the bundle,
// and the extracted directories update-ca-trust writes to are kept.
func TestStandinCACertsRHEL(t *testing.T) {
	a, b := testCA(t, "earlyinit test A"), testCA(t, "earlyinit test B")
	cfg := "ca_certs:\n  trusted:\n    - |\n      " + strings.ReplaceAll(strings.TrimSpace(a), "\n", "\n      ") + "\n    - |\n      " + strings.ReplaceAll(strings.TrimSpace(b), "\n", "\n      ") + "\n"
	for _, remove := range []bool{false, true} {
		c := cfg
		if remove {
			c += "  remove_defaults: true\n"
		}
		te := standinEnv(t, "rocky", c, "update-ca-trust")
		te.Write("/etc/pki/ca-trust/source/anchors/local.pem", testCA(t, "local"), 0o644)
		te.Write("/usr/share/pki/ca-trust-source/anchors/vendor.pem", testCA(t, "vendor"), 0o644)
		te.Write("/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", "", 0o644)
		if err := te.RunFunc(system.CACerts); err != nil {
			t.Fatalf("remove_defaults %v: %v", remove, err)
		}
		calls := standinCalls(te)
		if got := argvs(calls); !reflect.DeepEqual(got, []string{"update-ca-trust"}) {
			t.Fatalf("calls %q", got)
		}
		if calls[0].Stdin != "" {
			t.Errorf("stdin %q", calls[0].Stdin)
		}
		wantFiles := []string{"/usr/share/pki/ca-trust-source/anchors/cloud-init-ca-certs.crt"}
		wantCNs := []string{"earlyinit test A", "earlyinit test B"}
		if !remove {
			wantFiles = []string{"/etc/pki/ca-trust/source/anchors/local.pem", "/usr/share/pki/ca-trust-source/anchors/cloud-init-ca-certs.crt", "/usr/share/pki/ca-trust-source/anchors/vendor.pem"}
			wantCNs = []string{"earlyinit test A", "earlyinit test B", "local", "vendor"}
		}
		if !reflect.DeepEqual(calls[0].Files, wantFiles) {
			t.Errorf("remove_defaults %v: update-ca-trust read %q, want %q", remove, calls[0].Files, wantFiles)
		}
		if got := bundleCNs(t, te.Read("/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem")); !reflect.DeepEqual(got, wantCNs) {
			t.Errorf("remove_defaults %v: bundle has %q, want %q", remove, got, wantCNs)
		}
	}
}
