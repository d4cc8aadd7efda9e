package render_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/roottest"
)

// The sysconfig renderer's files have two readers on CentOS 7 and EL8,
// neither of which Debian has: initscripts' network-scripts (bash sources
// ifcfg-<name>, ifup-routes hands route-<name> lines to `ip route add`)
// and NetworkManager's ifcfg-rh plugin (its own shell-subset parser,
// shvar.c, and a list of well-known keys). TestConsumerSysconfig reads
// every sysconfig output the other consumer tests check the ways they do:
//
//	bash     every ifcfg-<name>, /etc/sysconfig/network and ADDRESSn-form
//	         route-<name> is sourced by bash (env -i bash, set -a, env
//	         -0): it must say nothing, and every variable must be what
//	         the renderer's quoting means (parsed here too) and nothing
//	         else
//	ifcfg-rh each value unescapes (svUnescape, ifcfgrh_test.go) to what
//	         bash gives; no invalid or duplicate line; every key is one
//	         NetworkManager knows (testdata/sysconfig/nm-well-known-keys)
//	         or initscripts document (testdata/sysconfig/initscripts-keys)
//	         or is in sysconfigKeyAllow with its reason; route files as its
//	         reader parses them (parse_route_line, read_one_ip4_route)
//	ip       what network-scripts would run for the files (ifup-eth's
//	         addresses and default route, ifup-ipv6's, ifup-routes' route
//	         and rule lines in either route- form), run by iproute2 in a
//	         network namespace of the test's own (unshare -n) on veth links
//	         named as the files name them: any command ip refuses fails
//
// No real network-scripts or ifcfg-rh plugin runs: the rules above are
// taken from their sources (initscripts' rhel7-branch and rhel8-branch,
// NetworkManager's main branch).

// sysconfigKeyAllow are keys the renderer writes that neither
// NetworkManager's list nor initscripts' documentation has, with the
// reason they are written all the same.
var sysconfigKeyAllow = map[string]string{
	"PRIO":   "a bridge's priority: network-scripts' ifup-eth reads it (EL7: brctl setbridgeprio, EL8: ip link ... type bridge priority) though sysconfig.txt does not list it; NetworkManager ignores it (BRIDGING_OPTS priority= is its key), as cloud-init writes it",
	"AGEING": "a bridge's ageing time: network-scripts' ifup-eth reads it (EL7: brctl setageing, EL8: ip link ... type bridge ageing_time) though sysconfig.txt does not list it; NetworkManager ignores it, as cloud-init writes it",
}

// sysconfigReaderLosses are problems the checks find that the renderer
// leaves, by a part of the problem's text, with the reason: logged, not
// failed.
var sysconfigReaderLosses = map[string]string{
	"with IPADDR: ifup-eth runs dhclient": "a DHCPv4 interface's static IPv4 addresses: ifcfg-rh adds them to the lease's, network-scripts' ifup-eth runs dhclient instead of adding them (only alias files, ifcfg-<name>:<n>, would reach both; not written, as cloud-init writes none); named in docs/network.md",
}

// routeSVNetworkScripts are the keys of an ADDRESSn-form route- file that
// network-scripts' ifup-routes reads (handle_file); NetworkManager also
// reads METRICn and OPTIONSn, which network-scripts ignores.
var routeSVNetworkScripts = []string{"ADDRESS", "NETMASK", "GATEWAY"}

func TestConsumerSysconfig(t *testing.T) {
	roottest.Require(t) // network namespaces
	sc := newSysconfigChecker(t)
	forEach(t, consumerCases(t, "sysconfig"), 4, func(t *testing.T, c consumerCase) {
	problems:
		for _, p := range sc.check(t, c.Files) {
			for part, why := range sysconfigReaderLosses {
				if strings.Contains(p, part) {
					t.Logf("%s (known: %s)", p, why)
					continue problems
				}
			}
			t.Error(p)
		}
	})
}

type sysconfigChecker struct {
	bash, env, unshare, ip string
	nmKeys, initKeys       *keyList
	bashBase               map[string]bool // what bash defines by itself
}

