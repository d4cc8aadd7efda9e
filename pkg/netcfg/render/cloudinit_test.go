package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// corpusCase is one directory of testdata/corpus: an input in one of
// net-convert's kinds and, optionally, a "macs" file of name,mac lines
// (net-convert's -m flags).
type corpusCase struct {
	Name  string
	Input string // path of the input file
	Kind  string // net-convert -k
	Macs  []string
}

func (c corpusCase) macToName() map[string]string {
	m := map[string]string{}
	for _, l := range c.Macs {
		name, mac, _ := strings.Cut(l, ",")
		m[strings.ToLower(mac)] = name
	}
	return m
}

func loadCorpus(t *testing.T) []corpusCase {
	t.Helper()
	dirs, err := filepath.Glob("testdata/corpus/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	var out []corpusCase
	for _, d := range dirs {
		c := corpusCase{Name: filepath.Base(d)}
		for kind, file := range map[string]string{"network_data.json": "network_data.json", "yaml": "network.yaml", "eni": "interfaces"} {
			if _, err := os.Stat(filepath.Join(d, file)); err == nil {
				if c.Input != "" {
					t.Fatalf("%s: more than one input", d)
				}
				c.Input, c.Kind = filepath.Join(d, file), kind
			}
		}
		if c.Input == "" {
			t.Fatalf("%s: no network_data.json, network.yaml or interfaces", d)
		}
		if b, err := os.ReadFile(filepath.Join(d, "macs")); err == nil {
			c.Macs = strings.Fields(string(b))
		}
		out = append(out, c)
	}
	return out
}

// cloudInitPython returns the interpreter of the installed cloud-init
// command (its #! line), which can import the cloudinit package.
func cloudInitPython(t *testing.T) string {
	t.Helper()
	ci, err := exec.LookPath("cloud-init")
	if err != nil {
		t.Fatalf("cloud-init is not installed (make deps installs it; apt-get install -y cloud-init): %v", err)
	}
	f, err := os.Open(ci)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "#!") {
		t.Fatalf("%s: no #! line: %v", ci, err)
	}
	return strings.Fields(strings.TrimPrefix(line, "#!"))[0]
}

// readTree returns the files under dir as root-relative path -> content.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out["/"+filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// intentional is a difference between our facts and cloud-init's that
// docs/network.md lists as intended. It excuses a fact found on one side
// only; everything else must agree.
type intentional struct {
	Renderer string // "" for all
	Kind     string // input kind, "" for all
	OursOnly bool   // the fact is in our output only (else in cloud-init's only)
	Key      string
	Reason   string
}

func intentionalDifferences() []intentional {
	return []intentional{
		// networkd: cloud-init writes no .netdev and no Bond=/VLAN=/Bridge=
		// lines, so its bonds, VLANs and bridges are never created.
		{"networkd", "", true, fKind, "we write .netdev files for virtual links"},
		{"networkd", "", true, fMaster, "we put Bond= in the member's .network"},
		{"networkd", "", true, fBridgePort, "we put Bridge= in the port's .network"},
		{"networkd", "", true, fVLANID, "we write the VLAN's .netdev"},
		{"networkd", "", true, fVLANLink, "we put VLAN= in the parent's .network"},
		{"networkd", "", true, fBondMode, "we write the bond's .netdev"},
		// networkd.py only knows subnet type dhcp6: slaac, stateless and
		// stateful subnets render as nothing.
		{"networkd", "", true, fAcceptRA, "we set IPv6AcceptRA=yes for ipv6_slaac/ipv6_dhcpv6-stateless and honour accept-ra on every link"},
		{"networkd", "", true, fDHCP6, "we set DHCP=ipv6 for ipv6_dhcpv6-stateful"},
		// network_manager.py drops the host-wide DNS, the MTU of virtual
		// links, route metrics and bond MACs, and renders static6 subnets as
		// method=auto (static6 is missing from its method map).
		{"network-manager", "", true, fDNS, "we give host-wide nameservers to connections with static addresses"},
		{"network-manager", "", true, fMTU, "we set [ethernet] mtu on bonds, bridges and VLANs"},
		{"network-manager", "", true, fMetric, "we keep route metrics (routeN=dest,gw,metric)"},
		{"network-manager", "", true, fMAC, "we set cloned-mac-address on bonds and VLANs"},
		{"network-manager", "", false, fIPv6Auto, "cloud-init renders a static6 subnet as ipv6 method=auto"},
		// network_data.json: cloud-init keeps bond_mode as "bond_mode",
		// which eni and network-manager look up as "bond-mode" and miss;
		// our parser normalises it. (networkd: covered above.)
		{"eni", "network_data.json", true, fBondMode, "cloud-init loses network_data.json's bond_mode"},
		{"network-manager", "network_data.json", true, fBondMode, "cloud-init loses network_data.json's bond_mode"},
		// A v1 subnet's metric: cloud-init writes it for sysconfig (METRIC)
		// and eni (metric) only; networkd and netplan drop it.
		{"networkd", "yaml", true, fMetric, "we put a v1 subnet's metric on its gateway route"},
		{"netplan", "yaml", true, fMetric, "we put a v1 subnet's metric on its gateway route"},
		{"networkd", "yaml", true, fDHCPMetric, "we write a v1 dhcp subnet's metric as [DHCPv4] RouteMetric"},
		{"netplan", "yaml", true, fDHCPMetric, "we write a v1 dhcp subnet's metric as dhcp4-overrides route-metric"},
		{"network-manager", "", true, fDHCPMetric, "we write a dhcp subnet's metric as ipv4 route-metric"},
		// eni.py writes accept_ra only into an interface's first stanza, so
		// a static IPv6 subnet after an IPv4 one loses it.
		{"eni", "", true, fAcceptRA, "we write accept_ra into every inet6 stanza"},
	}
}

