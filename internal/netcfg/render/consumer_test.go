package render_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/network"
	"github.com/earlyinit/earlyinit/internal/roottest"
)

// The consumer tests hand every renderer's output to the program that
// reads it on a real system, from Debian's packages, and fail on anything
// it refuses or warns about:
//
//	netplan          netplan generate --root-dir (netplan.io), and then
//	                 the networkd files it generated, as networkd's are
//	networkd         systemd-networkd itself (systemd), run for a moment
//	                 in a network and mount namespace of its own on the
//	                 files, with veth links standing in for the NICs
//	eni              ifup --no-act on every interface of the file
//	                 (ifupdown), with a state directory of the test's
//	network-manager  libnm's keyfile reader, normalisation and
//	                 verification (gir1.2-nm-1.0; testdata/nmkeyfile.py):
//	                 NetworkManager has no offline checker of its own
//	sysconfig        Debian has no initscripts or ifcfg-rh reader:
//	                 bash sources the files, NetworkManager's ifcfg-rh
//	                 rules (ported in ifcfgrh_test.go) read them, and ip
//	                 runs what network-scripts would, in a network
//	                 namespace (sysconfig_consumer_test.go)
//
// The outputs checked are every golden file (testdata/golden), every
// corpus case of the differential test (testdata/corpus), every fidelity
// case and internal/netcfg's own examples (../testdata), each rendered by every
// renderer. Like the differential test these fail, never skip, when a
// program is missing: `make deps` installs them all.

// consumerCase is one rendered configuration: where it comes from and the
// files of one renderer.
type consumerCase struct {
	Name  string // golden/full, corpus/v1-bond, fidelity/<name>, examples/v1_all.yaml
	Files []render.File
}

// goldenFiles splits a golden file (render_test.go's dump: "=== PATH MODE"
// lines, each followed by the file) into its files.
func goldenFiles(t *testing.T, path string) []render.File {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var files []render.File
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "=== /"); ok {
			p, mode, ok := strings.Cut(strings.TrimSpace(rest), " ")
			m, err := strconv.ParseUint(mode, 8, 32)
			if !ok || err != nil {
				t.Fatalf("%s: bad header %q", path, l)
			}
			files = append(files, render.File{Path: "/" + p, Mode: os.FileMode(m)})
			continue
		}
		if len(files) == 0 {
			if l != "" {
				t.Fatalf("%s: text before the first === line", path)
			}
			continue
		}
		f := &files[len(files)-1]
		f.Data = append(f.Data, l...)
	}
	return files
}

// consumerInput is a network configuration to render with every renderer.
type consumerInput struct {
	name, kind string
	data       []byte
	macs       map[string]string
}

// consumerIssue27 are the inputs whose outputs a consumer refused in issue
// 27, by name.
var consumerIssue27 = map[string]string{
	"scope-link-via": `version: 2
ethernets:
  eth0:
    match: {macaddress: "52:54:00:00:00:01"}
    set-name: eth0
    addresses: [10.0.0.2/24, "2001:db8::2/64"]
    routes:
      - {to: 10.8.0.0/16, via: 10.0.0.1, scope: link}
      - {to: 10.7.0.0/16, scope: link}
      - {to: "2001:db8:1::5", via: "2001:db8::1", scope: link}
`,
	"host-dns-only": `version: 1
config:
  - {type: physical, name: eth0, mac_address: "52:54:00:00:00:01"}
  - {type: nameserver, address: [1.1.1.1], search: [example.com]}
`,
	"bridge-port-defined-later": `version: 2
ethernets:
  eth0: {match: {macaddress: "52:54:00:00:00:01"}, set-name: eth0}
  eth1: {match: {macaddress: "52:54:00:00:00:02"}, set-name: eth1}
vlans:
  vlan10: {id: 10, link: eth0}
bridges:
  br0:
    interfaces: [vlan10, eth1]
    parameters: {stp: false, path-cost: {eth1: 50, vlan10: 60}, port-priority: {eth1: 3}}
    addresses: [10.0.0.2/24]
`,
	"dhcp-overrides-pair": `version: 2
ethernets:
  eth0:
    match: {macaddress: "52:54:00:00:00:01"}
    set-name: eth0
    dhcp4: true
    dhcp6: true
    dhcp4-overrides: {route-metric: 100, use-dns: false}
    dhcp6-overrides: {route-metric: 200, use-domains: true}
`,
	"manual-dns": `version: 2
ethernets:
  eth0:
    match: {macaddress: "52:54:00:00:00:01"}
    set-name: eth0
    nameservers: {addresses: [10.0.0.53], search: [corp.example]}
  eth1:
    match: {macaddress: "52:54:00:00:00:02"}
    set-name: eth1
    dhcp4: true
`,
}

