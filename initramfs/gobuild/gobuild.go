// Package gobuild compiles earlyinit for the initramfs with the Go
// toolchain (u-root's gobusybox), for builds from this tree: make
// initramfs and the QEMU tests. The installed `earlyinit initramfs` packs
// the package's initramfs build (paths.InitrdBinary) instead, so it does
// not link this.
package gobuild

import (
	"fmt"
	"path/filepath"
	"slices"

	"github.com/u-root/gobusybox/src/pkg/golang"
)

// InitrdTag is the build tag of earlyinit's initramfs build: no TLS
// (internal/httpget's notls.go) and none of the verbs that build images and
// packages (initramfs, mkseed, setup, man), so that the generic initramfs
// stays within its 6 MB goal. The late stages run the root's installed
// earlyinit, which has them, when there is one, else a copy of this build.
// (The package's initramfs build adds tag nolate, leaving the late-stage
// runner out too: see the Makefile.)
const InitrdTag = "initrd"

// Tags are the build tags Compile uses: InitrdTag and tags.
func Tags(tags []string) []string {
	if slices.Contains(tags, InitrdTag) {
		return tags
	}
	return append([]string{InitrdTag}, tags...)
}

// Compile builds the main package pkg, with Tags(tags), into
// dir/earlyinit, as mkuimage did: static, stripped, reproducible, without
// inlining (9% smaller; earlyinit waits on devices, not on CPU). It
// returns the binary's path.
func Compile(pkg string, tags []string, dir string) (string, error) {
	if pkg == "" {
		return "", fmt.Errorf("no package to build earlyinit from")
	}
	out := filepath.Join(dir, "earlyinit")
	env := golang.Default(golang.DisableCGO(), golang.WithBuildTag(Tags(tags)...))
	if err := env.Build(out, []string{pkg}, &golang.BuildOpts{}); err != nil {
		return "", fmt.Errorf("build %s: %w", pkg, err)
	}
	return out, nil
}
