package nic

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func mac(i int) string { return fmt.Sprintf("52:54:00:00:00:%02x", i) }

// links builds devices with indexes 1.. and MACs mac(1).. named as given.
func links(names ...string) []Link {
	out := make([]Link, len(names))
	for i, n := range names {
		out[i] = Link{Index: i + 1, Name: n, MAC: mac(i + 1), Kind: "device", Up: true}
	}
	return out
}

// simulate applies steps to an in-memory name table, failing the test if a
// step names a link that does not exist or a name already held. It returns
// link index -> final name.
func simulate(t testing.TB, ls []Link, steps []Step) map[int]string {
	t.Helper()
	holder := map[string]int{}
	final := map[int]string{}
	for _, l := range ls {
		holder[l.Name] = l.Index
		final[l.Index] = l.Name
	}
	for i, s := range steps {
		idx, ok := holder[s.From]
		if !ok {
			t.Fatalf("step %d (%v): no link is named %q", i, s, s.From)
		}
		if other, taken := holder[s.To]; taken {
			t.Fatalf("step %d (%v): %q is already held by link %d", i, s, s.To, other)
		}
		if err := ValidName(s.To); err != nil {
			t.Fatalf("step %d (%v): %v", i, s, err)
		}
		delete(holder, s.From)
		holder[s.To] = idx
		final[idx] = s.To
	}
	return final
}

// checkPlan asserts what every plan must achieve: simulated without
// collisions, each entry of want without a Problem ends with its name on the
// one link that has its MAC, every other link keeps its name, and no
// temporary name is left.
func checkPlan(t testing.TB, ls []Link, want map[string]string, steps []Step, problems []Problem) {
	t.Helper()
	final := simulate(t, ls, steps)
	norm := map[string]string{}
	for k, v := range want {
		if m, err := normalizeMAC(k); err == nil {
			norm[m] = v
		}
	}
	skipped := map[string]bool{}
	for _, p := range problems {
		skipped[p.MAC] = true
	}
	byMAC := map[string][]Link{}
	for _, l := range ls {
		byMAC[linkMAC(l.MAC)] = append(byMAC[linkMAC(l.MAC)], l)
	}
	renamed := map[int]string{}
	for m, name := range norm {
		if skipped[m] {
			continue
		}
		match := candidates(byMAC[m])
		if len(match) != 1 {
			t.Fatalf("want %s -> %s has %d live links but no problem", m, name, len(match))
		}
		renamed[match[0].Index] = name
	}
	wanted := map[string]bool{}
	for _, v := range want {
		wanted[v] = true
	}
	for _, l := range ls {
		exp, ok := renamed[l.Index]
		if !ok {
			exp = l.Name
		}
		if final[l.Index] != exp {
			t.Errorf("link %d (%s, was %s) ends as %q, want %q", l.Index, l.MAC, l.Name, final[l.Index], exp)
		}
		if got := final[l.Index]; strings.HasPrefix(got, tmpPrefix) && got != l.Name && !wanted[got] {
			t.Errorf("link %d left at temporary name %q", l.Index, got)
		}
	}
}