func newSysconfigChecker(t *testing.T) *sysconfigChecker {
	t.Helper()
	sc := &sysconfigChecker{
		bash:     tool(t, "/bin/bash", "bash", "/usr/bin"),
		env:      tool(t, "env", "coreutils", "/usr/bin", "/bin"),
		unshare:  tool(t, "unshare", "util-linux", "/usr/bin"),
		ip:       tool(t, "ip", "iproute2", "/usr/sbin", "/sbin", "/bin"),
		nmKeys:   readKeyList(t, "testdata/sysconfig/nm-well-known-keys"),
		initKeys: readKeyList(t, "testdata/sysconfig/initscripts-keys"),
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	base, err := sc.source(empty)
	if err != nil {
		t.Fatal(err)
	}
	sc.bashBase = map[string]bool{}
	for k := range base {
		sc.bashBase[k] = true
	}
	return sc
}

// source runs `env -i bash -c 'set -a; . FILE; env -0'` and returns the
// variables (bash's own included), failing on any output on stderr.
func (sc *sysconfigChecker) source(file string) (map[string]string, error) {
	cmd := exec.Command(sc.env, "-i", sc.bash, "--norc", "--noprofile", "-c", `set -a; . "$1" || exit 99; env -0`, "bash", file)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		return nil, fmt.Errorf("bash sourcing it: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	out := map[string]string{}
	for _, kv := range strings.Split(strings.TrimSuffix(stdout.String(), "\x00"), "\x00") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("env -0 printed %q", kv)
		}
		out[k] = v
	}
	return out, nil
}

// sysconfigAssign is one assignment as the renderer writes it: a bare word
// of safe bytes, or a double-quoted string whose only escapes are \\ \"
// \$ \` (quoteValue in sysconfig.go).
var sysconfigAssign = regexp.MustCompile("^([A-Z][A-Z0-9_]*)=([A-Za-z0-9_.,:/@%+=-]+|\"(?:[^\"\\\\$`]|\\\\[\\\\\"$`])*\")$")

// rendererValues parses a file of the renderer's assignments and decodes
// each value as the renderer meant it.
func rendererValues(data string) (map[string]string, []string) {
	var bad []string
	out := map[string]string{}
	for i, l := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			continue
		}
		m := sysconfigAssign.FindStringSubmatch(l)
		if m == nil {
			bad = append(bad, fmt.Sprintf("line %d %q is not KEY=value as the renderer quotes", i+1, l))
			continue
		}
		v := m[2]
		if strings.HasPrefix(v, `"`) {
			v = regexp.MustCompile(`\\(.)`).ReplaceAllString(v[1:len(v)-1], "$1")
		}
		if _, dup := out[m[1]]; dup {
			bad = append(bad, fmt.Sprintf("line %d: %s assigned twice", i+1, m[1]))
		}
		out[m[1]] = v
	}
	return out, bad
}

// readValues is a shell-variable file read all three ways, compared: the
// values bash gives, or the problems.
func (sc *sysconfigChecker) readValues(dir string, f render.File) (map[string]string, []string) {
	p := filepath.Join(dir, filepath.FromSlash(f.Path))
	var bad []string
	want, problems := rendererValues(string(f.Data))
	bad = append(bad, problems...)
	got, err := sc.source(p)
	if err != nil {
		return nil, append(bad, err.Error())
	}
	for k := range sc.bashBase {
		if _, ours := want[k]; !ours {
			delete(got, k)
		}
	}
	for _, k := range unionKeys(want, got) {
		w, inFile := want[k]
		g, inBash := got[k]
		switch {
		case !inBash:
			bad = append(bad, fmt.Sprintf("%s=%q: bash does not set it", k, w))
		case !inFile:
			bad = append(bad, fmt.Sprintf("bash sets %s=%q, which the file does not assign", k, g))
		case g != w:
			bad = append(bad, fmt.Sprintf("%s: bash reads %q, the renderer meant %q", k, g, w))
		}
	}
	seen := map[string]int{}
	for _, l := range shvarParse(string(f.Data)) {
		if l.Key == "" {
			if s := strings.TrimLeft(l.Text, " \t\n\v\f\r"); s != "" && s[0] != '#' {
				bad = append(bad, fmt.Sprintf("line %d: ifcfg-rh ignores it as an invalid line", l.N))
			}
			continue
		}
		if n, dup := seen[l.Key]; dup {
			bad = append(bad, fmt.Sprintf("line %d: ifcfg-rh: key %s is duplicated and the occurrence on line %d ignored", l.N, l.Key, n))
		}
		seen[l.Key] = l.N
		v, ok := svUnescape(l.Value)
		if !ok {
			bad = append(bad, fmt.Sprintf("line %d: ifcfg-rh: key %s is badly quoted (or not UTF-8) and is treated as \"\"", l.N, l.Key))
		} else if g, inBash := got[l.Key]; inBash && v != g {
			bad = append(bad, fmt.Sprintf("line %d: %s: ifcfg-rh reads %q, bash %q", l.N, l.Key, v, g))
		}
	}
	return got, bad
}

