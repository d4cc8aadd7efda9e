package seed

import (
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

const (
	fatSector      = 512
	fatRootEntries = 512 // 16 KiB of root directory, as mkfs.fat gives FAT16
	fatReserved    = 1
	fatCopies      = 2
	// FAT16 is what the cluster count makes it: 4085 to 65524 clusters
	// (fewer is FAT12, more FAT32, to every reader).
	fat16MinClusters = 4085
	fat16MaxClusters = 65524
	// fatMinSize and fatMaxSize bound a FAT16 image with 512-byte sectors:
	// the smallest holds 4085 one-sector clusters, the largest 65524 of
	// 32 KiB.
	fatMinSize = 4 << 20
	fatMaxSize = 2 << 30
)

// FAT writes a FAT16 filesystem of size bytes, labelled label, holding
// files, to w at offset 0, dated t (local times in FAT are written as t's
// UTC time). Names are kept with VFAT long names; every file also gets a
// unique 8.3 name. Symlinks are refused.
//
// Every metadata byte (boot sector, both FATs, root directory, directory
// clusters) and the files' clusters are written; free clusters are left as
// they are, so w need not be zeroed. The caller makes w size bytes long
// (a truncated file). size must be within fatMinSize and fatMaxSize; see
// FATSize for the smallest that holds files.
//
// label is the FAT volume label, 1 to 11 characters of upper case letters,
// digits, space and "-_!#$%&'()@^{}~" (mkfs.fat's own advice: lower case
// labels do not work everywhere).
func FAT(w io.WriterAt, size int64, label string, t time.Time, files []File) error {
	if err := checkFATLabel(label); err != nil {
		return err
	}
	root, err := buildTree(files)
	if err != nil {
		return err
	}
	g, err := fatGeometry(size)
	if err != nil {
		return err
	}
	l := &fatLayout{g: g, t: t.UTC(), label: label, first: map[*node]uint32{}, count: map[*node]uint32{}}
	if err := l.plan(root); err != nil {
		return err
	}
	return l.write(w, root)
}

// FATSize is the smallest image size, a whole number of MiB and at least
// fatMinSize, in which FAT can write files.
func FATSize(files []File) (int64, error) {
	root, err := buildTree(files)
	if err != nil {
		return 0, err
	}
	var lastErr error
	for size := int64(fatMinSize); size <= fatMaxSize; {
		g, err := fatGeometry(size)
		if err == nil {
			l := &fatLayout{g: g, first: map[*node]uint32{}, count: map[*node]uint32{}}
			if err = l.plan(root); err == nil {
				return size, nil
			}
		}
		lastErr = err
		// Grow by an eighth (whole MiB), so the result is close.
		size += max(1<<20, size/8&^(1<<20-1))
	}
	return 0, fmt.Errorf("files do not fit in a FAT16 image of %d bytes: %w", int64(fatMaxSize), lastErr)
}

func checkFATLabel(label string) error {
	if label == "" || len(label) > 11 {
		return fmt.Errorf("FAT volume label %q: want 1 to 11 characters", label)
	}
	for _, c := range label {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(" -_!#$%&'()@^{}~", c)) {
			return fmt.Errorf("FAT volume label %q: only upper case letters, digits, space and -_!#$%%&'()@^{}~", label)
		}
	}
	return nil
}

// fatGeo is a FAT16 filesystem's geometry, in sectors.
type fatGeo struct {
	total, spc, fatLen, rootSecs, dataStart uint32
	clusters                                uint32
}

func (g fatGeo) clusterBytes() int64 { return int64(g.spc) * fatSector }

