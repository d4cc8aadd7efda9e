//go:build !nolate

package provision

// LateRunner says whether this build carries the late-stage runner (the
// late and single verbs, the modules): every build but the package's
// initramfs one (build tags initrd,nolate). That one is only ever packed
// for roots with the package, whose /usr/bin/earlyinit runs the late
// stages.
const LateRunner = true
