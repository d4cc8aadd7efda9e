package seed

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"io/fs"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

const (
	isoSector = 2048
	// isoPad is the zero sectors after the last file, as mkisofs and
	// xorriso add (-pad, 300 KiB) so that a kernel's read-ahead past
	// the end stays inside the volume.
	isoPad = 150
	// isoJolietMax is Joliet's name length limit, in UCS-2 units.
	isoJolietMax = 64
	// isoMaxLabel is the volume identifier's length; Joliet's holds 16
	// UCS-2 characters of it.
	isoMaxLabel = 32
)

// ISO writes an ISO 9660 image of files to w, labelled label, with Rock
// Ridge (POSIX names, modes and symlinks, as `mkisofs -r`: owner root,
// everything readable, nothing writable) and Joliet (names for Windows;
// symlinks left out), dated t.
//
// ISO 9660's own names are made-up 8.3 ones (level 1), unique in each
// directory; readers use the Rock Ridge or Joliet names. label is kept as
// given (mkisofs does so too: "cidata" stays lower case); it must be 1 to
// 32 printable ASCII characters, and Joliet's copy is its first 16.
func ISO(w io.Writer, label string, t time.Time, files []File) error {
	if err := checkISOLabel(label); err != nil {
		return err
	}
	root, err := buildTree(files)
	if err != nil {
		return err
	}
	l := &isoLayout{t: t.UTC(), label: label}
	if err := l.plan(root); err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := bw.Write(l.meta); err != nil {
		return fmt.Errorf("write ISO image: %w", err)
	}
	var zero [isoSector]byte
	for _, f := range l.files {
		if _, err := bw.Write(f.data); err != nil {
			return fmt.Errorf("write ISO image: %s: %w", f.path, err)
		}
		if pad := int(sectors(int64(len(f.data))))*isoSector - len(f.data); pad > 0 {
			if _, err := bw.Write(zero[:pad]); err != nil {
				return fmt.Errorf("write ISO image: %w", err)
			}
		}
	}
	for range isoPad {
		if _, err := bw.Write(zero[:]); err != nil {
			return fmt.Errorf("write ISO image: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write ISO image: %w", err)
	}
	return nil
}

func checkISOLabel(label string) error {
	if label == "" || len(label) > isoMaxLabel {
		return fmt.Errorf("ISO volume label %q: want 1 to %d characters", label, isoMaxLabel)
	}
	for _, c := range []byte(label) {
		if c < 0x20 || c > 0x7e {
			return fmt.Errorf("ISO volume label %q: only printable ASCII characters", label)
		}
	}
	return nil
}

// sectors is how many 2048-byte sectors n bytes take.
func sectors(n int64) int64 { return (n + isoSector - 1) / isoSector }

// isoDir is one directory as written in one of the two trees.
type isoDir struct {
	n      *node
	parent *isoDir
	num    int   // path table number, 1 for the root
	lba    int64 // its extent
	size   int64 // bytes, a whole number of sectors
}

// isoLayout places everything and builds the image's metadata (all that
// comes before the files' data) in meta.
type isoLayout struct {
	t     time.Time
	label string
	// isoName and jolietName are each node's identifier in the two trees.
	isoName, jolietName map[*node][]byte
	// fileLBA is each regular file's extent.
	fileLBA map[*node]int64
	// files are the regular files in the order of their data.
	files []*node
	meta  []byte
}

// isoCELBA is the root's continuation area (the ER entry): sectors 16-18
// are the primary, Joliet and terminator descriptors; after it come the
// four path tables, then the two trees' directories, then the files.
const isoCELBA = 19

// plan names every node in both trees, places the path tables, the
// directories and the files, and builds the metadata.
func (l *isoLayout) plan(root *node) error {
	l.isoName = map[*node][]byte{}
	l.jolietName = map[*node][]byte{}
	l.fileLBA = map[*node]int64{}
	if err := walk(root, l.names); err != nil {
		return err
	}
	primary := dirsBFS(root, l.isoID)
	joliet := dirsBFS(root, l.jolietID)

	lba := int64(isoCELBA + 1)
	ptSize := [2]int64{pathTableSize(primary, l.isoID), pathTableSize(joliet, l.jolietID)}
	ptLBA := [4]int64{}
	for i, size := range []int64{ptSize[0], ptSize[0], ptSize[1], ptSize[1]} {
		ptLBA[i] = lba
		lba += sectors(size)
	}
	// A directory's size depends on its children's records only, not on
	// where anything is, so sizes come first and extents after.
	for _, d := range primary {
		d.size = l.dirSize(d, false)
	}
	for _, d := range joliet {
		d.size = l.dirSize(d, true)
	}
	for _, ds := range [][]*isoDir{primary, joliet} {
		for _, d := range ds {
			d.lba = lba
			lba += d.size / isoSector
		}
	}
	lba, err := l.placeFiles(root, lba)
	if err != nil {
		return err
	}
	total := lba + isoPad
	if total > math.MaxUint32 {
		return fmt.Errorf("ISO image too large: %d sectors", total)
	}
	l.meta = l.buildMeta(primary, joliet, total, ptSize, ptLBA)
	return nil
}

// isoID is c's identifier in the primary tree.
func (l *isoLayout) isoID(c *node) []byte { return l.isoName[c] }

// jolietID is c's identifier in the Joliet tree.
func (l *isoLayout) jolietID(c *node) []byte { return l.jolietName[c] }

// placeFiles gives the regular files their extents, in tree order, from
// sector lba on, and returns the sector after the last.
func (l *isoLayout) placeFiles(root *node, lba int64) (int64, error) {
	err := walk(root, func(n *node) error {
		if n.mode.Type() != 0 {
			return nil
		}
		if int64(len(n.data)) > math.MaxUint32 {
			return fmt.Errorf("%s: %d bytes, more than an ISO 9660 extent holds", n.path, len(n.data))
		}
		l.fileLBA[n] = lba
		l.files = append(l.files, n)
		lba += sectors(int64(len(n.data)))
		return nil
	})
	return lba, err
}

// buildMeta is everything before the files' data: the descriptors, the
// ER entry, the path tables (sizes ptSize, primary then Joliet; at ptLBA,
// each tree's little-endian one then its big-endian one) and the
// directories. total is the image's size in sectors.
func (l *isoLayout) buildMeta(primary, joliet []*isoDir, total int64, ptSize [2]int64, ptLBA [4]int64) []byte {
	meta := make([]byte, primary[0].lba*isoSector)
	put := func(at int64, b []byte) { copy(meta[at*isoSector:], b) }
	put(16, l.descriptor(1, primary[0], total, ptSize[0], ptLBA[0], ptLBA[1]))
	put(17, l.descriptor(2, joliet[0], total, ptSize[1], ptLBA[2], ptLBA[3]))
	put(18, append([]byte{255}, "CD001\x01"...))
	put(isoCELBA, susp("ER", append([]byte{byte(len(rripID)), byte(len(rripDesc)), byte(len(rripSource)), 1},
		rripID+rripDesc+rripSource...)))
	put(ptLBA[0], pathTable(primary, l.isoID, binary.LittleEndian))
	put(ptLBA[1], pathTable(primary, l.isoID, binary.BigEndian))
	put(ptLBA[2], pathTable(joliet, l.jolietID, binary.LittleEndian))
	put(ptLBA[3], pathTable(joliet, l.jolietID, binary.BigEndian))
	dirOf := func(ds []*isoDir) map[*node]*isoDir {
		m := map[*node]*isoDir{}
		for _, d := range ds {
			m[d.n] = d
		}
		return m
	}
	pm, jm := dirOf(primary), dirOf(joliet)
	for _, d := range primary {
		meta = append(meta, l.dirExtent(d, pm, false, isoCELBA)...)
	}
	for _, d := range joliet {
		meta = append(meta, l.dirExtent(d, jm, true, 0)...)
	}
	return meta
}

// names gives n's children their identifiers in both trees.
func (l *isoLayout) names(n *node) error {
	if !n.isDir() {
		return nil
	}
	usedISO := map[string]bool{}
	usedJoliet := map[string]bool{}
	for _, c := range n.children {
		id := isoIdentifier(c.name, c.isDir(), usedISO)
		usedISO[id] = true
		l.isoName[c] = []byte(id)
		// No continuation areas here: a record (255 bytes at most)
		// holds the name and the link target whole.
		if n := len(l.record(l.isoName[c], 0, 0, false, l.rockRidge(c))); n > 255 {
			return fmt.Errorf("%s: name and link target too long for one ISO 9660 directory record (%d bytes, 255 at most)", c.path, n)
		}
		if c.mode&fs.ModeSymlink != 0 {
			continue // not in the Joliet tree
		}
		u := utf16.Encode([]rune(strings.Map(jolietChar, c.name)))
		if len(u) > isoJolietMax {
			return fmt.Errorf("%s: name longer than %d characters, Joliet's limit", c.path, isoJolietMax)
		}
		if !c.isDir() {
			u = append(u, ';', '1')
		}
		b := make([]byte, 2*len(u))
		for i, r := range u {
			binary.BigEndian.PutUint16(b[2*i:], r)
		}
		if usedJoliet[string(b)] {
			return fmt.Errorf("%s: same Joliet name as another file in its directory", c.path)
		}
		usedJoliet[string(b)] = true
		l.jolietName[c] = b
	}
	return nil
}

// jolietChar maps the characters Joliet does not allow in names to "_".
func jolietChar(r rune) rune {
	if r < 0x20 || strings.ContainsRune(`*/:;?\`, r) {
		return '_'
	}
	return r
}

// isoIdentifier makes a level 1 identifier for name: upper case d-characters,
// 8.3 for a file (with ";1") and 8 for a directory, made unique in used by a
// number at the end of the base.
func isoIdentifier(name string, dir bool, used map[string]bool) string {
	clean := func(s string, n int) string {
		s = strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z':
				return r - 'a' + 'A'
			case r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
				return r
			}
			return '_'
		}, s)
		if len(s) > n {
			s = s[:n]
		}
		return s
	}
	base, ext := name, ""
	if !dir {
		if i := strings.LastIndexByte(name, '.'); i > 0 {
			base, ext = name[:i], name[i+1:]
		}
	}
	base, ext = clean(base, 8), clean(ext, 3)
	if base == "" {
		base = "_"
	}
	id := func(b string) string {
		if dir {
			return b
		}
		return b + "." + ext + ";1"
	}
	if !used[id(base)] {
		return id(base)
	}
	for i := 1; ; i++ {
		s := strconv.Itoa(i)
		b := base
		if len(b)+len(s) > 8 {
			b = b[:8-len(s)]
		}
		if !used[id(b+s)] {
			return id(b + s)
		}
	}
}

// dirsBFS lists the directories breadth first, each level ordered by
// parent number then name, as the path table wants them, and numbers them.
func dirsBFS(root *node, name func(*node) []byte) []*isoDir {
	ds := []*isoDir{{n: root, num: 1}}
	ds[0].parent = ds[0]
	for i := 0; i < len(ds); i++ {
		var subs []*node
		for _, c := range ds[i].n.children {
			if c.isDir() {
				subs = append(subs, c)
			}
		}
		slices.SortFunc(subs, func(a, b *node) int { return bytes.Compare(name(a), name(b)) })
		for _, c := range subs {
			ds = append(ds, &isoDir{n: c, parent: ds[i], num: len(ds) + 1})
		}
	}
	return ds
}

func pathTableSize(ds []*isoDir, name func(*node) []byte) int64 {
	var n int64
	for _, d := range ds {
		id := pathID(d, name)
		n += int64(8 + len(id) + len(id)%2)
	}
	return n
}

func pathID(d *isoDir, name func(*node) []byte) []byte {
	if d.num == 1 {
		return []byte{0}
	}
	return name(d.n)
}

func pathTable(ds []*isoDir, name func(*node) []byte, order binary.ByteOrder) []byte {
	var b []byte
	for _, d := range ds {
		id := pathID(d, name)
		rec := make([]byte, 8+len(id)+len(id)%2)
		rec[0] = byte(len(id))
		order.PutUint32(rec[2:], uint32(d.lba))
		order.PutUint16(rec[6:], uint16(d.parent.num))
		copy(rec[8:], id)
		b = append(b, rec...)
	}
	return b
}

// entries are a directory's records in order: ".", "..", then children
// sorted by their identifiers (symlinks left out of Joliet's).
func (l *isoLayout) entries(d *isoDir, joliet bool) []*node {
	name := l.isoName
	if joliet {
		name = l.jolietName
	}
	var cs []*node
	for _, c := range d.n.children {
		if _, ok := name[c]; ok {
			cs = append(cs, c)
		}
	}
	slices.SortFunc(cs, func(a, b *node) int { return bytes.Compare(name[a], name[b]) })
	return cs
}

// dirSize is the size of d's extent: records never cross a sector.
func (l *isoLayout) dirSize(d *isoDir, joliet bool) int64 {
	recs := l.records(d, nil, joliet, 0)
	return int64(len(packSectors(recs)))
}

func (l *isoLayout) dirExtent(d *isoDir, dirs map[*node]*isoDir, joliet bool, ceLBA int64) []byte {
	return packSectors(l.records(d, dirs, joliet, ceLBA))
}

// packSectors lays records out in whole sectors, moving a record that would
// cross a sector boundary to the next sector.
func packSectors(recs [][]byte) []byte {
	var out []byte
	used := 0
	for _, r := range recs {
		if used+len(r) > isoSector {
			out = append(out, make([]byte, isoSector-used)...)
			used = 0
		}
		out = append(out, r...)
		used += len(r)
	}
	if used > 0 {
		out = append(out, make([]byte, isoSector-used)...)
	}
	return out
}

// records builds d's directory records. dirs is nil while sizing (extents
// are not known yet; sizes do not depend on them).
func (l *isoLayout) records(d *isoDir, dirs map[*node]*isoDir, joliet bool, ceLBA int64) [][]byte {
	extent := func(n *node) (lba, size int64) {
		if dirs == nil {
			return 0, 0
		}
		if n.isDir() {
			x := dirs[n]
			return x.lba, x.size
		}
		if n.mode.Type() == 0 {
			return l.fileLBA[n], int64(len(n.data))
		}
		return 0, 0
	}
	var recs [][]byte
	self, parent := d.n, d.parent.n
	lba, size := extent(self)
	var su []byte
	if !joliet {
		if d.num == 1 {
			su = append(su, susp("SP", []byte{0xbe, 0xef, 0})...)
		}
		su = append(su, l.px(self)...)
		if d.num == 1 {
			su = append(su, susp("CE", append(append(both32(uint32(ceLBA)), both32(0)...), both32(uint32(erLen()))...))...)
		}
	}
	recs = append(recs, l.record([]byte{0}, lba, size, true, su))
	lba, size = extent(parent)
	su = nil
	if !joliet {
		su = l.px(parent)
	}
	recs = append(recs, l.record([]byte{1}, lba, size, true, su))
	for _, c := range l.entries(d, joliet) {
		lba, size := extent(c)
		var su []byte
		id := l.jolietName[c]
		if !joliet {
			id, su = l.isoName[c], l.rockRidge(c)
		}
		recs = append(recs, l.record(id, lba, size, c.isDir(), su))
	}
	return recs
}

// record is one directory record.
func (l *isoLayout) record(id []byte, lba, size int64, dir bool, su []byte) []byte {
	n := 33 + len(id)
	if n%2 == 1 {
		n++
	}
	r := make([]byte, n, n+len(su)+1)
	copy(r[2:], both32(uint32(lba)))
	copy(r[10:], both32(uint32(size)))
	copy(r[18:], l.recordDate())
	if dir {
		r[25] = 2
	}
	copy(r[28:], both16(1))
	r[32] = byte(len(id))
	copy(r[33:], id)
	r = append(r, su...)
	if len(r)%2 == 1 {
		r = append(r, 0)
	}
	r[0] = byte(len(r))
	return r
}

func (l *isoLayout) recordDate() []byte {
	t := l.t
	return []byte{byte(t.Year() - 1900), byte(t.Month()), byte(t.Day()), byte(t.Hour()), byte(t.Minute()), byte(t.Second()), 0}
}

func both16(v uint16) []byte {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint16(b, v)
	binary.BigEndian.PutUint16(b[2:], v)
	return b
}

func both32(v uint32) []byte {
	b := make([]byte, 8)
	binary.LittleEndian.PutUint32(b, v)
	binary.BigEndian.PutUint32(b[4:], v)
	return b
}

// descriptor is the primary (typ 1) or Joliet (typ 2) volume descriptor.
func (l *isoLayout) descriptor(typ byte, root *isoDir, total, ptSize, ptL, ptM int64) []byte {
	vd := make([]byte, isoSector)
	vd[0] = typ
	copy(vd[1:], "CD001\x01")
	text := func(off, n int, s string) {
		if typ == 1 {
			copy(vd[off:off+n], fmt.Sprintf("%-*s", n, s))
			return
		}
		u := utf16.Encode([]rune(s))
		for i := 0; i+1 < n; i += 2 {
			c := uint16(' ')
			if i/2 < len(u) {
				c = u[i/2]
			}
			binary.BigEndian.PutUint16(vd[off+i:], c)
		}
		if n%2 == 1 {
			vd[off+n-1] = 0
		}
	}
	text(8, 32, "LINUX")
	label := l.label
	if typ == 2 && len(label) > 16 {
		label = label[:16]
	}
	text(40, 32, label)
	copy(vd[80:], both32(uint32(total)))
	if typ == 2 {
		copy(vd[88:], "%/E") // UCS-2 level 3
	}
	copy(vd[120:], both16(1))
	copy(vd[124:], both16(1))
	copy(vd[128:], both16(isoSector))
	copy(vd[132:], both32(uint32(ptSize)))
	binary.LittleEndian.PutUint32(vd[140:], uint32(ptL))
	binary.BigEndian.PutUint32(vd[148:], uint32(ptM))
	rec := l.record([]byte{0}, root.lba, root.size, true, nil)
	copy(vd[156:190], rec)
	for _, f := range []struct{ off, n int }{{190, 128}, {318, 128}, {446, 128}, {702, 37}, {739, 37}, {776, 37}} {
		text(f.off, f.n, "")
	}
	text(574, 128, "EARLYINIT MKSEED")
	date := []byte(l.t.Format("20060102150405") + "00\x00")
	copy(vd[813:], date)
	copy(vd[830:], date)
	copy(vd[847:], "0000000000000000\x00")
	copy(vd[864:], "0000000000000000\x00")
	vd[881] = 1
	return vd
}