// fatGeometry picks the smallest cluster that keeps the count within
// FAT16's, as mkfs.fat does.
func fatGeometry(size int64) (fatGeo, error) {
	if size < fatMinSize || size > fatMaxSize || size%fatSector != 0 {
		return fatGeo{}, fmt.Errorf("FAT16 image size %d: want a multiple of %d from %d to %d bytes", size, fatSector, int64(fatMinSize), int64(fatMaxSize))
	}
	total := uint32(size / fatSector)
	rootSecs := uint32(fatRootEntries * 32 / fatSector)
	for spc := uint32(1); spc <= 64; spc *= 2 {
		// The FAT's length depends on the cluster count, which depends
		// on the FAT's length: settle it by iterating.
		var fatLen, clusters uint32
		for range 8 {
			data := total - fatReserved - fatCopies*fatLen - rootSecs
			clusters = data / spc
			need := ((clusters+2)*2 + fatSector - 1) / fatSector
			if need == fatLen {
				break
			}
			fatLen = need
		}
		if clusters <= fat16MaxClusters {
			if clusters < fat16MinClusters {
				break
			}
			return fatGeo{total: total, spc: spc, fatLen: fatLen, rootSecs: rootSecs,
				dataStart: fatReserved + fatCopies*fatLen + rootSecs, clusters: clusters}, nil
		}
	}
	return fatGeo{}, fmt.Errorf("FAT16 image size %d: no cluster size gives %d to %d clusters", size, fat16MinClusters, fat16MaxClusters)
}

type fatLayout struct {
	g     fatGeo
	t     time.Time
	label string
	// first and count are each file's and directory's cluster chain
	// (first 0 for an empty file and for the root).
	first, count map[*node]uint32
	// short are the 8.3 names, long the LFN entries' names (nil when
	// the short name says it all).
	short map[*node][11]byte
	long  map[*node]bool
}

