package initramfs

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/earlyinit/earlyinit/internal/kmod"
)

// HostOnly narrows the module set to what one machine uses, as dracut's
// hostonly mode: the modules it has loaded (its platform's drivers and its
// root filesystem's) and the filesystems named in FSTypes. The config-drive
// filesystems (isofs, vfat and its code pages) are always kept: a
// datasource may be attached on any boot.
type HostOnly struct {
	// Loaded are module names, as in /proc/modules.
	Loaded []string
	// FSTypes are filesystems to keep besides (the root's, say).
	FSTypes []string
}

// alwaysKept are kept by a host-only build whatever is loaded.
var alwaysKept = []string{"isofs", "udf", "vfat", "nls_cp437", "nls_ascii", "nls_iso8859-1", "nls_utf8"}

// ReadLoaded reads module names from /proc/modules' format (name first on
// each line).
func ReadLoaded(r io.Reader) ([]string, error) {
	var out []string
	s := bufio.NewScanner(r)
	for s.Scan() {
		if f := strings.Fields(s.Text()); len(f) > 0 {
			out = append(out, f[0])
		}
	}
	if err := s.Err(); err != nil {
		return nil, fmt.Errorf("loaded modules: %w", err)
	}
	return out, nil
}

// Filter returns the entries of a module set that h keeps: a name entry if
// it is wanted, a glob entry as the wanted module files it matches among
// all (the module paths of modules.dep).
func (h *HostOnly) Filter(entries, all []string) []string {
	want := map[string]bool{}
	for _, l := range [][]string{h.Loaded, h.FSTypes, alwaysKept} {
		for _, n := range l {
			want[kmod.Normalize(n)] = true
		}
	}
	var out []string
	for _, e := range entries {
		if !strings.Contains(e, "/") {
			if want[kmod.Normalize(e)] {
				out = append(out, e)
			}
			continue
		}
		for _, p := range all {
			if ok, _ := path.Match("kernel/"+e, p); ok && want[modName(p)] {
				out = append(out, modName(p))
			}
		}
	}
	return out
}

// Host returns the HostOnly of the running machine: the modules listed in
// loaded (/proc/modules) and the filesystems fstypes or, when fstypes is
// empty, the type of the filesystem holding dir according to mounts
// (/proc/self/mounts).
func Host(loaded, mounts, dir string, fstypes []string) (*HostOnly, error) {
	f, err := os.Open(loaded)
	if err != nil {
		return nil, err
	}
	names, err := ReadLoaded(f)
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", loaded, err)
	}
	h := &HostOnly{Loaded: names, FSTypes: fstypes}
	if len(fstypes) == 0 {
		m, err := os.Open(mounts)
		if err != nil {
			return nil, err
		}
		t, err := MountFSType(m, dir)
		m.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mounts, err)
		}
		h.FSTypes = []string{t}
	}
	return h, nil
}

// MountFSType returns the type of the filesystem holding dir (an absolute,
// clean path) from a mounts table in /proc/self/mounts' format: the last
// mount on the longest mount point that is dir or one of its parents.
func MountFSType(r io.Reader, dir string) (string, error) {
	dir = path.Clean("/" + dir)
	best, t := -1, ""
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64*1024), 1024*1024)
	for s.Scan() {
		f := strings.Fields(s.Text())
		if len(f) < 3 {
			continue
		}
		mp := unescapeMount(f[1])
		if !within(dir, mp) || len(mp) < best {
			continue
		}
		best, t = len(mp), f[2]
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	if t == "" {
		return "", fmt.Errorf("no mount holding %s", dir)
	}
	return t, nil
}

// within tells whether dir is mount point mp or below it.
func within(dir, mp string) bool {
	return mp == "/" || dir == mp || strings.HasPrefix(dir, mp+"/")
}

// unescapeMount undoes the octal escapes (\040 for a space) of a mount
// point in /proc/self/mounts.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
