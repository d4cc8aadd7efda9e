package modules

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/ccfg"
)

// setHostname is cc_set_hostname, per instance: /etc/hostname gets the
// host name (the fqdn with prefer_fqdn_over_hostname), remembered in
// previousHostnameFile, and the running system's name is set with
// hostname(1). Nothing happens with preserve_hostname.
func setHostname(ctx context.Context, e *Env) error {
	if preserve, _, err := ccfg.Decode[bool](e.Cfg, "preserve_hostname"); preserve || err != nil {
		if err == nil {
			e.logf("preserve_hostname is set: hostname left alone")
		}
		return err
	}
	name, _, ok, err := e.hostnames()
	if err != nil || !ok {
		return err
	}
	if err := e.writeHostname(name); err != nil {
		return err
	}
	return e.applyHostname(ctx, name)
}

// updateHostname is cc_update_hostname, at every boot: as set_hostname,
// but /etc/hostname is only rewritten when it still holds what earlyinit
// last wrote (an admin's change is kept), as cloud-init's
// distro.update_hostname.
func updateHostname(ctx context.Context, e *Env) error {
	if preserve, _, err := ccfg.Decode[bool](e.Cfg, "preserve_hostname"); preserve || err != nil {
		return err
	}
	name, _, ok, err := e.hostnames()
	if err != nil || !ok {
		return err
	}
	prev := readTrim(e, previousHostnameFile)
	sys := readTrim(e, "/etc/hostname")
	if sys != "" && prev != "" && sys != prev {
		e.logf("update_hostname: /etc/hostname (%s) differs from %s (%s): assuming the admin keeps it", sys, previousHostnameFile, prev)
		return nil
	}
	if prev != name {
		if err := e.Root.WriteFile(previousHostnameFile, []byte(name+"\n"), 0o644, 0, 0); err != nil {
			return err
		}
	}
	if sys == "" || (sys == prev && sys != name) {
		if err := e.keepWrite("/etc/hostname", []byte(name+"\n")); err != nil {
			return err
		}
	}
	if sys != name {
		return e.applyHostname(ctx, name)
	}
	return nil
}

func (e *Env) writeHostname(name string) error {
	if err := e.keepWrite("/etc/hostname", []byte(name+"\n")); err != nil {
		return err
	}
	return e.Root.WriteFile(previousHostnameFile, []byte(name+"\n"), 0o644, 0, 0)
}

// applyHostname sets the running system's host name: `hostname NAME`,
// as cloud-init runs it, unless the kernel already has that name (the
// initramfs wrote /etc/hostname, which systemd set at its start): the
// command would change nothing, and costs a process.
func (e *Env) applyHostname(ctx context.Context, name string) error {
	if cur, err := osHostname(); err == nil && cur == name {
		e.logf("hostname: the kernel's is %s already", name)
		return nil
	}
	_, err := e.run(ctx, Cmd{Name: "hostname", Args: []string{name}})
	return err
}