// plan names every entry and gives every directory and file its clusters,
// in tree order.
func (l *fatLayout) plan(root *node) error {
	l.short, l.long = map[*node][11]byte{}, map[*node]bool{}
	next := uint32(2)
	err := walk(root, func(n *node) error {
		if n.mode&fs.ModeSymlink != 0 {
			return fmt.Errorf("%s: symlinks cannot go into a FAT image", n.path)
		}
		if !n.isDir() {
			return nil
		}
		if err := l.names(n); err != nil {
			return err
		}
		entries := 0
		if n != root {
			entries = 2 // "." and ".."
		}
		for _, c := range n.children {
			entries += l.entryCount(c)
		}
		if n == root {
			entries++ // the volume label
			if entries > fatRootEntries {
				return fmt.Errorf("the root directory holds %d entries, long names included; FAT16's has room for %d", entries, fatRootEntries)
			}
		} else {
			l.count[n] = uint32(max(1, (int64(entries)*32+l.g.clusterBytes()-1)/l.g.clusterBytes()))
		}
		for _, c := range n.children {
			if !c.isDir() && c.mode.Type() == 0 {
				if int64(len(c.data)) > 0xFFFFFFFF {
					return fmt.Errorf("%s: %d bytes, more than a FAT file holds", c.path, len(c.data))
				}
				l.count[c] = uint32((int64(len(c.data)) + l.g.clusterBytes() - 1) / l.g.clusterBytes())
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	// Clusters in tree order: each directory, then its files.
	err = walk(root, func(n *node) error {
		if c := l.count[n]; c > 0 {
			if uint64(next)+uint64(c) > uint64(l.g.clusters)+2 {
				return fmt.Errorf("%s: does not fit: the %d-byte image has %d clusters of %d bytes", n.path, int64(l.g.total)*fatSector, l.g.clusters, l.g.clusterBytes())
			}
			l.first[n] = next
			next += c
		}
		return nil
	})
	return err
}

// entryCount is how many 32-byte entries c takes: its long name's and its
// short one.
func (l *fatLayout) entryCount(c *node) int {
	if !l.long[c] {
		return 1
	}
	return 1 + (len(utf16.Encode([]rune(c.name)))+12)/13
}

// fatShortChars are the characters an 8.3 name may hold, letters and
// digits aside.
const fatShortChars = "$%'-_@~`!(){}^#&"

// names gives n's children their 8.3 names: the name itself when it is a
// valid upper case 8.3 name; else, with a long name, its upper case form
// when that is a valid 8.3 name not taken; else a basis with ~N, as
// Windows and Linux make them.
func (l *fatLayout) names(n *node) error {
	used := map[[11]byte]bool{}
	for _, c := range n.children {
		u16 := utf16.Encode([]rune(c.name))
		if len(u16) > 255 {
			return fmt.Errorf("%s: name longer than 255 characters, VFAT's limit", c.path)
		}
		for _, r := range c.name {
			if r < 0x20 || strings.ContainsRune(`"*/:<>?\|`, r) {
				return fmt.Errorf("%s: character %q cannot be in a FAT name", c.path, r)
			}
		}
		if strings.TrimRight(c.name, ". ") != c.name {
			return fmt.Errorf("%s: a FAT name cannot end in a dot or space", c.path)
		}
		if sn, ok := shortName(strings.ToUpper(c.name)); ok && !used[sn] {
			used[sn] = true
			l.short[c] = sn
			l.long[c] = strings.ToUpper(c.name) != c.name
			continue
		}
		base, ext := c.name, ""
		if i := strings.LastIndexByte(c.name, '.'); i > 0 {
			base, ext = c.name[:i], c.name[i+1:]
		}
		clean := func(s string, n int) string {
			var b strings.Builder
			for _, r := range strings.ToUpper(s) {
				switch {
				case r == ' ' || r == '.':
					continue
				case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r < 0x80 && strings.ContainsRune(fatShortChars, r):
					b.WriteRune(r)
				default:
					b.WriteByte('_')
				}
			}
			s = b.String()
			if len(s) > n {
				s = s[:n]
			}
			return s
		}
		base, ext = clean(base, 8), clean(ext, 3)
		if base == "" {
			base = "_"
		}
		found := false
		for i := 1; i < 1000000; i++ {
			tail := "~" + strconv.Itoa(i)
			b := base
			if len(b)+len(tail) > 8 {
				b = b[:8-len(tail)]
			}
			var sn [11]byte
			copy(sn[:], fmt.Sprintf("%-8s%-3s", b+tail, ext))
			if !used[sn] {
				used[sn], l.short[c], l.long[c], found = true, sn, true, true
				break
			}
		}
		if !found {
			return fmt.Errorf("%s: no free 8.3 name", c.path)
		}
	}
	return nil
}

// shortName returns s as an 11-byte 8.3 entry name if it is a valid one.
func shortName(s string) ([11]byte, bool) {
	var sn [11]byte
	base, ext, dot := strings.Cut(s, ".")
	if base == "" || len(base) > 8 || len(ext) > 3 || (dot && ext == "") || strings.Contains(ext, ".") {
		return sn, false
	}
	for _, r := range base + ext {
		if !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r < 0x80 && strings.ContainsRune(fatShortChars, r)) {
			return sn, false
		}
	}
	copy(sn[:], fmt.Sprintf("%-8s%-3s", base, ext))
	return sn, true
}

func (l *fatLayout) date() (date, tm uint16) {
	t := l.t
	if t.Year() < 1980 {
		return 1<<5 | 1, 0 // 1980-01-01, FAT's epoch
	}
	return uint16((t.Year()-1980)<<9 | int(t.Month())<<5 | t.Day()), uint16(t.Hour()<<11 | t.Minute()<<5 | t.Second()/2)
}

// entry is a short directory entry.
func (l *fatLayout) entry(name [11]byte, attr byte, cluster, size uint32) []byte {
	e := make([]byte, 32)
	copy(e, name[:])
	e[11] = attr
	d, tm := l.date()
	le := binary.LittleEndian
	le.PutUint16(e[14:], tm)
	le.PutUint16(e[16:], d)
	le.PutUint16(e[18:], d)
	le.PutUint16(e[22:], tm)
	le.PutUint16(e[24:], d)
	le.PutUint16(e[26:], uint16(cluster))
	le.PutUint32(e[28:], size)
	return e
}

// lfnEntries are the long name entries for name, last part first, that
// come before the short entry sn.
func lfnEntries(name string, sn [11]byte) []byte {
	var sum byte
	for _, c := range sn {
		sum = (sum&1)<<7 + sum>>1 + c
	}
	u := utf16.Encode([]rune(name))
	n := (len(u) + 12) / 13
	if len(u)%13 != 0 {
		u = append(u, 0)
		for len(u)%13 != 0 {
			u = append(u, 0xFFFF)
		}
	}
	var out []byte
	for i := n; i >= 1; i-- {
		e := make([]byte, 32)
		e[0] = byte(i)
		if i == n {
			e[0] |= 0x40
		}
		e[11], e[13] = 0x0F, sum
		part := u[(i-1)*13 : i*13]
		offs := []int{1, 3, 5, 7, 9, 14, 16, 18, 20, 22, 24, 28, 30}
		for j, c := range part {
			binary.LittleEndian.PutUint16(e[offs[j]:], c)
		}
		out = append(out, e...)
	}
	return out
}

// dirBytes is directory n's content.
func (l *fatLayout) dirBytes(n *node, root bool) []byte {
	var b []byte
	if root {
		var lab [11]byte
		copy(lab[:], fmt.Sprintf("%-11s", l.label))
		b = append(b, l.entry(lab, 0x08, 0, 0)...)
	} else {
		dot, dotdot := [11]byte{}, [11]byte{}
		copy(dot[:], ".          ")
		copy(dotdot[:], "..         ")
		b = append(b, l.entry(dot, 0x10, l.first[n], 0)...)
		b = append(b, l.entry(dotdot, 0x10, l.first[n.parent], 0)...) // 0 for the root
	}
	for _, c := range n.children {
		if l.long[c] {
			b = append(b, lfnEntries(c.name, l.short[c])...)
		}
		if c.isDir() {
			b = append(b, l.entry(l.short[c], 0x10, l.first[c], 0)...)
		} else {
			b = append(b, l.entry(l.short[c], 0x20, l.first[c], uint32(len(c.data)))...)
		}
	}
	return b
}

func (l *fatLayout) write(w io.WriterAt, root *node) error {
	g := l.g
	le := binary.LittleEndian
	at := func(off int64, b []byte) error {
		if _, err := w.WriteAt(b, off); err != nil {
			return fmt.Errorf("write FAT image at %d: %w", off, err)
		}
		return nil
	}

	bs := make([]byte, fatSector)
	copy(bs, []byte{0xEB, 0x3C, 0x90})
	copy(bs[3:], "MSWIN4.1")
	le.PutUint16(bs[11:], fatSector)
	bs[13] = byte(g.spc)
	le.PutUint16(bs[14:], fatReserved)
	bs[16] = fatCopies
	le.PutUint16(bs[17:], fatRootEntries)
	if g.total < 0x10000 {
		le.PutUint16(bs[19:], uint16(g.total))
	} else {
		le.PutUint32(bs[32:], g.total)
	}
	bs[21] = 0xF8
	le.PutUint16(bs[22:], uint16(g.fatLen))
	le.PutUint16(bs[24:], 32) // sectors per track and heads: mkfs.fat's
	le.PutUint16(bs[26:], 64) // for an image
	bs[36] = 0x80
	bs[38] = 0x29
	le.PutUint32(bs[39:], uint32(l.t.Unix())) // the serial: the time, as mkfs.fat
	copy(bs[43:], fmt.Sprintf("%-11s", l.label))
	copy(bs[54:], "FAT16   ")
	bs[510], bs[511] = 0x55, 0xAA
	if err := at(0, bs); err != nil {
		return err
	}

	fat := make([]byte, int64(g.fatLen)*fatSector)
	le.PutUint16(fat[0:], 0xFFF8)
	le.PutUint16(fat[2:], 0xFFFF)
	for n, first := range l.first {
		c := l.count[n]
		for i := range c {
			next := uint16(0xFFFF)
			if i+1 < c {
				next = uint16(first + i + 1)
			}
			le.PutUint16(fat[2*(first+i):], next)
		}
	}
	for i := range int64(fatCopies) {
		if err := at((fatReserved+i*int64(g.fatLen))*fatSector, fat); err != nil {
			return err
		}
	}

	rootDir := make([]byte, int64(g.rootSecs)*fatSector)
	copy(rootDir, l.dirBytes(root, true))
	if err := at(int64(fatReserved+fatCopies*g.fatLen)*fatSector, rootDir); err != nil {
		return err
	}
	clusterOff := func(c uint32) int64 {
		return (int64(g.dataStart) + int64(c-2)*int64(g.spc)) * fatSector
	}
	return walk(root, func(n *node) error {
		first, ok := l.first[n]
		if !ok {
			return nil
		}
		var b []byte
		if n.isDir() {
			b = make([]byte, int64(l.count[n])*g.clusterBytes())
			copy(b, l.dirBytes(n, false))
		} else {
			b = n.data
		}
		return at(clusterOff(first), b)
	})
}
