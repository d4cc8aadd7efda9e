package cfgmgmt

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/pyyaml"
)

// SaltMinion is cc_salt_minion (cloud-init 22.4.2), once per instance in
// the final stage (cloud_final_modules, after chef and ansible):
//
//   - pkg_name (default salt-minion) is installed through the root's
//     package manager;
//   - config_dir (default /etc/salt) is made; conf goes to
//     <config_dir>/minion and grains to <config_dir>/grains, as
//     cloud-init's safeyaml.dumps writes YAML (0644, or 0600 when a key in
//     them names a secret: password, token, key...);
//   - with both public_key and private_key, pki_dir (default
//     <config_dir>/pki/minion when that is a directory, else
//     <config_dir>/pki) is made 0700 and gets minion.pub (0644) and
//     minion.pem (0600 root: the private key, never logged);
//   - the service service_name (default salt-minion) is restarted through
//     the running init (systemctl --no-block restart, rc-service restart).
//
// Differences: minion.pem is 0600 (cloud-init chmods it 0644 inside its
// 0700 directory); a key given without the other is logged, not silently
// ignored; FreeBSD's rc.conf is not handled.
func SaltMinion(ctx context.Context, e *core.Env) error {
	sc, ok, err := ccfg.Decode[ccfg.SaltMinion](e.Cfg, "salt_minion")
	if !ok || err != nil {
		return err
	}
	pkg, svc := sc.PkgName, sc.ServiceName
	if !core.ValidServiceName(svc) {
		return fmt.Errorf("salt_minion.service_name %q: not a service name", svc)
	}
	confDir, err := core.ConfPath("salt_minion.config_dir", strings.TrimSuffix(sc.ConfigDir, "/"))
	if err != nil {
		return err
	}
	pkiDir := ""
	if sc.PKIDir != nil {
		if pkiDir, err = core.ConfPath("salt_minion.pki_dir", strings.TrimSuffix(*sc.PKIDir, "/")); err != nil {
			return err
		}
	}
	hasPub, hasPriv := sc.PublicKey != nil, sc.PrivateKey != nil

	e.Logf("salt_minion: installing %s", pkg)
	if err := installPackages(ctx, e, "salt_minion.pkg_name", []any{pkg}); err != nil {
		return fmt.Errorf("salt_minion: install: %w", err)
	}
	if err := e.Root.MkdirAll(confDir, 0o755, 0, 0); err != nil {
		return fmt.Errorf("salt_minion: %w", err)
	}
	for _, f := range []struct {
		key, file string
		v         map[string]any
	}{{"conf", "minion", sc.Conf}, {"grains", "grains", sc.Grains}} {
		v := f.v
		if v == nil {
			continue
		}
		mode := fs.FileMode(0o644)
		if hasSensitiveKey(v) {
			mode = 0o600
		}
		name := path.Join(confDir, f.file)
		if err := e.Root.WriteFile(name, []byte(pyyaml.Dump(v, 4, true)), mode, 0, 0); err != nil {
			return fmt.Errorf("salt_minion.%s: %w", f.key, err)
		}
		e.Logf("salt_minion: %s written (%#o)", name, mode)
	}

	switch {
	case hasPub && hasPriv:
		if pkiDir == "" {
			pkiDir = confDir + "/pki/minion"
			if fi, err := e.Root.Stat(pkiDir); err != nil || !fi.IsDir() {
				pkiDir = confDir + "/pki"
			}
		}
		// Under cloud-init's umask 077: every directory made is 0700.
		if err := mkdirEach(e, pkiDir, 0o700); err != nil {
			return fmt.Errorf("salt_minion: %w", err)
		}
		if err := e.Root.WriteFile(pkiDir+"/minion.pub", []byte(*sc.PublicKey), 0o644, 0, 0); err != nil {
			return fmt.Errorf("salt_minion.public_key: %w", err)
		}
		if err := e.Root.WriteFile(pkiDir+"/minion.pem", []byte(*sc.PrivateKey), 0o600, 0, 0); err != nil {
			return fmt.Errorf("salt_minion.private_key: %w", err)
		}
		e.Logf("salt_minion: the minion's keys written to %s (minion.pem 0600, not shown)", pkiDir)
	case hasPub:
		e.Logf("salt_minion: public_key without private_key: no keys written")
	case hasPriv:
		e.Logf("salt_minion: private_key without public_key: no keys written")
	}

	if err := e.ServiceAction(ctx, "restart", svc); err != nil {
		return fmt.Errorf("salt_minion: restart %s: %w", svc, err)
	}
	return nil
}

// installPackages is cloud-init's distro.install_packages(pkgs): the
// package lists refreshed once per instance (as wireguard and
// package_update_upgrade_install do), then the packages installed through
// the root's package manager. pkgs is a packages list: names or [name,
// version] pairs, each checked before anything runs.
func installPackages(ctx context.Context, e *core.Env, key string, pkgs []any) error {
	m, err := e.PackageManager()
	if err != nil {
		return err
	}
	specs, err := m.PackageSpecs(key, pkgs)
	if err != nil {
		return err
	}
	if err := e.UpdateSources(ctx, m); err != nil {
		return err
	}
	return e.RunPkg(ctx, m, "install", specs)
}

// mkdirEach makes dir and its missing parents, each with mode, owned by
// root (an existing one is left as it is).
func mkdirEach(e *core.Env, dir string, mode fs.FileMode) error {
	p := ""
	for _, c := range strings.Split(strings.Trim(dir, "/"), "/") {
		p += "/" + c
		if err := e.Root.MkdirAll(p, mode, 0, 0); err != nil {
			return err
		}
	}
	return nil
}

// hasSensitiveKey tells whether a map or list holds a key whose value may
// be a secret (instance.IsSensitiveKey, or one ending in "_private").
func hasSensitiveKey(v any) bool {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if instance.IsSensitiveKey(k) || strings.HasSuffix(strings.ToLower(k), "_private") || hasSensitiveKey(x) {
				return true
			}
		}
	case []any:
		for _, x := range t {
			if hasSensitiveKey(x) {
				return true
			}
		}
	}
	return false
}