func unionKeys(a, b map[string]string) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// knownKey tells whether a key of an ifcfg or network file is known to a
// reader, or allowed with a reason.
func (sc *sysconfigChecker) knownKey(k string) bool {
	if sc.nmKeys.find(k) >= 0 || sc.initKeys.find(k) >= 0 {
		return true
	}
	_, ok := sysconfigKeyAllow[k]
	return ok
}

// check reads one output's files every way and returns the problems,
// each naming its file.
func (sc *sysconfigChecker) check(t *testing.T, files []render.File) []string {
	t.Helper()
	dir := writeRoot(t, files)
	var bad []string
	ifcfgs := map[string]map[string]string{} // by DEVICE
	var names []string
	byBase := map[string]render.File{}
	for _, f := range files {
		if path.Dir(f.Path) == render.SysconfigDir {
			byBase[path.Base(f.Path)] = f
		}
		isIfcfg := strings.HasPrefix(f.Path, render.SysconfigDir+"/ifcfg-")
		if !isIfcfg && f.Path != "/etc/sysconfig/network" {
			continue
		}
		if f.Mode.Perm() != 0o644 {
			bad = append(bad, fmt.Sprintf("%s: mode %04o, want 0644", f.Path, f.Mode.Perm()))
		}
		vals, problems := sc.readValues(dir, f)
		for _, p := range problems {
			bad = append(bad, f.Path+": "+p)
		}
		for k := range vals {
			if !sc.knownKey(k) {
				bad = append(bad, fmt.Sprintf("%s: key %s: neither NetworkManager's ifcfg-rh nor initscripts' sysconfig.txt knows it", f.Path, k))
			}
		}
		if isIfcfg && vals != nil {
			name := strings.TrimPrefix(path.Base(f.Path), "ifcfg-")
			if vals["DEVICE"] != name {
				bad = append(bad, fmt.Sprintf("%s: DEVICE=%q, not the file's name", f.Path, vals["DEVICE"]))
			}
			ifcfgs[name] = vals
			names = append(names, name)
		}
	}
	sort.Strings(names)
	// route-, route6-, rule-, rule6- files, read by NetworkManager's rules
	// here and by ip below.
	var plan netScriptsPlan
	routeFiles := map[string]bool{}
	for base, f := range byBase {
		kind, name, _ := strings.Cut(base, "-")
		switch kind {
		case "route", "route6", "rule", "rule6":
		default:
			continue
		}
		routeFiles[base] = true
		if f.Mode.Perm() != 0o644 {
			bad = append(bad, fmt.Sprintf("%s: mode %04o, want 0644", f.Path, f.Mode.Perm()))
		}
		if _, ok := ifcfgs[name]; !ok {
			bad = append(bad, fmt.Sprintf("%s: no ifcfg-%s: nothing reads it", f.Path, name))
		}
		for _, p := range sc.checkRouteFile(dir, f, kind, name, &plan) {
			bad = append(bad, f.Path+": "+p)
		}
	}
	for base := range routeFiles {
		if strings.HasPrefix(base, "rule") {
			// nms-ifcfg-rh-reader.c: with a rule- or rule6- file the
			// plugin reads neither the rules nor the route files ("you
			// will need to use a dispatcher script"); its own
			// ROUTING_RULE_n keys network-scripts ignores. No form
			// has both; NM_CONTROLLED=no keeps NetworkManager away.
			t.Logf("%s: NetworkManager's ifcfg-rh would ignore this interface's route and rule files", base)
		}
	}
	bad = append(bad, sc.runNetworkScripts(t, names, ifcfgs, byBase, &plan)...)
	return bad
}

