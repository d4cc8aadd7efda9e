package netcfg

import "io/fs"

// File is a file to write into a root: what the renderers produce
// (render.File is this type), the persistent NIC names (nic.PersistLinks)
// and the drop-ins, so the network pipeline (internal/network) handles one list.
// Path is absolute within the root ("/etc/systemd/network/10-cloud-init-eth0.network").
type File struct {
	Path string
	Data []byte
	Mode fs.FileMode
}