// consumerInputs are the corpus, the fidelity cases, issue 27's inputs and
// internal/netcfg's examples.
func consumerInputs(t *testing.T) []consumerInput {
	t.Helper()
	var in []consumerInput
	dirs, err := filepath.Glob("testdata/corpus/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, d := range dirs {
		for file, kind := range map[string]string{"network_data.json": "network_data.json", "network.yaml": "yaml", "interfaces": "eni"} {
			data, err := os.ReadFile(filepath.Join(d, file))
			if err != nil {
				continue
			}
			m := map[string]string{}
			if b, err := os.ReadFile(filepath.Join(d, "macs")); err == nil {
				for _, l := range strings.Fields(string(b)) {
					name, mac, _ := strings.Cut(l, ",")
					m[strings.ToLower(mac)] = name
				}
			}
			in = append(in, consumerInput{"corpus/" + filepath.Base(d), kind, data, m})
		}
	}
	for _, tc := range fidelityCases() {
		in = append(in, consumerInput{"fidelity/" + tc.name, tc.kind, []byte(tc.in), tc.macs})
	}
	for name, doc := range consumerIssue27 {
		in = append(in, consumerInput{"issue27/" + name, "yaml", []byte(doc), nil})
	}
	// internal/netcfg's examples, with the NIC names its tests give them.
	for _, e := range []struct {
		file, kind string
		macs       map[string]string
	}{
		{"v1_all.yaml", "yaml", nil},
		{"v2_all.yaml", "yaml", nil},
		{"interfaces", "eni", nil},
		{"network_data_full.json", "network_data.json", macs("eth0", "52:54:00:aa:00:01", "eth1", "52:54:00:aa:00:02")},
	} {
		data, err := os.ReadFile(filepath.Join("..", "testdata", e.file))
		if err != nil {
			t.Fatal(err)
		}
		in = append(in, consumerInput{"examples/" + e.file, e.kind, data, e.macs})
	}
	sort.Slice(in, func(i, j int) bool { return in[i].name < in[j].name })
	return in
}

// consumerCases returns every output of renderer r to check: the golden
// files and the inputs rendered.
func consumerCases(t *testing.T, r string) []consumerCase {
	t.Helper()
	var out []consumerCase
	golden, err := filepath.Glob(filepath.Join("testdata", "golden", "*", r))
	if err != nil || len(golden) == 0 {
		t.Fatalf("no golden files for %s: %v", r, err)
	}
	for _, g := range golden {
		out = append(out, consumerCase{"golden/" + filepath.Base(filepath.Dir(g)), goldenFiles(t, g)})
	}
	for _, in := range consumerInputs(t) {
		res, err := network.Build(network.Input{Format: in.kind, Data: in.data, MACs: in.macs, Renderer: r})
		if err != nil {
			t.Fatalf("%s: %s: %v", in.name, r, err)
		}
		out = append(out, consumerCase{in.name, res.Files})
	}
	return out
}

// tool returns the path of a consumer program, failing the test (never
// skipping) when it is missing. Debian keeps several in /usr/sbin or
// /usr/lib, which a user's PATH may lack.
func tool(t *testing.T, name, debPkg string, dirs ...string) string {
	t.Helper()
	if filepath.IsAbs(name) {
		if _, err := os.Stat(name); err == nil {
			return name
		}
	} else if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range dirs {
		p := filepath.Join(d, filepath.Base(name))
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Fatalf("%s is not installed: `make deps` installs it (Debian package %s)", name, debPkg)
	return ""
}

// writeRoot writes files under a new temporary root.
func writeRoot(t *testing.T, files []render.File) string {
	t.Helper()
	dir := t.TempDir()
	if err := render.WriteDir(dir, files); err != nil {
		t.Fatal(err)
	}
	return dir
}

func dumpFiles(files []render.File) string {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "--- %s\n%s", f.Path, f.Data)
	}
	return b.String()
}