// ipCmd is one ip batch line and where it comes from.
type ipCmd struct {
	family int // 0, 4 or 6: ip's -4/-6 for the batch
	line   string
	from   string
}

// netScriptsPlan is what network-scripts would run for one output.
type netScriptsPlan struct {
	cmds  []ipCmd
	notes []string
}

func (p *netScriptsPlan) add(family int, from, format string, args ...any) {
	p.cmds = append(p.cmds, ipCmd{family, fmt.Sprintf(format, args...), from})
}

// checkRouteFile checks a route-, route6-, rule- or rule6- file and adds
// what ifup-routes would run for it to plan.
func (sc *sysconfigChecker) checkRouteFile(dir string, f render.File, kind, name string, plan *netScriptsPlan) []string {
	var bad []string
	data := string(f.Data)
	family := 4
	if strings.HasSuffix(kind, "6") {
		family = 6
	}
	if kind == "route" && routeFileNewSyntax(data) {
		vals, problems := sc.readValues(dir, f)
		bad = append(bad, problems...)
		if vals == nil {
			return bad
		}
		for k := range vals {
			ok := false
			for _, tag := range routeSVNetworkScripts {
				ok = ok || isNumberedTag(k, tag) && k != tag
			}
			if !ok {
				bad = append(bad, fmt.Sprintf("key %s: network-scripts' ifup-routes reads only ADDRESSn, NETMASKn and GATEWAYn (NetworkManager would read it)", k))
			}
		}
		if _, err := nmRouteSV(vals); err != nil {
			bad = append(bad, "ifcfg-rh: "+err.Error())
		}
		// ifup-routes' handle_file: from ADDRESS0 while ADDRESSn is set,
		// ipcalc -p ADDRESSn NETMASKn.
		if vals["ADDRESS0"] == "" {
			bad = append(bad, "no ADDRESS0: ifup-routes skips the file (\"Route entries are not sequentially ordered\")")
		}
		for n := 0; vals[fmt.Sprint("ADDRESS", n)] != ""; n++ {
			bits, err := netmaskBits(vals[fmt.Sprint("NETMASK", n)])
			if err != nil {
				bad = append(bad, fmt.Sprintf("NETMASK%d: %v", n, err))
				continue
			}
			line := fmt.Sprintf("%s/%d", vals[fmt.Sprint("ADDRESS", n)], bits)
			if g := vals[fmt.Sprint("GATEWAY", n)]; g != "" {
				line += " via " + g
			}
			plan.add(0, fmt.Sprintf("%s: ADDRESS%d", f.Path, n), "route add %s dev %s", line, name)
		}
		return bad
	}
	// ip-route(8) or ip-rule(8) argument lines: handle_ip_file runs
	// `ip -4|-6 route|rule add $line` for every line that is not blank or
	// a comment, split at white space and globbed.
	comment := regexp.MustCompile(`^[[:space:]]*(#.*)?$`)
	for i, l := range strings.Split(strings.TrimSuffix(data, "\n"), "\n") {
		if comment.MatchString(l) {
			continue
		}
		if strings.ContainsAny(l, "*?[~$`\"'\\") {
			bad = append(bad, fmt.Sprintf("line %d %q: bash would expand or quote part of it", i+1, l))
			continue
		}
		verb := strings.TrimSuffix(kind, "6")
		if verb == "route" {
			if _, err := nmRouteLine(l, family == 6); err != nil {
				bad = append(bad, fmt.Sprintf("line %d: ifcfg-rh ignores the route: %v", i+1, err))
			}
		}
		plan.add(family, fmt.Sprintf("%s:%d", f.Path, i+1), "%s add %s", verb, strings.Join(strings.Fields(l), " "))
	}
	return bad
}

