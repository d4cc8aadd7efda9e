// Package disks holds the config modules for disks and file systems:
// disk_setup (partition tables and file systems, refusing what is not
// provably ours), growpart, mounts and swap.
package disks
