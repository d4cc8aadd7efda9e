package initramfs

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/earlyinit/earlyinit/pkg/kmod"
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
var alwaysKept = []string{"isofs", "vfat", "nls_cp437", "nls_ascii", "nls_iso8859-1", "nls_utf8"}

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
