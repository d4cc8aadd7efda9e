package selinux

import "github.com/earlyinit/earlyinit/internal/rootfs"

// Load reads, all at once (not deferred), the SELinux file contexts of the root at dir. It returns nil
// and no error when the root has no /etc/selinux/config or it says
// SELINUX=disabled. Every file is read inside the root (rootfs: symlinks
// resolved in it), each at most MaxFileSize bytes. Errors name the file,
// and the line and key where there is one.
func Load(dir string) (*Policy, error) {
	r, err := rootfs.Open(dir)
	if err != nil {
		return nil, err
	}
	c, err := readConfig(r)
	if err != nil || c == nil {
		return nil, err
	}
	return load(r, *c, false)
}
