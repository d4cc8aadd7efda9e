// Package gobuild compiles earlyinit for the initramfs with the Go
// toolchain (u-root's gobusybox), for builds from this tree: make
// initramfs and the QEMU tests. The installed binary packs itself instead
// (initramfs.Options.Binary), so it does not link this.
package gobuild

import (
	"fmt"
	"path/filepath"

	"github.com/u-root/gobusybox/src/pkg/golang"
)

// Compile builds the main package pkg with tags into dir/earlyinit, as
// mkuimage did: static, stripped, reproducible, without inlining (9%
// smaller; earlyinit waits on devices, not on CPU). It returns the
// binary's path.
func Compile(pkg string, tags []string, dir string) (string, error) {
	if pkg == "" {
		return "", fmt.Errorf("no package to build earlyinit from")
	}
	out := filepath.Join(dir, "earlyinit")
	env := golang.Default(golang.DisableCGO(), golang.WithBuildTag(tags...))
	if err := env.Build(out, []string{pkg}, &golang.BuildOpts{}); err != nil {
		return "", fmt.Errorf("build %s: %w", pkg, err)
	}
	return out, nil
}