// forEach runs check on every case, n at a time, each as a subtest named
// after the case. The subtests are run from goroutines of its own rather
// than as parallel tests: most of a check is waiting for a program, and
// go test would run only GOMAXPROCS of them at once.
func forEach(t *testing.T, cases []consumerCase, n int, check func(t *testing.T, c consumerCase)) {
	t.Helper()
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			t.Run(c.Name, func(t *testing.T) {
				check(t, c)
				if t.Failed() {
					t.Logf("files:\n%s", dumpFiles(c.Files))
				}
			})
		}()
	}
	wg.Wait()
}

// netplanWarnings are the warnings netplan generate may give for an
// input whose own content earns them, by case, with the reason. netplan
// still writes the files; anything else it says fails the test.
var netplanWarnings = map[string]struct{ text, reason string }{
	"examples/v2_all.yaml": {"Conflicting default route declarations for IPv6", "the input declares an IPv6 default route on eno1 (gateway6) and on bond0 (to: ::/0)"},
}

// TestConsumerNetplan: netplan generate reads every netplan output without
// an error or a warning, and networkd takes the files it generates.
// `netplan generate` (a Python command) only runs netplan's generator with
// the same arguments (cli/commands/generate.py): the test runs the
// generator itself, which takes a tenth of the time.
func TestConsumerNetplan(t *testing.T) {
	generate := tool(t, "/usr/lib/netplan/generate", "netplan.io", "/lib/netplan")
	nd := newNetworkd(t)
	forEach(t, consumerCases(t, "netplan"), 8, func(t *testing.T, c consumerCase) {
		root := writeRoot(t, c.Files)
		out, err := exec.Command(generate, "--root-dir", root).CombinedOutput()
		if err != nil {
			t.Fatalf("netplan generate refuses: %v\n%s", err, out)
		}
		if msg := strings.TrimSpace(string(out)); msg != "" {
			if w, ok := netplanWarnings[c.Name]; ok && strings.Contains(msg, w.text) {
				t.Logf("netplan generate warns, as the input earns: %s\n%s", w.reason, msg)
			} else {
				t.Errorf("netplan generate warns:\n%s", msg)
			}
		}
		var generated []render.File
		dir := filepath.Join(root, "run", "systemd", "network")
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if strings.HasSuffix(e.Name(), ".network") || strings.HasSuffix(e.Name(), ".netdev") {
				data, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				generated = append(generated, render.File{Path: render.NetworkdDir + "/" + e.Name(), Data: data, Mode: 0o644})
			}
		}
		if len(generated) == 0 {
			return // nothing for networkd (every interface manual, say)
		}
		if err := nd.check(t, generated); err != nil {
			t.Errorf("networkd on what netplan generated: %v\n%s", err, dumpFiles(generated))
		}
	})
}

// TestConsumerENI: ifup --no-act brings up every interface of every eni
// output without an error.
func TestConsumerENI(t *testing.T) {
	ifup := tool(t, "ifup", "ifupdown", "/usr/sbin", "/sbin")
	forEach(t, consumerCases(t, "eni"), 4, func(t *testing.T, c consumerCase) {
		var file []byte
		for _, f := range c.Files {
			if f.Path == render.ENIPath {
				file = f.Data
			}
		}
		if file == nil {
			t.Fatalf("no %s", render.ENIPath)
		}
		dir := t.TempDir()
		p := filepath.Join(dir, "interfaces")
		if err := os.WriteFile(p, file, 0o644); err != nil {
			t.Fatal(err)
		}
		state := filepath.Join(dir, "state")
		if err := os.Mkdir(state, 0o755); err != nil {
			t.Fatal(err)
		}
		names := eniIfaces(file)
		args := append([]string{"--no-act", "--no-mappings", "--force", "-i", p, "--state-dir", state}, names...)
		cmd := exec.Command(ifup, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if bad := eniComplaints(stderr.String()); err != nil || len(bad) > 0 {
			t.Fatalf("ifup --no-act %s: %v\n%s\n%s", strings.Join(names, " "), err, strings.Join(bad, "\n"), stderr.String())
		}
	})
}

// eniIfaces are the interfaces a file has stanzas for, in order.
func eniIfaces(file []byte) []string {
	var out []string
	seen := map[string]bool{}
	for _, l := range strings.Split(string(file), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "iface" && !seen[f[1]] {
			seen[f[1]] = true
			out = append(out, f[1])
		}
	}
	return out
}

// eniComplaints are ifup's own messages ("ifup: FILE:3: misplaced option",
// "ifup: missing required variable: address"): --no-act prints nothing else
// but the commands it would run.
func eniComplaints(stderr string) []string {
	var bad []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "ifup:") {
			bad = append(bad, l)
		}
	}
	return bad
}