func (d intentional) excuses(renderer, kind string, oursOnly bool, f fact) bool {
	return (d.Renderer == "" || d.Renderer == renderer) && (d.Kind == "" || d.Kind == kind) &&
		d.OursOnly == oursOnly && d.Key == f.Key
}

// TestCloudInitDifferential renders every corpus case with every renderer,
// ours and cloud-init's `devel net-convert`, and compares the facts each
// output states. It fails, never skips, without cloud-init.
func TestCloudInitDifferential(t *testing.T) {
	python := cloudInitPython(t)
	cases := loadCorpus(t)
	out := t.TempDir()

	// One cloud-init process for all conversions: net-convert takes about
	// two seconds to start, the conversions themselves milliseconds.
	var jobs bytes.Buffer
	for _, c := range cases {
		for _, r := range Names() {
			distro := "debian"
			if r == "sysconfig" {
				distro = "rhel" // debian has no sysconfig templates: net-convert crashes
			}
			argv := []string{"-p", c.Input, "-k", c.Kind, "-d", filepath.Join(out, c.Name, r), "-D", distro, "-O", r}
			for _, m := range c.Macs {
				argv = append(argv, "-m", m)
			}
			b, _ := json.Marshal(argv)
			jobs.Write(append(b, '\n'))
		}
	}
	cmd := exec.Command(python, "testdata/netconvert.py")
	cmd.Stdin = &jobs
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cloud-init net-convert: %v\n%s", err, stderr.String())
	}
	if strings.Contains(stderr.String(), "FAIL ") {
		t.Fatalf("cloud-init net-convert failed:\n%s", stderr.String())
	}

	used := map[int]bool{}
	rules := intentionalDifferences()
	for _, c := range cases {
		in, err := os.ReadFile(c.Input)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range Names() {
			t.Run(c.Name+"/"+r, func(t *testing.T) {
				files, err := Convert(in, c.Kind, c.macToName(), r)
				if err != nil {
					t.Fatalf("Convert: %v", err)
				}
				oursFiles := map[string]string{}
				for _, f := range files {
					oursFiles[f.Path] = string(f.Data)
				}
				theirsFiles := readTree(t, filepath.Join(out, c.Name, r))
				ours, err := factsOf(r, oursFiles)
				if err != nil {
					t.Fatalf("our output: %v", err)
				}
				theirs, err := factsOf(r, theirsFiles)
				if err != nil {
					t.Fatalf("cloud-init's output: %v", err)
				}
				if len(theirs) == 0 || len(ours) == 0 {
					t.Fatalf("no facts: ours %d, cloud-init's %d", len(ours), len(theirs))
				}
				var bad []string
				check := func(a, b facts, oursOnly bool) {
					for _, f := range a.sorted() {
						if b[f] {
							continue
						}
						excused := false
						for i, d := range rules {
							if d.excuses(r, c.Kind, oursOnly, f) {
								excused, used[i] = true, true
								t.Logf("intentional: %s only in %s: %s", f, side(oursOnly), d.Reason)
								break
							}
						}
						if !excused {
							bad = append(bad, fmt.Sprintf("only in %s: %s", side(oursOnly), f))
						}
					}
				}
				check(ours, theirs, true)
				check(theirs, ours, false)
				if len(bad) > 0 {
					sort.Strings(bad)
					t.Errorf("facts differ from cloud-init's:\n  %s\nours:\n%s\ncloud-init's:\n%s",
						strings.Join(bad, "\n  "), dumpFiles(oursFiles), dumpFiles(theirsFiles))
				}
			})
		}
	}
	// Every listed difference must still happen: a stale entry would hide
	// a regression on that fact.
	if !t.Failed() {
		for i, d := range rules {
			if !used[i] {
				t.Errorf("intentional difference never seen, remove it: %+v", d)
			}
		}
	}
}

func side(oursOnly bool) string {
	if oursOnly {
		return "ours"
	}
	return "cloud-init's"
}

func dumpFiles(files map[string]string) string {
	var b strings.Builder
	for _, p := range sortedKeys(files) {
		fmt.Fprintf(&b, "--- %s\n%s", p, files[p])
	}
	return b.String()
}
