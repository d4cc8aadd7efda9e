// Package seed writes small filesystem images in pure Go: ISO 9660 with
// Rock Ridge and Joliet (as `genisoimage -J -r` and cloud-localds make
// them) and FAT16 (vfat, with long names). They hold cloud-init seeds
// (NoCloud's "cidata", OpenStack's "config-2") that `earlyinit mkseed`
// builds, and the QEMU tests' drives.
//
// The writers take the whole tree in memory ([]File) and are made for a
// few files and directories: no hard links, no multi-extent files, no
// device nodes. Symbolic links are kept on ISO 9660 (Rock Ridge) and
// refused on FAT.
package seed

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// File is one entry of an image's tree.
type File struct {
	// Name is the slash-separated path from the image's root ("openstack/
	// latest/user_data"); its parents need not be listed.
	Name string
	// Mode holds the type (fs.ModeDir, fs.ModeSymlink, or none for a
	// regular file) and the permission bits. ISO 9660 keeps only whether
	// a file is executable, as `mkisofs -r` does; FAT keeps nothing.
	Mode fs.FileMode
	// Data is a regular file's content.
	Data []byte
	// Link is a symbolic link's target.
	Link string
}

// node is one entry of the tree built from []File.
type node struct {
	name     string // the last path element; "" for the root
	path     string // from the root, for errors
	mode     fs.FileMode
	data     []byte
	link     string
	parent   *node
	children []*node // sorted by name
}

func (n *node) isDir() bool { return n.mode.IsDir() }

// buildTree checks files and arranges them as a tree, implicit parents
// made directories (0755).
func buildTree(files []File) (*node, error) {
	root := &node{mode: fs.ModeDir | 0o755}
	byPath := map[string]*node{"": root}
	var get func(p string) (*node, error)
	get = func(p string) (*node, error) {
		if n, ok := byPath[p]; ok {
			if !n.isDir() {
				return nil, fmt.Errorf("%s: not a directory, but a parent of other files", p)
			}
			return n, nil
		}
		dir, name := path.Split(p)
		parent, err := get(strings.TrimSuffix(dir, "/"))
		if err != nil {
			return nil, err
		}
		n := &node{name: name, path: p, mode: fs.ModeDir | 0o755, parent: parent}
		parent.children = append(parent.children, n)
		byPath[p] = n
		return n, nil
	}
	for _, f := range files {
		if f.Name == "" || f.Name == "." || !fs.ValidPath(f.Name) || strings.ContainsRune(f.Name, 0) {
			return nil, fmt.Errorf("%q: not a valid path in an image (slash-separated, relative, no . or .. elements)", f.Name)
		}
		switch t := f.Mode.Type(); t {
		case 0, fs.ModeDir, fs.ModeSymlink:
		default:
			return nil, fmt.Errorf("%s: file type %v cannot be written (regular files, directories and symlinks only)", f.Name, t)
		}
		if f.Mode&fs.ModeSymlink != 0 && (f.Link == "" || strings.ContainsRune(f.Link, 0)) {
			return nil, fmt.Errorf("%s: symlink with an empty or invalid target", f.Name)
		}
		if n, ok := byPath[f.Name]; ok {
			// A directory made implicitly may be listed after its
			// children; anything else twice is an error.
			if n.isDir() && f.Mode.IsDir() && n != root {
				n.mode = f.Mode
				continue
			}
			return nil, fmt.Errorf("%s: listed twice", f.Name)
		}
		dir, name := path.Split(f.Name)
		parent, err := get(strings.TrimSuffix(dir, "/"))
		if err != nil {
			return nil, err
		}
		n := &node{name: name, path: f.Name, mode: f.Mode, data: f.Data, link: f.Link, parent: parent}
		parent.children = append(parent.children, n)
		byPath[f.Name] = n
	}
	var sortTree func(n *node)
	sortTree = func(n *node) {
		slices.SortFunc(n.children, func(a, b *node) int { return strings.Compare(a.name, b.name) })
		for _, c := range n.children {
			sortTree(c)
		}
	}
	sortTree(root)
	return root, nil
}

// walk calls f for n and everything under it, parents first.
func walk(n *node, f func(*node) error) error {
	if err := f(n); err != nil {
		return err
	}
	for _, c := range n.children {
		if err := walk(c, f); err != nil {
			return err
		}
	}
	return nil
}

// ReadDir reads the tree under dir into Files: regular files with their
// content, directories, and symbolic links as links (never followed).
// Anything else (a device node, a FIFO, a socket) is an error naming it.
func ReadDir(dir string) ([]File, error) {
	var files []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		f := File{Name: filepath.ToSlash(rel), Mode: info.Mode()}
		switch t := info.Mode().Type(); t {
		case fs.ModeDir:
		case fs.ModeSymlink:
			if f.Link, err = os.Readlink(p); err != nil {
				return err
			}
		case 0:
			if f.Data, err = os.ReadFile(p); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s: file type %v cannot go into an image", p, t)
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read tree %s: %w", dir, err)
	}
	return files, nil
}