// runNetworkScripts adds to plan what ifup-eth and ifup-ipv6 would run for
// each interface (links, addresses, default routes) before its route
// files, runs it all in a network namespace and returns what ip refused.
func (sc *sysconfigChecker) runNetworkScripts(t *testing.T, names []string, ifcfgs map[string]map[string]string, byBase map[string]render.File, routes *netScriptsPlan) []string {
	t.Helper()
	var bad []string
	var plan netScriptsPlan
	for i, name := range names {
		from := render.SysconfigDir + "/ifcfg-" + name
		peer := fmt.Sprintf("ckp%d", i)
		plan.add(0, from, "link add %s type veth peer name %s", name, peer)
		plan.add(0, from, "link set %s up", peer)
		plan.add(0, from, "link set %s up", name)
	}
	for _, name := range names {
		v := ifcfgs[name]
		from := render.SysconfigDir + "/ifcfg-" + name
		if v["MASTER"] != "" && isTrue(v["SLAVE"]) || v["BRIDGE"] != "" {
			// ifup-eth enslaves the device and exits: its addresses,
			// routes and route files are never applied.
			for _, k := range []string{"IPADDR", "IPADDR0", "IPADDR1", "IPV6ADDR", "GATEWAY", "IPV6_DEFAULTGW"} {
				if v[k] != "" {
					bad = append(bad, fmt.Sprintf("%s: %s=%s on a bond member or bridge port: ifup-eth ignores it", from, k, v[k]))
				}
			}
			for _, f := range []string{"route-", "route6-", "rule-", "rule6-"} {
				if _, ok := byBase[f+name]; ok {
					bad = append(bad, fmt.Sprintf("%s: %s%s of a bond member or bridge port: ifup-routes never runs for it", from, f, name))
				}
			}
			continue
		}
		dynamic := v["BOOTPROTO"] == "dhcp" || v["BOOTPROTO"] == "bootp"
		// expand_config: IPADDR, IPADDR0, IPADDR1, ... (a gap after 1
		// ends the list), PREFIXn or NETMASKn.
		var v4 []netip.Prefix
		for _, idx := range append([]string{""}, seq(256)...) {
			a := v["IPADDR"+idx]
			if a == "" {
				if n, _ := strconv.Atoi(idx); idx != "" && n >= 2 {
					break
				}
				continue
			}
			ip, err := netip.ParseAddr(a)
			if err != nil || !ip.Is4() {
				bad = append(bad, fmt.Sprintf("%s: IPADDR%s=%q is not an IPv4 address", from, idx, a))
				continue
			}
			bits := -1
			if p := v["PREFIX"+idx]; p != "" {
				bits, _ = strconv.Atoi(p)
			} else if m := v["NETMASK"+idx]; m != "" {
				var err error
				if bits, err = netmaskBits(m); err != nil {
					bad = append(bad, fmt.Sprintf("%s: NETMASK%s: %v", from, idx, err))
					continue
				}
			} else {
				bad = append(bad, fmt.Sprintf("%s: IPADDR%s without PREFIX%s or NETMASK%s: ipcalc would guess a class's", from, idx, idx, idx))
				continue
			}
			v4 = append(v4, netip.PrefixFrom(ip, bits))
		}
		if dynamic && len(v4) > 0 {
			bad = append(bad, fmt.Sprintf("%s: BOOTPROTO=%s with IPADDR: ifup-eth runs dhclient and never adds the static addresses %v", from, v["BOOTPROTO"], v4))
		}
		if !dynamic {
			for _, p := range v4 {
				plan.add(0, from, "addr add %s dev %s", p, name)
			}
			if v["DEFROUTE"] != "no" && v["GATEWAY"] != "" && len(v4) > 0 {
				gw, err := netip.ParseAddr(v["GATEWAY"])
				if err != nil || !gw.Is4() {
					bad = append(bad, fmt.Sprintf("%s: GATEWAY=%q is not an IPv4 address", from, v["GATEWAY"]))
				} else if !v4[0].Masked().Contains(gw) {
					bad = append(bad, fmt.Sprintf("%s: GATEWAY=%s is not in the first address's subnet %s: ifup-eth does not set the default route", from, gw, v4[0].Masked()))
				} else {
					metric := ""
					if v["METRIC"] != "" {
						metric = "metric " + v["METRIC"] + " "
					}
					plan.add(4, from+": GATEWAY", "route replace default %svia %s", metric, gw)
				}
			} else if v["GATEWAY"] != "" && v["DEFROUTE"] != "no" && len(v4) == 0 {
				bad = append(bad, fmt.Sprintf("%s: GATEWAY=%s without an address: ifup-eth does not set the default route", from, v["GATEWAY"]))
			}
		}
		// ifup-ipv6: IPV6ADDR (a /64 without a length) and its
		// secondaries, then IPV6_DEFAULTGW.
		if isTrue(v["IPV6INIT"]) {
			for _, a := range strings.Fields(v["IPV6ADDR"] + " " + v["IPV6ADDR_SECONDARIES"]) {
				if !strings.Contains(a, "/") {
					a += "/64"
				}
				plan.add(0, from, "addr add %s dev %s nodad", a, name)
			}
			if g := v["IPV6_DEFAULTGW"]; g != "" {
				gw, dev, _ := strings.Cut(g, "%")
				if dev == "" {
					dev = name
				}
				plan.add(6, from+": IPV6_DEFAULTGW", "route add default via %s dev %s", gw, dev)
			}
		}
		// A DHCP lease or router advertisement would bring the
		// gateways of the route files on link: stand in for it.
		if dynamic || isTrue(v["DHCPV6C"]) || isTrue(v["IPV6_AUTOCONF"]) {
			for _, c := range routes.cmds {
				if !strings.Contains(c.from, "-"+name+":") && !strings.HasSuffix(c.from, "-"+name) {
					continue
				}
				w := strings.Fields(c.line)
				for j := 0; j+1 < len(w); j++ {
					if w[j] == "via" {
						plan.notes = append(plan.notes, fmt.Sprintf("%s: gateway %s put on link as a lease would", name, w[j+1]))
						plan.add(0, from+": stand-in lease", "route replace %s dev %s", w[j+1], name)
					}
				}
			}
		}
	}
	plan.cmds = append(plan.cmds, routes.cmds...)
	for _, n := range plan.notes {
		t.Log(n)
	}
	return append(bad, sc.runIP(t, plan.cmds)...)
}