func TestPlan(t *testing.T) {
	for _, tt := range []struct {
		name     string
		links    []Link
		want     map[string]string
		steps    []Step
		problems []Problem
	}{
		{
			name:  "no-op",
			links: links("eth0", "eth1"),
			want:  map[string]string{mac(1): "eth0", mac(2): "eth1"},
		},
		{
			name:  "nothing wanted",
			links: links("eth0"),
		},
		{
			name:  "single rename",
			links: links("ens3", "ens4"),
			want:  map[string]string{mac(1): "eth0"},
			steps: []Step{{"ens3", "eth0"}},
		},
		{
			name:  "swap",
			links: links("eth0", "eth1"),
			want:  map[string]string{mac(1): "eth1", mac(2): "eth0"},
			steps: []Step{{"eth1", "eirtmp0"}, {"eth0", "eth1"}, {"eirtmp0", "eth0"}},
		},
		{
			name:  "3-cycle",
			links: links("eth0", "eth1", "eth2"),
			want:  map[string]string{mac(1): "eth1", mac(2): "eth2", mac(3): "eth0"},
			steps: []Step{{"eth2", "eirtmp0"}, {"eth1", "eth2"}, {"eth0", "eth1"}, {"eirtmp0", "eth0"}},
		},
		{
			name:  "two swaps reuse the temporary name",
			links: links("a0", "a1", "b0", "b1"),
			want:  map[string]string{mac(1): "a1", mac(2): "a0", mac(3): "b1", mac(4): "b0"},
			steps: []Step{
				{"a1", "eirtmp0"}, {"a0", "a1"}, {"eirtmp0", "a0"},
				{"b1", "eirtmp0"}, {"b0", "b1"}, {"eirtmp0", "b0"},
			},
		},
		{
			name:  "chain into a free name",
			links: links("ens3", "ens4"),
			want:  map[string]string{mac(1): "ens4", mac(2): "ens5"},
			steps: []Step{{"ens4", "ens5"}, {"ens3", "ens4"}},
		},
		{
			name:  "temporary name avoids live and wanted names",
			links: links("eth0", "eth1", "eirtmp0"),
			want:  map[string]string{mac(1): "eth1", mac(2): "eth0", mac(3): "eirtmp1"},
			steps: []Step{{"eirtmp0", "eirtmp1"}, {"eth1", "eirtmp2"}, {"eth0", "eth1"}, {"eirtmp2", "eth0"}},
		},
		{
			name:  "target held by an unmanaged NIC",
			links: links("eth0", "ens3", "ens4"),
			want:  map[string]string{mac(2): "eth0", mac(3): "eth1"},
			steps: []Step{{"ens4", "eth1"}},
			problems: []Problem{
				{mac(2), "eth0", "name held by link 1 (MAC 52:54:00:00:00:01), which is not being renamed"},
			},
		},
		{
			name:  "a skipped entry's link stays and blocks the next",
			links: links("eth0", "ens3", "ens4", "ens5"),
			// ens3 cannot become eth0, so ens4 cannot become ens3; ens5 is free to move.
			want:  map[string]string{mac(2): "eth0", mac(3): "ens3", mac(4): "lan0"},
			steps: []Step{{"ens5", "lan0"}},
			problems: []Problem{
				{mac(2), "eth0", "name held by link 1 (MAC 52:54:00:00:00:01), which is not being renamed"},
				{mac(3), "ens3", "name held by link 2 (MAC 52:54:00:00:00:02), which is not being renamed"},
			},
		},
		{
			name:  "missing MAC",
			links: links("ens3"),
			want:  map[string]string{mac(1): "eth0", mac(9): "eth1"},
			steps: []Step{{"ens3", "eth0"}},
			problems: []Problem{
				{mac(9), "eth1", "missing: no live link has this MAC"},
			},
		},
		{
			// cloud-init leaves VLAN, bond and bridge devices out before
			// looking for duplicates: the NIC below is renamed.
			name: "bond and VLAN share a NIC's MAC",
			links: []Link{
				{Index: 1, Name: "ens3", MAC: mac(1), Kind: "device"},
				{Index: 2, Name: "bond0", MAC: mac(1), Kind: "bond"},
				{Index: 3, Name: "ens3.10", MAC: mac(1), Kind: "vlan"},
				{Index: 4, Name: "ens4", MAC: mac(2), Kind: "device"},
			},
			want:  map[string]string{mac(1): "eth0", mac(2): "eth1"},
			steps: []Step{{"ens3", "eth0"}, {"ens4", "eth1"}},
		},
		{
			// Fault matrix: two NICs with one MAC. cloud-init raises
			// "duplicate mac found!"; the entry is refused, naming both,
			// and the rest goes on.
			name: "two NICs with one MAC",
			links: []Link{
				{Index: 1, Name: "ens3", MAC: mac(1), Kind: "device"},
				{Index: 2, Name: "ens5", MAC: mac(1), Kind: "device"},
				{Index: 3, Name: "bond0", MAC: mac(1), Kind: "bond"},
				{Index: 4, Name: "ens4", MAC: mac(2), Kind: "device"},
			},
			want:  map[string]string{mac(1): "eth0", mac(2): "eth1"},
			steps: []Step{{"ens4", "eth1"}},
			problems: []Problem{
				{mac(1), "eth0", "duplicate MAC: held by ens3, ens5"},
			},
		},
		{
			name: "only upper devices share the MAC",
			links: []Link{
				{Index: 1, Name: "br0", MAC: mac(1), Kind: "bridge"},
				{Index: 2, Name: "bond0", MAC: mac(1), Kind: "bond"},
			},
			want: map[string]string{mac(1): "eth0"},
			problems: []Problem{
				{mac(1), "eth0", "duplicate MAC: held by bond0, br0"},
			},
		},
		{
			name: "Hyper-V netvsc NIC wins over its VF",
			links: []Link{
				{Index: 1, Name: "enP1s1", MAC: mac(1), Driver: "mlx5_core", Kind: "device"},
				{Index: 2, Name: "eth5", MAC: mac(1), Driver: "hv_netvsc", Kind: "device"},
			},
			want:  map[string]string{mac(1): "eth0"},
			steps: []Step{{"eth5", "eth0"}},
		},
		{
			name:  "invalid names",
			links: links("ens3", "ens4"),
			want: map[string]string{
				mac(1):              "eth0",
				mac(2):              "a/b",
				"52:54:00:00:01:01": "",
				"52:54:00:00:01:02": "sixteen-bytes-xx",
				"52:54:00:00:01:03": ".",
				"52:54:00:00:01:04": "..",
				"52:54:00:00:01:05": "has space",
				"52:54:00:00:01:06": "eth%d",
				"52:54:00:00:01:07": "eth0:1",
			},
			steps: []Step{{"ens3", "eth0"}},
			problems: []Problem{
				{mac(2), "a/b", `invalid interface name: name "a/b" contains '/'`},
				{"52:54:00:00:01:01", "", "invalid interface name: empty name"},
				{"52:54:00:00:01:02", "sixteen-bytes-xx", `invalid interface name: name "sixteen-bytes-xx" is 16 bytes, longer than 15`},
				{"52:54:00:00:01:03", ".", `invalid interface name: name "." is reserved`},
				{"52:54:00:00:01:04", "..", `invalid interface name: name ".." is reserved`},
				{"52:54:00:00:01:05", "has space", `invalid interface name: name "has space" has a space, control or non-ASCII byte at 3`},
				{"52:54:00:00:01:06", "eth%d", `invalid interface name: name "eth%d" contains '%'`},
				{"52:54:00:00:01:07", "eth0:1", `invalid interface name: name "eth0:1" contains ':'`},
			},
		},
		{
			name:  "15-byte name is fine",
			links: links("ens3"),
			want:  map[string]string{mac(1): "fifteen-bytes-x"},
			steps: []Step{{"ens3", "fifteen-bytes-x"}},
		},
		{
			name:  "invalid MAC",
			links: links("ens3"),
			want:  map[string]string{"52:54:00:zz:00:01": "eth0"},
			problems: []Problem{
				{"52:54:00:zz:00:01", "eth0", `invalid MAC address "52:54:00:zz:00:01"`},
			},
		},
		{
			name: "MACs in want are case-insensitive",
			links: []Link{
				{Index: 1, Name: "ens3", MAC: "52:54:00:ab:cd:ef"},
				{Index: 2, Name: "ens4", MAC: "52:54:00:ab:cd:f0"},
			},
			want:  map[string]string{"52:54:00:AB:CD:EF": "eth0", "52-54-00-Ab-cD-F0": "eth1"},
			steps: []Step{{"ens3", "eth0"}, {"ens4", "eth1"}},
		},
		{
			name:  "same MAC twice with the same name",
			links: links("ens3"),
			want:  map[string]string{"52:54:00:00:00:01": "eth0", " 52:54:00:00:00:01": "eth0"},
			steps: []Step{{"ens3", "eth0"}},
		},
		{
			name:  "same MAC in two spellings with different names",
			links: links("ens3", "ens4"),
			want:  map[string]string{"52:54:00:00:00:01": "eth0", " 52:54:00:00:00:01": "eth9", mac(2): "eth1"},
			steps: []Step{{"ens4", "eth1"}},
			problems: []Problem{
				{mac(1), "eth0", "MAC given more than once with different names"},
				{mac(1), "eth9", "MAC given more than once with different names"},
			},
		},
		{
			name:  "one name wanted for two MACs",
			links: links("ens3", "ens4", "ens5"),
			want:  map[string]string{mac(1): "eth0", mac(2): "eth0", mac(3): "eth2"},
			steps: []Step{{"ens5", "eth2"}},
			problems: []Problem{
				{mac(1), "eth0", "name wanted for more than one MAC (52:54:00:00:00:01, 52:54:00:00:00:02)"},
				{mac(2), "eth0", "name wanted for more than one MAC (52:54:00:00:00:01, 52:54:00:00:00:02)"},
			},
		},
		{
			name: "links with upper-case MACs",
			links: []Link{
				{Index: 7, Name: "ens3", MAC: "52:54:00:AB:CD:EF"},
			},
			want:  map[string]string{"52:54:00:ab:cd:ef": "eth0"},
			steps: []Step{{"ens3", "eth0"}},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			steps, problems := Plan(tt.links, tt.want)
			if !reflect.DeepEqual(steps, tt.steps) {
				t.Errorf("steps = %v, want %v", steps, tt.steps)
			}
			if !reflect.DeepEqual(problems, tt.problems) {
				t.Errorf("problems:\n got %q\nwant %q", problems, tt.problems)
			}
			checkPlan(t, tt.links, tt.want, steps, problems)
		})
	}
}

