package nic

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// hvNetvsc is the Hyper-V synthetic NIC driver. With accelerated networking
// a VF with the same MAC shows up beside it; as cloud-init does, the netvsc
// NIC is the one to rename and the VF is ignored.
const hvNetvsc = "hv_netvsc"

// Plan computes renames so that every MAC in want (MAC -> desired name) ends
// up with that name. MACs in want are matched case-insensitively.
//
// The steps are collision-safe: at no point do two links share a name.
// Chains (a->b, b->c with c free) are ordered so that each rename targets a
// free name; cycles, such as a swap of eth0 and eth1, go through one
// temporary name each ("eirtmp0", ...), and no temporary name is left at the
// end. Only links in want are renamed.
//
// Entries that cannot be carried out are skipped and reported as Problems,
// while the others proceed:
//   - an invalid MAC or name (see ValidName), or a MAC given twice with
//     different names;
//   - a name wanted for more than one MAC;
//   - a MAC no live link has ("missing");
//   - a MAC more than one live link has (two NICs with one MAC, bond
//     slaves), once VLAN, bond and bridge devices are left out, unless
//     exactly one of them is a Hyper-V netvsc NIC;
//   - a name held by a link that is not being renamed (cloud-init's
//     rule: such a conflict is reported, the holder is not moved aside).
//
// Problems are sorted by MAC, then name.
func Plan(links []Link, want map[string]string) ([]Step, []Problem) {
	names, problems := normalize(want)
	skip := func(mac, name, format string, args ...any) {
		problems = append(problems, Problem{MAC: mac, Name: name, Reason: fmt.Sprintf(format, args...)})
	}

	// Match live links.
	byMAC := map[string][]Link{}
	byName := map[string]Link{}
	for _, l := range links {
		if m := linkMAC(l.MAC); m != "" {
			byMAC[m] = append(byMAC[m], l)
		}
		byName[l.Name] = l
	}
	target := map[int]string{} // link index -> wanted name
	owner := map[int]string{}  // link index -> MAC in want
	for _, mac := range sortedKeys(names) {
		name := names[mac]
		match := candidates(byMAC[mac])
		switch len(match) {
		case 0:
			skip(mac, name, "missing: no live link has this MAC")
		case 1:
			target[match[0].Index] = name
			owner[match[0].Index] = mac
		default:
			held := make([]string, len(match))
			for i, l := range match {
				held[i] = l.Name
			}
			sort.Strings(held)
			skip(mac, name, "duplicate MAC: held by %s", strings.Join(held, ", "))
		}
	}

	// A name held by a link that does not move is a conflict. Dropping an
	// entry makes its link stay, which may conflict with another entry, so
	// repeat until nothing changes.
	for changed := true; changed; {
		changed = false
		for _, idx := range sortedIndexes(target) {
			name := target[idx]
			h, ok := byName[name]
			if !ok || h.Index == idx {
				continue
			}
			if _, moves := target[h.Index]; moves {
				continue
			}
			skip(owner[idx], name, "name held by link %d (MAC %s), which is not being renamed", h.Index, linkMAC(h.MAC))
			delete(target, idx)
			changed = true
		}
	}

	steps := order(links, target, want)
	sort.Slice(problems, func(i, j int) bool {
		a, b := problems[i], problems[j]
		if a.MAC != b.MAC {
			return a.MAC < b.MAC
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Reason < b.Reason
	})
	return steps, problems
}

// normalize checks want on its own, without the live links: it returns the
// usable entries by normalised MAC, and Problems for invalid MACs and names,
// a MAC given with different names, and a name given to several MACs.
func normalize(want map[string]string) (map[string]string, []Problem) {
	var problems []Problem
	skip := func(mac, name, format string, args ...any) {
		problems = append(problems, Problem{MAC: mac, Name: name, Reason: fmt.Sprintf(format, args...)})
	}
	raw := make([]string, 0, len(want))
	for k := range want {
		raw = append(raw, k)
	}
	sort.Strings(raw)
	names := map[string]string{}   // normal MAC -> name
	clash := map[string][]string{} // normal MAC -> distinct names, when more than one
	for _, k := range raw {
		name := want[k]
		mac, err := normalizeMAC(k)
		if err != nil {
			skip(k, name, "%v", err)
			continue
		}
		if err := ValidName(name); err != nil {
			skip(mac, name, "invalid interface name: %v", err)
			continue
		}
		prev, seen := names[mac]
		switch {
		case !seen:
			names[mac] = name
		case prev != name && len(clash[mac]) == 0:
			clash[mac] = []string{prev, name}
		case prev != name && !contains(clash[mac], name):
			clash[mac] = append(clash[mac], name)
		}
	}
	for mac, list := range clash {
		for _, name := range list {
			skip(mac, name, "MAC given more than once with different names")
		}
		delete(names, mac)
	}
	byTarget := map[string][]string{} // name -> MACs wanting it
	for mac, name := range names {
		byTarget[name] = append(byTarget[name], mac)
	}
	for name, macs := range byTarget {
		if len(macs) > 1 {
			sort.Strings(macs)
			for _, mac := range macs {
				skip(mac, name, "name wanted for more than one MAC (%s)", strings.Join(macs, ", "))
				delete(names, mac)
			}
		}
	}

	return names, problems
}

// order turns a conflict-free assignment (distinct targets, each free or
// held by a link that moves) into renames. Links whose target is free move
// first; when none is, every pending link is on a cycle, and the first one
// steps aside to a temporary name, which frees the way around its cycle.
func order(links []Link, target map[int]string, want map[string]string) []Step {
	cur := map[int]string{}    // link index -> current name
	holder := map[string]int{} // current name -> link index
	reserved := map[string]bool{}
	for _, l := range links {
		cur[l.Index] = l.Name
		holder[l.Name] = l.Index
		reserved[l.Name] = true
	}
	for _, name := range want {
		reserved[name] = true
	}
	var pending []int
	for _, idx := range sortedIndexes(target) {
		if cur[idx] != target[idx] {
			pending = append(pending, idx)
		}
	}
	// Process by wanted name for a stable, readable order.
	sort.Slice(pending, func(i, j int) bool { return target[pending[i]] < target[pending[j]] })

	var steps []Step
	temp := map[int]bool{} // links sent to a temporary name
	rename := func(idx int, to string) {
		from := cur[idx]
		steps = append(steps, Step{From: from, To: to})
		delete(holder, from)
		holder[to] = idx
		cur[idx] = to
	}
	for len(pending) > 0 {
		progress := false
		rest := pending[:0]
		for _, idx := range pending {
			if _, held := holder[target[idx]]; held {
				rest = append(rest, idx)
				continue
			}
			rename(idx, target[idx])
			progress = true
		}
		pending = rest
		if progress || len(pending) == 0 {
			continue
		}
		// Stuck: every pending link's target is held by another pending
		// link, so they all lie on cycles, and none is at a temporary name
		// (a link at one has freed its old name, so its cycle can advance).
		if temp[pending[0]] {
			break // cannot happen for a conflict-free assignment; never loop
		}
		rename(pending[0], tempName(holder, reserved))
		temp[pending[0]] = true
	}
	return steps
}

// tempName returns the first "eirtmpN" that no link holds now or at the
// start, and that is not a wanted name.
func tempName(holder map[string]int, reserved map[string]bool) string {
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s%d", tmpPrefix, i)
		if _, held := holder[name]; !held && !reserved[name] {
			return name
		}
	}
}

