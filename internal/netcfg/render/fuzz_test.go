package render

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/netcfg"
)

// fuzzFormats are the network inputs FuzzEndToEnd feeds, by the first byte
// of its input modulo their number.
var fuzzFormats = []string{"network_data.json", "yaml", "eni"}

// fuzzMACs names network_data.json links the way the live NICs would: the
// MACs of the corpus, and one more.
func fuzzMACs(tb testing.TB) map[string]string {
	m := map[string]string{"52:54:00:12:34:56": "eth9"}
	paths, _ := filepath.Glob("testdata/corpus/*/macs")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		for _, l := range strings.Fields(string(data)) {
			if name, mac, ok := strings.Cut(l, ","); ok {
				m[strings.ToLower(mac)] = name
			}
		}
	}
	return m
}

// FuzzEndToEnd is the whole network path on arbitrary bytes: a datasource's
// network file (network_data.json, network config v1/v2 YAML or ENI, chosen
// by kind) is parsed into the model, validated as the boot does, and
// rendered by every renderer. Nothing may panic, and every file a renderer
// writes must parse back in its own syntax with nothing smuggled in.
func FuzzEndToEnd(f *testing.F) {
	for i, glob := range []string{"testdata/corpus/*/network_data.json", "testdata/corpus/*/network.yaml", "testdata/corpus/*/interfaces",
		"../testdata/network_data*.json", "../testdata/v*_all.yaml", "../testdata/interfaces"} {
		paths, _ := filepath.Glob(glob)
		for _, p := range paths {
			data, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(i%3), data)
		}
	}
	f.Add(uint8(2), []byte("\\\n\n"))
	f.Add(uint8(1), []byte("version: 2\nethernets:\n  e$(reboot):\n    dhcp4: true\n"))
	f.Add(uint8(1), []byte("version: 1\nconfig:\n- type: physical\n  name: eth0\n  subnets:\n  - type: static\n    address: 10.0.0.2/24\n    dns_search: \"a.org\\nnameserver 6.6.6.6\"\n"))
	macs := fuzzMACs(f)
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		format := fuzzFormats[int(kind)%len(fuzzFormats)]
		c, err := netcfg.Parse(format, data, macs)
		if err != nil {
			if c != nil {
				t.Fatalf("%s: config along with error %v", format, err)
			}
			return
		}
		if c.Validate() != nil {
			return // the boot falls back to DHCP on the first NIC
		}
		for _, rn := range Names() {
			r, _ := ByName(rn)
			files, err := r.Render(c)
			if err != nil {
				// A valid model a renderer cannot express (sysconfig's
				// one default route per family) is refused as a whole.
				if files != nil {
					t.Fatalf("%s: files along with error %v", rn, err)
				}
				continue
			}
			checkRendered(t, rn, c, files)
		}
	})
}

// iniKey is a key of a networkd unit or NetworkManager keyfile.
var iniKey = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// shellAssign is one sysconfig assignment: a bare safe word or a double-
// quoted string whose only escapes are \\ \" \$ \`.
var shellAssign = regexp.MustCompile("^[A-Z][A-Z0-9_]*=([A-Za-z0-9_.,:/@%+=-]*|\"([^\"\\\\$`]|\\\\[\\\\\"$`])*\")$")

// ipArgs is a line of ip-route(8) or ip-rule(8) arguments: words of
// address, name and number characters only.
var ipArgs = regexp.MustCompile(`^[a-z0-9.:/]+( [A-Za-z0-9._:/@+-]+)*$`)