// TestConsumerNetworkManager: libnm reads, normalises and verifies every
// keyfile of every network-manager output, without a warning.
func TestConsumerNetworkManager(t *testing.T) {
	python := tool(t, "/usr/bin/python3", "python3")
	dir := t.TempDir()
	var paths []string
	where := map[string]consumerCase{}
	for i, c := range consumerCases(t, "network-manager") {
		for _, f := range c.Files {
			if !strings.HasPrefix(f.Path, render.NMDir+"/") {
				continue
			}
			// NetworkManager ignores a keyfile others can read or write.
			if f.Mode.Perm() != 0o600 {
				t.Errorf("%s: %s: mode %04o, NetworkManager wants 0600", c.Name, f.Path, f.Mode.Perm())
			}
			p := filepath.Join(dir, strconv.Itoa(i), filepath.Base(f.Path))
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o600); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, p)
			where[p] = c
		}
	}
	cmd := exec.Command(python, append([]string{"testdata/nmkeyfile.py"}, paths...)...)
	out, err := cmd.CombinedOutput()
	if err == nil && len(out) == 0 {
		return
	}
	if strings.Contains(string(out), "Namespace NM not available") || strings.Contains(string(out), "No module named 'gi'") {
		t.Fatalf("libnm's introspection data is not installed: `make deps` installs it (Debian packages gir1.2-nm-1.0, python3-gi)\n%s", out)
	}
	bad := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, msg, _ := strings.Cut(l, ": ")
		if c, ok := where[p]; ok {
			bad[c.Name] = append(bad[c.Name], filepath.Base(p)+": "+msg)
		} else {
			bad["?"] = append(bad["?"], l)
		}
	}
	for name, msgs := range bad {
		t.Errorf("%s: NetworkManager's keyfile reader refuses:\n  %s", name, strings.Join(msgs, "\n  "))
	}
	if err == nil {
		t.Errorf("nmkeyfile.py printed problems but exited 0")
	}
}

// TestConsumerNetworkd: systemd-networkd reads every networkd output
// without a warning about our files, and fails no link it configures.
func TestConsumerNetworkd(t *testing.T) {
	nd := newNetworkd(t)
	forEach(t, consumerCases(t, "networkd"), 8, func(t *testing.T, c consumerCase) {
		if err := nd.check(t, c.Files); err != nil {
			t.Fatal(err)
		}
	})
}

// networkd runs systemd-networkd on a set of files, in a network and mount
// namespace of its own (unshare -m -n) so nothing of this machine changes:
// a private /run, this namespace's /sys (read-only, which tells networkd
// there is no udev to wait for), the files bind-mounted on
// /etc/systemd/network, and a veth link for every NIC a .network file
// matches, with its name and MAC, so that networkd configures it.
type networkd struct {
	bin, unshare, ip string
}

func newNetworkd(t *testing.T) *networkd {
	t.Helper()
	roottest.Require(t) // namespaces and mounts
	return &networkd{
		bin:     tool(t, "/lib/systemd/systemd-networkd", "systemd", "/usr/lib/systemd"),
		unshare: tool(t, "unshare", "util-linux", "/usr/bin"),
		ip:      tool(t, "ip", "iproute2", "/usr/sbin", "/sbin", "/bin"),
	}
}

