package repos

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// Wireguard is cc_wireguard (cloud-init 22.4.2), once per instance in the
// final stage (cloud-init's config stage: it may install packages):
//
//   - wireguard.interfaces is a list of {name, config_path, content}, all
//     strings; every entry is checked before anything is done: name as
//     wg-quick wants an interface name (1-15 of A-Z a-z 0-9 _ = + . -),
//     config_path an absolute file path;
//   - without wg in the root, the package lists are refreshed and
//     wireguard-tools installed (and wireguard, the DKMS module, on a
//     kernel older than 5.6);
//   - the wireguard kernel module is loaded unless /proc/modules has it;
//   - each content goes to its config_path, 0600 root:root (it holds the
//     interface's private key: no log line, error or status shows it),
//     then systemctl enables and starts wg-quick@NAME;
//   - each wireguard.readinessprobe command runs with sh -c; those that
//     fail are the module's error, after all have run.
//
// Unlike cloud-init, the interfaces are enabled through systemd only: on
// another init the error says so after the files are written.
func Wireguard(ctx context.Context, e *core.Env) error {
	wg, ok, err := ccfg.Decode[*ccfg.Wireguard](e.Cfg, "wireguard")
	if err != nil || !ok {
		return err
	}
	ifaces, err := wgInterfaces(wg.Interfaces)
	if err != nil {
		return err
	}
	probes, err := wg.ReadinessProbe.Strings("wireguard.readinessprobe", false)
	if err != nil {
		return err
	}
	if _, ok := e.Tool("wg"); !ok {
		if err := installWireguard(ctx, e); err != nil {
			return fmt.Errorf("wireguard: no wg in the root, and installing it failed: %w", err)
		}
	}
	if err := loadWireguard(ctx, e); err != nil {
		return err
	}
	for i, w := range ifaces {
		if err := e.Root.WriteFile(w.path, []byte(w.content), 0o600, 0, 0); err != nil {
			return fmt.Errorf("wireguard.interfaces.%d: %w", i, err)
		}
		e.Logf("wireguard: %s written (0600) for %s", w.path, w.name)
		if e.RunningInit() != "systemd" {
			return fmt.Errorf("wireguard.interfaces.%d: wg-quick@%s: systemd is not running: earlyinit enables WireGuard interfaces through systemd only", i, w.name)
		}
		svc := "wg-quick@" + w.name
		for _, verb := range []string{"enable", "start"} {
			out, err := e.Run(ctx, core.Cmd{Name: "systemctl", Args: []string{verb, svc}})
			e.Out().Write(out)
			if err != nil {
				return fmt.Errorf("wireguard.interfaces.%d: %w", i, err)
			}
		}
		e.Logf("wireguard: %s enabled and started", svc)
	}
	var errs []error
	for i, p := range probes {
		out, err := e.Run(ctx, core.Cmd{Name: "sh", Args: []string{"-c", p}})
		e.Out().Write(out)
		if err != nil {
			errs = append(errs, fmt.Errorf("wireguard.readinessprobe.%d: %w", i, err))
		}
	}
	if len(probes) > 0 && len(errs) == 0 {
		e.Logf("wireguard: %d readiness probe(s) passed", len(probes))
	}
	return errors.Join(errs...)
}

// wgInterface is one wireguard.interfaces entry, checked.
type wgInterface struct{ name, path, content string }

// wgInterfaces checks wireguard.interfaces as cloud-init's
// supplemental_schema_validation does (each entry's Err), and the name
// and path further, every entry's errors together. Messages name keys,
// never content's value.
func wgInterfaces(list []ccfg.WireguardInterface) ([]wgInterface, error) {
	if list == nil {
		return nil, errors.New("wireguard.interfaces: want a list, got null")
	}
	var out []wgInterface
	var errs []error
	for i, it := range list {
		if it.Err != nil {
			errs = append(errs, it.Err)
			continue
		}
		w := wgInterface{it.Name, it.ConfigPath, it.Content}
		if !wgName(w.name) {
			errs = append(errs, fmt.Errorf("wireguard.interfaces.%d.name %q: want an interface name, 1 to 15 of A-Z a-z 0-9 _ = + . -", i, w.name))
			continue
		}
		if _, err := core.ConfPath(fmt.Sprintf("wireguard.interfaces.%d.config_path", i), w.path); err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, w)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// wgName is wg-quick's rule for an interface name: ^[a-zA-Z0-9_=+.-]{1,15}$.
func wgName(s string) bool {
	return len(s) >= 1 && len(s) <= 15 && core.AlnumOr(s, "_=+.-")
}

// installWireguard is maybe_install_wireguard_packages: the package lists
// refreshed (once per instance), then wireguard-tools, and wireguard on a
// kernel older than 5.6.
func installWireguard(ctx context.Context, e *core.Env) error {
	m, err := e.PackageManager()
	if err != nil {
		return err
	}
	if err := e.UpdateSources(ctx, m); err != nil {
		return err
	}
	pkgs := []string{"wireguard-tools"}
	if core.KernelOlder(core.UnameRelease(), 5, 6) {
		pkgs = append(pkgs, "wireguard")
	}
	return e.RunPkg(ctx, m, "install", pkgs)
}

// loadWireguard loads the wireguard module unless /proc/modules lists it
// (cloud-init greps lsmod).
func loadWireguard(ctx context.Context, e *core.Env) error {
	if b, err := e.Root.ReadFile("/proc/modules"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "wireguard ") {
				return nil
			}
		}
	}
	out, err := e.Run(ctx, core.Cmd{Name: "modprobe", Args: []string{"wireguard"}})
	e.Out().Write(out)
	if err != nil {
		return fmt.Errorf("wireguard: load the kernel module: %w", err)
	}
	return nil
}