// permutations calls f with every permutation of 0..n-1.
func permutations(n int, f func([]int)) {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	var rec func(k int)
	rec = func(k int) {
		if k == n {
			f(p)
			return
		}
		for i := k; i < n; i++ {
			p[k], p[i] = p[i], p[k]
			rec(k + 1)
			p[k], p[i] = p[i], p[k]
		}
	}
	rec(0)
}

// minSteps is the fewest renames that realise permutation p (link i gets
// name p[i]) one at a time: one per moved link, plus one temporary name per
// cycle of two or more.
func minSteps(p []int) int {
	seen := make([]bool, len(p))
	n := 0
	for i := range p {
		if seen[i] || p[i] == i {
			continue
		}
		n++ // a cycle
		for j := i; !seen[j]; j = p[j] {
			seen[j] = true
			n++
		}
	}
	return n
}

func TestPlanAllPermutations(t *testing.T) {
	for n := 1; n <= 6; n++ {
		names := make([]string, n)
		for i := range names {
			names[i] = fmt.Sprintf("eth%d", i)
		}
		ls := links(names...)
		permutations(n, func(p []int) {
			want := map[string]string{}
			for i, j := range p {
				want[mac(i+1)] = names[j]
			}
			steps, problems := Plan(ls, want)
			if len(problems) != 0 {
				t.Fatalf("perm %v: problems %v", p, problems)
			}
			checkPlan(t, ls, want, steps, problems)
			if len(steps) != minSteps(p) {
				t.Fatalf("perm %v: %d steps %v, want %d", p, len(steps), steps, minSteps(p))
			}
		})
	}
}