func seq(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}

// isTrue is network-functions' is_true.
func isTrue(v string) bool {
	switch v {
	case "yes", "true", "1", "YES", "TRUE", "Yes", "True", "t", "y":
		return true
	}
	return false
}

// runIP runs cmds in a network namespace of its own, three batches (no
// family; -4; -6), ip -force going on after a failure, and returns each
// failure with the file line it came from.
func (sc *sysconfigChecker) runIP(t *testing.T, cmds []ipCmd) []string {
	t.Helper()
	dir := t.TempDir()
	var batches [3][]ipCmd
	for _, c := range cmds {
		batches[map[int]int{0: 0, 4: 1, 6: 2}[c.family]] = append(batches[map[int]int{0: 0, 4: 1, 6: 2}[c.family]], c)
	}
	var args []string
	for i, b := range batches {
		var s strings.Builder
		for _, c := range b {
			s.WriteString(c.line + "\n")
		}
		p := filepath.Join(dir, fmt.Sprintf("batch%d", i))
		if err := os.WriteFile(p, []byte(s.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	script := `ip=$1; shift; "$ip" -force -batch "$1"; "$ip" -4 -force -batch "$2"; "$ip" -6 -force -batch "$3"; exit 0`
	cmd := exec.CommandContext(ctx, sc.unshare, append([]string{"-n", "--", "/bin/sh", "-c", script, "sh", sc.ip}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return []string{fmt.Sprintf("running ip in a network namespace: %v\n%s", err, out)}
	}
	var bad, msg []string
	failed := regexp.MustCompile(`^Command failed (\S+):(\d+)$`)
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		m := failed.FindStringSubmatch(l)
		if m == nil {
			if l != "" {
				msg = append(msg, l)
			}
			continue
		}
		n, _ := strconv.Atoi(m[2])
		b := batches[map[string]int{"batch0": 0, "batch1": 1, "batch2": 2}[filepath.Base(m[1])]]
		where := "?"
		if n >= 1 && n <= len(b) {
			c := b[n-1]
			fam := ""
			if c.family != 0 {
				fam = fmt.Sprintf("-%d ", c.family)
			}
			where = fmt.Sprintf("%s: ip %s%s", c.from, fam, c.line)
		}
		bad = append(bad, fmt.Sprintf("%s: %s", where, strings.Join(msg, "; ")))
		msg = nil
	}
	if len(msg) > 0 {
		bad = append(bad, "ip: "+strings.Join(msg, "; "))
	}
	return bad
}
