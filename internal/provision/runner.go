package provision

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// InstallRunner sets up the late-stage runner for this boot without
// changing the image. The late stages run the root's installed earlyinit
// (paths.InstalledBinary, the package's, with TLS) when it is there, in
// step with the package's initramfs; else a copy of the running binary in
// /run/earlyinit (/run moves into the real root), unless this is the
// package's initramfs build, which has no late-stage runner (LateRunner).
// A distribution's initramfs may mount /run noexec: there the installed
// binary is the only one that runs. With systemd as the real init, units
// in /run/systemd/system run the boot and final stages, and an installed
// cloud-init's units are masked there for this boot (cloud-final.service
// stood in for by a unit ordered after earlyinit's final stage: see
// late.MaskCloudInit); any other init is entered through `earlyinit late
// --exec INIT`, which runs the boot stage, starts the final stage in the
// background and execs INIT as PID 1. It returns what to exec at
// switch_root; on any failure, the real init itself.
func InstallRunner(env Env, init string, args []string) (string, []string) {
	var path string
	var argv []string
	err := env.Log.Step("runner", func() error {
		systemd := UsesSystemd(env.Root, init)
		bin := paths.InstalledBinary
		if !Executable(env.Root, bin) {
			if !LateRunner {
				return fmt.Errorf("the root has no %s, and this initramfs's earlyinit (the package's build) has no late-stage runner: user-data is not applied this boot (reinstall the package, or boot make initramfs's image)", paths.InstalledBinary)
			}
			bin = paths.LateBinary
			if err := copySelf(filepath.Join(env.runRoot(), bin)); err != nil {
				return err
			}
			if !httpget.TLS {
				env.Log.Printf("late stages: this earlyinit is the initramfs build, without TLS, and the root has no %s: https URLs (#include, phone_home, ssh_import_id) fail this boot", paths.InstalledBinary)
			}
		}
		if systemd {
			run, err := rootfs.Open(env.runRoot())
			if err != nil {
				return err
			}
			if err := late.InstallUnits(run, bin); err != nil {
				return fmt.Errorf("systemd units: %w", err)
			}
			env.Log.Printf("late stages: systemd units earlyinit-boot.service and earlyinit-final.service (running %s)", bin)
			maskCloudInit(env, run, bin)
			path, argv = init, args
			return nil
		}
		env.Log.Printf("late stages: %s is not systemd; entering it through %s late --exec", init, bin)
		path = bin
		argv = append([]string{"late", "--exec", init, "--"}, args...)
		return nil
	})
	if err != nil {
		return init, args
	}
	return path, argv
}

// maskCloudInit keeps an installed cloud-init from provisioning this boot a
// second time (its units masked under /run only, cloud-final.service stood
// in for by a unit ordered after earlyinit's final stage, running bin). A
// failure is logged: the boot goes on, cloud-init may then run too.
func maskCloudInit(env Env, run *rootfs.Root, bin string) {
	root, err := rootfs.Open(env.Root)
	if err == nil {
		var masked, stoodIn []string
		masked, stoodIn, err = late.MaskCloudInit(root, run, bin)
		if len(masked) > 0 {
			env.Log.Printf("cloud-init is installed: masked for this boot (%s): %s", late.SystemDir, strings.Join(masked, " "))
		}
		if len(stoodIn) > 0 {
			env.Log.Printf("cloud-init is installed: stood in for by units ordered after earlyinit's stages: %s", strings.Join(stoodIn, " "))
		}
	}
	if err != nil {
		env.Log.Errorf("cloud-init: %v", err)
	}
}

// copySelf copies the running binary to dst, 0755.
func copySelf(dst string) error {
	src, err := os.Open("/proc/self/exe")
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, src); err != nil {
		out.Close()
		return fmt.Errorf("copy earlyinit to %s: %w", dst, err)
	}
	return out.Close()
}

// UsesSystemd tells whether init, resolved inside root, is systemd: the
// late stages run as its units.
func UsesSystemd(root, init string) bool {
	p, _, _ := resolveInRoot(root, init)
	return filepath.Base(p) == "systemd"
}

// Executable tells whether p is an executable regular file in root,
// following symlinks within root (an absolute link target is
// relative to root, as it will be after switch_root).
func Executable(root, p string) bool {
	_, fi, err := resolveInRoot(root, p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// resolveInRoot follows p's symlinks inside root, an absolute target
// relative to root, at most 40 of them: it returns the path reached and
// its Lstat, or the error that stopped it (a missing file: the path is
// the dangling target).
func resolveInRoot(root, p string) (string, fs.FileInfo, error) {
	for range 40 {
		full := filepath.Join(root, p)
		fi, err := os.Lstat(full)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			return p, fi, err
		}
		t, err := os.Readlink(full)
		if err != nil {
			return p, nil, err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		p = filepath.Clean("/" + t)
	}
	return p, nil, fmt.Errorf("%s: more than 40 symbolic links", p)
}