// fuzzCase turns bytes into live links and a want map. Up to 6 links named
// eth0.. with distinct MACs; the first byte's high bit asks for a pure
// permutation of their names, otherwise each link gets a random wanted name
// (some invalid, some held by unmanaged links), may share its MAC with the
// previous link, or is left unmanaged, and a missing MAC may be wanted too.
func fuzzCase(data []byte) (ls []Link, want map[string]string, perm []int) {
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	head := next()
	n := 1 + int(head%6)
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("eth%d", i)
	}
	if head&0x40 != 0 {
		names[n-1] = "eirtmp0" // a live link already at a temporary-looking name
	}
	ls = links(names...)
	want = map[string]string{}
	if head&0x80 != 0 {
		perm = make([]int, n)
		for i := range perm {
			perm[i] = i
		}
		for i := n - 1; i > 0; i-- {
			j := int(next()) % (i + 1)
			perm[i], perm[j] = perm[j], perm[i]
		}
		for i, j := range perm {
			want[mac(i+1)] = names[j]
		}
		return ls, want, perm
	}
	pool := append(names[:n:n], "net0", "net1", "eirtmp1", "bad/name", "")
	for i := range ls {
		b := next()
		if i > 0 && b&0x80 != 0 {
			ls[i].MAC = ls[i-1].MAC
		}
		if b%11 == 10 {
			continue // unmanaged
		}
		key := ls[i].MAC
		if b&0x40 != 0 {
			key = strings.ToUpper(key)
		}
		want[key] = pool[int(b%11)%len(pool)]
	}
	if b := next(); b%3 == 0 {
		want["52:54:00:00:01:00"] = pool[int(b)%len(pool)]
	}
	return ls, want, nil
}

func FuzzPlan(f *testing.F) {
	for _, seed := range [][]byte{
		{0x81, 0},             // swap
		{0x82, 1, 0},          // 3-cycle
		{0x85, 5, 4, 3, 2, 1}, // 6 links
		{0xc3, 3, 1, 2},       // permutation with a live eirtmp0
		{0x02, 1, 2, 0, 3},    // rotate into net0
		{0x03, 0x81, 0x0a, 4, 2},
		{0x45, 7, 8, 9, 0x4a, 1, 2, 0},
		{0x05, 5, 0, 1, 2, 3, 4, 6},
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ls, want, perm := fuzzCase(data)
		steps, problems := Plan(ls, want)
		checkPlan(t, ls, want, steps, problems)
		if perm != nil {
			if len(problems) != 0 {
				t.Fatalf("permutation %v: problems %v", perm, problems)
			}
			if len(steps) != minSteps(perm) {
				t.Fatalf("permutation %v: %d steps %v, want %d", perm, len(steps), steps, minSteps(perm))
			}
		}
	})
}

func TestValidName(t *testing.T) {
	for _, tt := range []struct {
		name string
		ok   bool
	}{
		{"eth0", true},
		{"enp0s3", true},
		{"br-lan.100", true},
		{"a", true},
		{"fifteen-bytes-x", true},
		{"sixteen-bytes-xx", false},
		{"", false},
		{".", false},
		{"..", false},
		{"...", true},
		{"a/b", false},
		{"a b", false},
		{"a\tb", false},
		{"a\x00b", false},
		{"eth%d", false},
		{"eth0:0", false},
		{`a"b`, false},
		{`a\b`, false},
		{"é", false},
	} {
		if err := ValidName(tt.name); (err == nil) != tt.ok {
			t.Errorf("ValidName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}