// networkdScript sets the namespace up and becomes networkd. Arguments:
// the directory of the files, then "name mac" pairs of links to create
// ("-" for no MAC), then "--" and the netdev kinds to probe.
const networkdScript = `set -eu
dir=$1; shift
mount -t tmpfs -o mode=0755 tmpfs /run
mkdir -p /run/systemd
mount -t sysfs -o ro sysfs /sys
mount --bind "$dir" /etc/systemd/network
ip link set lo up
i=0
while [ "$1" != -- ]; do
	i=$((i+1))
	ip link add "$1" type veth peer name "ckpeer$i"
	# A MAC the kernel refuses (a multicast one) leaves the link unmatched.
	[ "$2" = - ] || ip link set dev "$1" address "$2" || echo "kernel: no MAC $2"
	ip link set "ckpeer$i" up
	shift 2
done
shift
ip link add ckprobe0 type veth peer name ckprobe1
for k in "$@"; do
	case $k in
	vlan) args="link ckprobe0 type vlan id 2" ;;
	*) args="type $k" ;;
	esac
	if ip link add ckprobe $args 2>/dev/null; then ip link del ckprobe; else echo "kernel: no $k"; fi
done
ip link del ckprobe0
echo "networkd: start"
exec env SYSTEMD_LOG_TARGET=console SYSTEMD_LOG_LEVEL=info SYSTEMD_LOG_COLOR=0 SYSTEMD_LOG_LOCATION=0 "$NETWORKD"
`

// ndLink is a NIC to stand in for: its name and MAC ("-" for none).
type ndLink struct{ name, mac string }

// ndLinks reads the NICs the .network files match (those without a
// .netdev of the same name) and the kinds of the netdevs.
func ndLinks(files []render.File) (links []ndLink, netdevs map[string]string) {
	netdevs = map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".netdev") {
			name, kind := "", ""
			for _, l := range strings.Split(string(f.Data), "\n") {
				if v, ok := strings.CutPrefix(l, "Name="); ok {
					name = v
				}
				if v, ok := strings.CutPrefix(l, "Kind="); ok {
					kind = v
				}
			}
			netdevs[name] = kind
		}
	}
	seen := map[string]bool{}
	for _, f := range files {
		if !strings.HasSuffix(f.Path, ".network") {
			continue
		}
		var name, mac string
		section := ""
		for _, l := range strings.Split(string(f.Data), "\n") {
			if strings.HasPrefix(l, "[") {
				section = l
				continue
			}
			if section != "[Match]" {
				continue
			}
			if v, ok := strings.CutPrefix(l, "Name="); ok {
				name = strings.Fields(v)[0]
			}
			if v, ok := strings.CutPrefix(l, "MACAddress="); ok {
				mac = strings.Fields(v)[0]
			}
		}
		if _, ok := netdevs[name]; ok && name != "" {
			continue
		}
		switch {
		case strings.ContainsAny(name, "[]"):
			continue
		case strings.ContainsAny(name, "*?"):
			// A glob: a NIC it matches.
			name = strings.NewReplacer("*", "x0", "?", "x").Replace(name)
		case name == "" && mac != "":
			name = fmt.Sprintf("cknic%d", len(links))
		case name == "":
			continue
		}
		if len(mac) != len("00:00:00:00:00:00") {
			mac = "-" // InfiniBand's is no Ethernet MAC
		}
		if name == "lo" || seen[name] || len(name) > 15 {
			continue
		}
		seen[name] = true
		links = append(links, ndLink{name, mac})
	}
	return links, netdevs
}

// ndFileLine is a networkd log line about one of the files:
// "/etc/systemd/network/10-cloud-init-eth0.network:7: Unknown key ...".
var ndFileLine = regexp.MustCompile(`/etc/systemd/network/`)

// check runs networkd on files and returns what it refused, if anything.
func (n *networkd) check(t *testing.T, files []render.File) error {
	t.Helper()
	dir := t.TempDir()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f.Path)), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links, netdevs := ndLinks(files)
	args := []string{"-m", "-n", "--propagation", "private", "--", "/bin/sh", "-c", networkdScript, "sh", dir}
	for _, l := range links {
		args = append(args, l.name, l.mac)
	}
	args = append(args, "--")
	kinds := map[string]bool{}
	for _, k := range netdevs {
		kinds[k] = true
	}
	for k := range kinds {
		args = append(args, k)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, n.unshare, args...)
	cmd.Env = append(os.Environ(), "NETWORKD="+n.bin, "PATH="+filepath.Dir(n.ip)+":/usr/sbin:/usr/bin:/sbin:/bin")
	var out syncBuf
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// unshare execs the shell, which execs networkd: its pid's /proc root
	// is the namespace's, where the link state files are.
	root := fmt.Sprintf("/proc/%d/root", cmd.Process.Pid)
	start := time.Now()
	var exited error
	settled := false
