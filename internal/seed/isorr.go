package seed

import (
	"io/fs"
	"strings"
)

// Rock Ridge (RRIP 1.10) in the primary tree: its System Use entries
// (SUSP), which carry POSIX names, modes and symlinks.

// Rock Ridge's extensions reference (ER), in the root's continuation area:
// RRIP 1.10's identifier, as mkisofs writes it. Linux's isofs only reads
// Rock Ridge after it has seen an ER entry.
const (
	rripID     = "RRIP_1991A"
	rripDesc   = "THE ROCK RIDGE INTERCHANGE PROTOCOL PROVIDES SUPPORT FOR POSIX FILE SYSTEM SEMANTICS"
	rripSource = "PLEASE CONTACT DISC PUBLISHER FOR SPECIFICATION SOURCE.  SEE PUBLISHER IDENTIFIER IN PRIMARY VOLUME DESCRIPTOR FOR CONTACT INFORMATION."
)

// rockRidge is a child's System Use field: its attributes, name and link.
func (l *isoLayout) rockRidge(c *node) []byte {
	su := append(l.px(c), susp("NM", append([]byte{0}, c.name...))...)
	if c.mode&fs.ModeSymlink != 0 {
		su = append(su, slEntries(c.link)...)
	}
	return su
}

// px is n's Rock Ridge POSIX attributes, as `mkisofs -r` sets them.
func (l *isoLayout) px(n *node) []byte {
	const sIFDIR, sIFREG, sIFLNK = 0o040000, 0o100000, 0o120000
	var mode, links uint32
	switch {
	case n.isDir():
		mode, links = sIFDIR|0o555, 2
		for _, c := range n.children {
			if c.isDir() {
				links++
			}
		}
	case n.mode&fs.ModeSymlink != 0:
		mode, links = sIFLNK|0o777, 1
	default:
		mode, links = sIFREG|0o444, 1
		if n.mode&0o111 != 0 {
			mode |= 0o111
		}
	}
	var b []byte
	for _, v := range []uint32{mode, links, 0, 0} {
		b = append(b, both32(v)...)
	}
	return susp("PX", b)
}

// slEntries is the Rock Ridge SL entry for a symlink to target.
func slEntries(target string) []byte {
	var comps []byte
	if strings.HasPrefix(target, "/") {
		comps = append(comps, 0x08, 0) // root
	}
	for _, c := range strings.Split(target, "/") {
		switch c {
		case "":
		case ".":
			comps = append(comps, 0x02, 0)
		case "..":
			comps = append(comps, 0x04, 0)
		default:
			comps = append(comps, 0, byte(len(c)))
			comps = append(comps, c...)
		}
	}
	return susp("SL", append([]byte{0}, comps...))
}

// susp is a System Use entry: signature, length, version 1, data.
func susp(sig string, data []byte) []byte {
	return append([]byte{sig[0], sig[1], byte(4 + len(data)), 1}, data...)
}

func erLen() int { return 8 + len(rripID) + len(rripDesc) + len(rripSource) }
