//go:build nolate

package provision

// LateRunner is false in the package's initramfs build (build tags
// initrd,nolate): the late stages run the root's /usr/bin/earlyinit, and
// without it they do not run (laterunner.go).
const LateRunner = false