wait:
	for time.Since(start) < 10*time.Second {
		select {
		case exited = <-done:
			break wait
		case <-time.After(100 * time.Millisecond):
		}
		if !strings.Contains(out.String(), "Enumeration completed") {
			continue
		}
		if ndSettled(root, netdevs, n.missingKinds(out.String()), time.Since(start)) {
			settled = true
			break
		}
	}
	if exited == nil {
		cmd.Process.Kill()
		<-done
	} else if !strings.Contains(out.String(), "networkd: start") {
		return fmt.Errorf("setting the namespace up: %v\n%s", exited, out.String())
	} else {
		return fmt.Errorf("networkd exited: %v\n%s", exited, out.String())
	}
	log := out.String()
	missing := n.missingKinds(log)
	for k := range missing {
		t.Logf("this kernel cannot create a %s: networkd's failure to create one is not checked", k)
	}
	// A link whose VLAN this kernel cannot create fails in networkd
	// ("eth0: Could not create stacked netdev: Unknown device type"):
	// not ours either.
	stackedMissing := map[string]bool{}
	for _, l := range strings.Split(log, "\n") {
		if name, rest, ok := strings.Cut(l, ": "); ok && strings.HasPrefix(rest, "Could not create stacked netdev: Unknown device type") {
			for _, k := range []string{"vlan", "macvlan", "ipvlan", "vxlan"} {
				if missing[k] {
					stackedMissing[name] = true
				}
			}
		}
	}
	var bad []string
	for _, l := range strings.Split(log, "\n") {
		name, _, _ := strings.Cut(l, ":")
		switch {
		case l == "" || strings.HasPrefix(l, "kernel: no ") || l == "networkd: start" || strings.HasPrefix(l, "RTNETLINK answers: "):
		case stackedMissing[name] && (strings.HasSuffix(l, ": Failed") || strings.Contains(l, "Could not create stacked netdev")):
		case ndFileLine.MatchString(l) && !strings.Contains(l, ": Configuring with /etc/systemd/network/"):
			bad = append(bad, l) // anything said of our files is a complaint
		case strings.HasSuffix(l, ": Failed"):
			bad = append(bad, l)
		case strings.Contains(l, "netdev could not be created") || strings.Contains(l, "Could not create"):
			if !missing[netdevs[name]] {
				bad = append(bad, l)
			}
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("networkd refuses:\n  %s\nits log:\n%s", strings.Join(bad, "\n  "), log)
	}
	if !settled {
		t.Logf("networkd had not settled every link after 10 s; its log:\n%s", log)
	}
	return nil
}

// missingKinds are the netdev kinds the script found this kernel cannot
// create.
func (n *networkd) missingKinds(log string) map[string]bool {
	out := map[string]bool{}
	for _, l := range strings.Split(log, "\n") {
		if k, ok := strings.CutPrefix(l, "kernel: no "); ok {
			out[k] = true
		}
	}
	return out
}

// ndSettled tells whether every link networkd manages has reached a final
// state (configured, failed, unmanaged), or is still configuring after 1.5
// s (waiting for DHCP or router advertisements, which never come here),
// and every netdev the kernel can create exists.
func ndSettled(root string, netdevs map[string]string, missing map[string]bool, elapsed time.Duration) bool {
	dir := filepath.Join(root, "run/systemd/netif/links")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return false
		}
		var admin, file string
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "ADMIN_STATE="); ok {
				admin = v
			}
			if v, ok := strings.CutPrefix(sc.Text(), "NETWORK_FILE="); ok {
				file = v
			}
		}
		if file == "" {
			continue
		}
		switch admin {
		case "configured", "failed", "unmanaged", "linger":
		default:
			if elapsed < 1500*time.Millisecond {
				return false
			}
		}
	}
	for name, kind := range netdevs {
		// The namespace's own /sys: the links networkd created.
		if _, err := os.Stat(filepath.Join(root, "sys/class/net", name)); err != nil && !missing[kind] && elapsed < 3*time.Second {
			return false
		}
	}
	return true
}

// syncBuf is a bytes.Buffer safe for a process's output and a reader.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
