package imagecfg

import (
	"io/fs"
	"path"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/netcfg/render"
)

// LoadRoot is Load from the root file system at dir, read with the size
// caps of outside data (datasource.DriveFS), without earlyinit's own
// cloud.cfg.d drop-in for an installed cloud-init
// (render.CloudInitDropInPath): that file is not the image's wish. The
// boot's stages, `schema --image` and `render` all read the image so.
func LoadRoot(dir string) (*Config, error) {
	return Load(hideFS{FS: datasource.DriveFS(dir, 0), hidden: strings.TrimPrefix(render.CloudInitDropInPath, "/")})
}

// hideFS is an fs.FS without one file: Open, Stat and ReadDir do not see
// it.
type hideFS struct {
	fs.FS
	hidden string // a name in FS
}

func (h hideFS) Open(name string) (fs.File, error) {
	if path.Clean(name) == h.hidden {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return h.FS.Open(name)
}

func (h hideFS) Stat(name string) (fs.FileInfo, error) {
	if path.Clean(name) == h.hidden {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
	}
	return fs.Stat(h.FS, name)
}

func (h hideFS) ReadDir(name string) ([]fs.DirEntry, error) {
	ents, err := fs.ReadDir(h.FS, name)
	kept := ents[:0]
	for _, e := range ents {
		if path.Join(path.Clean(name), e.Name()) != h.hidden {
			kept = append(kept, e)
		}
	}
	return kept, err
}
