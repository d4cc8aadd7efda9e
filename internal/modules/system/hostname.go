package system

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// SetHostname is cc_set_hostname, per instance: /etc/hostname gets the
// host name (the fqdn with prefer_fqdn_over_hostname), remembered in
// previousHostnameFile, and the running system's name is set with
// hostname(1). Nothing happens with preserve_hostname.
func SetHostname(ctx context.Context, e *core.Env) error {
	if preserve, _, err := ccfg.Decode[bool](e.Cfg, "preserve_hostname"); preserve || err != nil {
		if err == nil {
			e.Logf("preserve_hostname is set: hostname left alone")
		}
		return err
	}
	name, _, ok, err := e.Hostnames()
	if err != nil || !ok {
		return err
	}
	if err := writeHostname(e, name); err != nil {
		return err
	}
	return applyHostname(ctx, e, name)
}

// UpdateHostname is cc_update_hostname, at every boot: as set_hostname,
// but /etc/hostname is only rewritten when it still holds what earlyinit
// last wrote (an admin's change is kept), as cloud-init's
// distro.update_hostname.
func UpdateHostname(ctx context.Context, e *core.Env) error {
	if preserve, _, err := ccfg.Decode[bool](e.Cfg, "preserve_hostname"); preserve || err != nil {
		return err
	}
	name, _, ok, err := e.Hostnames()
	if err != nil || !ok {
		return err
	}
	prev := core.ReadTrim(e, core.PreviousHostnameFile)
	sys := core.ReadTrim(e, "/etc/hostname")
	if sys != "" && prev != "" && sys != prev {
		e.Logf("update_hostname: /etc/hostname (%s) differs from %s (%s): assuming the admin keeps it", sys, core.PreviousHostnameFile, prev)
		return nil
	}
	if prev != name {
		if err := e.Root.WriteFile(core.PreviousHostnameFile, []byte(name+"\n"), 0o644, 0, 0); err != nil {
			return err
		}
	}
	if sys == "" || (sys == prev && sys != name) {
		if err := e.KeepWrite("/etc/hostname", []byte(name+"\n")); err != nil {
			return err
		}
	}
	if sys != name {
		return applyHostname(ctx, e, name)
	}
	return nil
}

func writeHostname(e *core.Env, name string) error {
	if err := e.KeepWrite("/etc/hostname", []byte(name+"\n")); err != nil {
		return err
	}
	return e.Root.WriteFile(core.PreviousHostnameFile, []byte(name+"\n"), 0o644, 0, 0)
}

// applyHostname sets the running system's host name: `hostname NAME`,
// as cloud-init runs it, unless the kernel already has that name (the
// initramfs wrote /etc/hostname, which systemd set at its start): the
// command would change nothing, and costs a process.
func applyHostname(ctx context.Context, e *core.Env, name string) error {
	if cur, err := core.OsHostname(); err == nil && cur == name {
		e.Logf("hostname: the kernel's is %s already", name)
		return nil
	}
	_, err := e.Run(ctx, core.Cmd{Name: "hostname", Args: []string{name}})
	return err
}