// checkRendered parses every file back in its own syntax.
func checkRendered(t *testing.T, rn string, c *netcfg.Config, files []File) {
	t.Helper()
	for _, f := range files {
		if !filepath.IsAbs(f.Path) || filepath.Clean(f.Path) != f.Path {
			t.Fatalf("%s: path %q is not absolute and clean", rn, f.Path)
		}
		s := string(f.Data)
		if i := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' || r == 0x7f }); i >= 0 {
			t.Fatalf("%s: %s: control character %q at %d:\n%s", rn, f.Path, s[i], i, s)
		}
		if !strings.HasSuffix(s, "\n") {
			t.Fatalf("%s: %s: no final newline", rn, f.Path)
		}
		bad := func(l string) { t.Fatalf("%s: %s: line %q does not parse:\n%s", rn, f.Path, l, s) }
		switch {
		case f.Path == "/etc/resolv.conf":
			for _, l := range lines(s) {
				if !strings.HasPrefix(l, ";") && !strings.HasPrefix(l, "nameserver ") && !strings.HasPrefix(l, "search ") {
					bad(l)
				}
				if strings.HasPrefix(l, "nameserver ") && len(strings.Fields(l)) != 2 {
					bad(l)
				}
			}
		case strings.HasSuffix(f.Path, ".yaml"):
			var doc struct {
				Network struct {
					Version int `yaml:"version"`
				} `yaml:"network"`
			}
			if err := yaml.Unmarshal(f.Data, &doc); err != nil || doc.Network.Version != 2 {
				t.Fatalf("%s: %s: not netplan YAML (version %d): %v\n%s", rn, f.Path, doc.Network.Version, err, s)
			}
		case strings.HasPrefix(f.Path, NetworkdDir+"/"), strings.HasPrefix(f.Path, NMDir+"/"), strings.HasPrefix(f.Path, "/etc/NetworkManager/conf.d/"):
			for _, l := range lines(s) {
				switch {
				case strings.HasPrefix(l, "#"):
				case strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]"):
				default:
					k, _, ok := strings.Cut(l, "=")
					if !ok || !iniKey.MatchString(strings.TrimSpace(k)) {
						bad(l)
					}
				}
			}
		case strings.HasPrefix(f.Path, SysconfigDir+"/route6-"):
			for _, l := range lines(s) {
				if !strings.HasPrefix(l, "#") && !strings.Contains(l, " dev ") {
					bad(l)
				}
			}
		case strings.HasPrefix(f.Path, SysconfigDir+"/route-"):
			// ADDRESS<n>= assignments, or ip-route(8) argument lines.
			for _, l := range lines(s) {
				if !strings.HasPrefix(l, "#") && !shellAssign.MatchString(l) && !ipArgs.MatchString(l) {
					bad(l)
				}
			}
		case strings.HasPrefix(f.Path, SysconfigDir+"/rule-"), strings.HasPrefix(f.Path, SysconfigDir+"/rule6-"):
			for _, l := range lines(s) {
				if !strings.HasPrefix(l, "#") && !ipArgs.MatchString(l) {
					bad(l)
				}
			}
		case strings.HasPrefix(f.Path, SysconfigDir+"/"), f.Path == "/etc/sysconfig/network":
			for _, l := range lines(s) {
				if !strings.HasPrefix(l, "#") && !shellAssign.MatchString(l) {
					bad(l)
				}
			}
		case f.Path == ENIPath:
			back, err := netcfg.ParseENI(f.Data)
			if err != nil {
				if strings.Contains(err.Error(), "cannot tell a VLAN id") {
					continue // a physical NIC named like a VLAN: see the report
				}
				t.Fatalf("%s: %s does not parse back: %v\n%s", rn, f.Path, err, s)
			}
			var got, want []string
			for _, i := range back.Interfaces {
				got = append(got, i.Name)
			}
			for _, i := range expandGlobs(c).Interfaces {
				want = append(want, i.Name)
			}
			sort.Strings(got)
			sort.Strings(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Fatalf("%s: %s parses back to interfaces %q, want %q:\n%s", rn, f.Path, got, want, s)
			}
		default:
			t.Fatalf("%s: unexpected file %s", rn, f.Path)
		}
	}
}

// lines returns the non-empty lines of s, trimmed.
func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}
