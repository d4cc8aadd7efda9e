package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"

	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// removeFile removes name (a file or a symlink, not followed) in the root
// rootDir through internal/rootfs; a missing file is no error, as cloud-init's
// del_file.
func removeFile(rootDir, name string) error {
	r, err := rootfs.Open(rootDir)
	if err != nil {
		return err
	}
	if err := r.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// removeTree removes dir and everything under it in the root rootDir,
// through internal/rootfs: a symlink is removed, never followed, and a link
// planted under a directory a user can write is refused. A missing dir is
// no error.
func removeTree(rootDir, dir string) error {
	r, err := rootfs.Open(rootDir)
	if err != nil {
		return err
	}
	var walk func(name string) error
	walk = func(name string) error {
		fi, err := r.Stat(name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.IsDir() {
			// rootfs has no ReadDir: the names come from the path, each
			// removal is confined by rootfs.
			ents, err := os.ReadDir(r.Path(name))
			if err != nil {
				return fmt.Errorf("list %s: %w", name, err)
			}
			names := make([]string, len(ents))
			for i, e := range ents {
				names[i] = e.Name()
			}
			sort.Strings(names)
			for _, n := range names {
				if err := walk(name + "/" + n); err != nil {
					return err
				}
			}
		}
		return r.Remove(name)
	}
	return walk(dir)
}