// upperKinds are link kinds that take the MAC of a link below them (a
// VLAN, a bond, a bridge) and are never renamed by MAC: cloud-init's
// get_interfaces leaves them out before it looks for duplicate MACs.
var upperKinds = []string{"vlan", "bond", "bridge"}

// candidates returns the links, among those sharing one MAC, that a rename by
// that MAC may apply to: without VLAN, bond and bridge devices when another
// link remains, then the one Hyper-V netvsc NIC if there is exactly one.
// More than one candidate left is a duplicate MAC: cloud-init raises
// ("duplicate mac found!") and renames nothing; Plan skips that entry.
func candidates(match []Link) []Link {
	if len(match) <= 1 {
		return match
	}
	var lower []Link
	for _, l := range match {
		if !slices.Contains(upperKinds, l.Kind) {
			lower = append(lower, l)
		}
	}
	if len(lower) > 0 {
		match = lower
	}
	return preferNetvsc(match)
}

// preferNetvsc keeps the one Hyper-V netvsc NIC among links sharing a MAC,
// if there is exactly one; otherwise it returns match unchanged.
func preferNetvsc(match []Link) []Link {
	var nv []Link
	for _, l := range match {
		if l.Driver == hvNetvsc {
			nv = append(nv, l)
		}
	}
	if len(nv) == 1 {
		return nv
	}
	return match
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedIndexes(m map[int]string) []int {
	keys := make([]int, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	return keys
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
