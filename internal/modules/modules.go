// Package modules holds earlyinit's late-stage config modules: what
// cloud-init's config/cc_*.py do with cloud-config once the real system
// runs (bootcmd, write_files, users and groups, SSH keys, passwords,
// hostname, /etc/hosts, resolv.conf, timezone, mounts, runcmd, scripts,
// final_message, phone_home, power_state).
//
// Every module is a function of an Env: a confined root (internal/rootfs) for
// every file it reads or writes, the merged cloud-config, and an Exec
// through which it runs the root's own tools (useradd, ssh-keygen,
// chpasswd...). Tests give a temporary directory and a fake Exec; the
// runner (internal/late) gives "/" and SystemExec. Frequencies and semaphores
// are the runner's business: a module just does its job when asked.
//
// The reference is cloud-init 22.4.2.
package modules

import (
	"context"
	"fmt"
)

// Frequency says how often a module runs, as cloud-init's frequencies.
type Frequency string

const (
	// PerInstance runs once per instance id: a semaphore under
	// instances/<iid>/sem/.
	PerInstance Frequency = "once-per-instance"
	// Always runs at every boot (cloud-init's "always"; per-boot).
	Always Frequency = "always"
	// Once runs once for the life of the root: a semaphore under sem/.
	Once Frequency = "once"
)

// ParseFrequency accepts cloud-init's names and their short forms.
func ParseFrequency(s string) (Frequency, error) {
	switch s {
	case "once-per-instance", "per-instance", "instance":
		return PerInstance, nil
	case "always", "per-boot", "boot":
		return Always, nil
	case "once", "per-once":
		return Once, nil
	}
	return "", fmt.Errorf("frequency %q: want once-per-instance, always or once", s)
}

// Stage is when a module runs.
type Stage string

const (
	// StageBoot runs early, before network-pre.target (cloud-init's
	// init-local and init stages).
	StageBoot Stage = "boot"
	// StageFinal runs after network-online.target (cloud-init's
	// modules:config and modules:final).
	StageFinal Stage = "final"
)

// ParseStage checks a stage name.
func ParseStage(s string) (Stage, error) {
	switch Stage(s) {
	case StageBoot, StageFinal:
		return Stage(s), nil
	}
	return "", fmt.Errorf("stage %q: want boot or final", s)
}

// Module is one config module.
type Module struct {
	Name      string
	Stage     Stage
	Frequency Frequency
	// Keys are the top-level cloud-config keys the module reads. A module
	// with Keys runs only when one of them is set (cloud-init's
	// activate_by_schema_keys); one without runs always.
	Keys []string
	Run  func(ctx context.Context, e *Env) error
}

// Active tells whether m has anything to do with cfg.
func (m Module) Active(cfg map[string]any) bool {
	if len(m.Keys) == 0 {
		return true
	}
	for _, k := range m.Keys {
		if _, ok := cfg[k]; ok {
			return true
		}
	}
	return false
}

// All returns every module, each stage in cloud-init's order (Debian's
// cloud.cfg: cloud_init_modules then cloud_config_modules for the boot
// stage, except runcmd; cloud_final_modules for the final stage).
func All() []Module {
	return []Module{
		{"seed_random", StageBoot, PerInstance, []string{"random_seed"}, seedRandom},
		{"bootcmd", StageBoot, Always, []string{"bootcmd"}, bootcmd},
		{"write_files", StageBoot, PerInstance, []string{"write_files"}, writeFiles},
		{"disk_setup", StageBoot, PerInstance, []string{"disk_setup", "fs_setup"}, diskSetup},
		{"mounts", StageBoot, PerInstance, []string{"mounts", "mount_default_fields", "swap"}, mounts},
		{"growpart", StageBoot, Always, []string{"growpart"}, growpartLate},
		{"set_hostname", StageBoot, PerInstance, nil, setHostname},
		{"update_hostname", StageBoot, Always, nil, updateHostname},
		{"update_etc_hosts", StageBoot, Always, []string{"manage_etc_hosts"}, updateEtcHosts},
		{"ca_certs", StageBoot, PerInstance, []string{"ca_certs", "ca-certs"}, caCerts},
		{"rsyslog", StageBoot, PerInstance, []string{"rsyslog"}, rsyslog},
		{"users_groups", StageBoot, PerInstance, nil, usersGroups},
		{"ssh", StageBoot, PerInstance, nil, ssh},
		{"keyboard", StageBoot, PerInstance, []string{"keyboard"}, keyboard},
		{"locale", StageBoot, PerInstance, []string{"locale"}, locale},
		{"set_passwords", StageBoot, PerInstance, nil, setPasswords},
		{"resolv_conf", StageBoot, PerInstance, []string{"manage_resolv_conf"}, resolvConf},
		{"ntp", StageBoot, PerInstance, []string{"ntp"}, ntp},
		{"timezone", StageBoot, PerInstance, []string{"timezone"}, timezone},

		// Repositories and packages need the network: the final stage,
		// in cloud_config_modules' order (upstream's, which has wireguard
		// first), then the package module first of cloud_final_modules.
		{"wireguard", StageFinal, PerInstance, []string{"wireguard"}, wireguard},
		{"ssh_import_id", StageFinal, PerInstance, []string{"ssh_import_id", "users", "user"}, sshImportID},
		{"rh_subscription", StageFinal, PerInstance, []string{"rh_subscription"}, rhSubscription},
		{"yum_add_repo", StageFinal, PerInstance, []string{"yum_repos"}, yumAddRepo},
		{"apt_configure", StageFinal, PerInstance, aptConfigKeys, aptConfigure},
		{"zypper_add_repo", StageFinal, Always, []string{"zypper"}, zypperAddRepo},
		{"apk_configure", StageFinal, PerInstance, []string{"apk_repos"}, apkConfigure},
		{"disable_ec2_metadata", StageFinal, Always, []string{"disable_ec2_metadata"}, disableEC2Metadata},
		{"runcmd", StageFinal, PerInstance, []string{"runcmd"}, runcmd},
		{"package_update_upgrade_install", StageFinal, PerInstance, []string{"apt_update", "package_update", "apt_upgrade", "package_upgrade", "packages"}, packageUpdateUpgradeInstall},
		{"write_files_deferred", StageFinal, PerInstance, []string{"write_files"}, writeFilesDeferred},
		{"puppet", StageFinal, PerInstance, []string{"puppet"}, puppet},
		{"chef", StageFinal, Always, []string{"chef"}, chef},
		{"ansible", StageFinal, PerInstance, []string{"ansible"}, ansible},
		{"salt_minion", StageFinal, PerInstance, []string{"salt_minion"}, saltMinion},
		{"scripts_per_once", StageFinal, Once, nil, scriptsPerOnce},
		{"scripts_per_boot", StageFinal, Always, nil, scriptsPerBoot},
		{"scripts_per_instance", StageFinal, PerInstance, nil, scriptsPerInstance},
		{"scripts_user", StageFinal, PerInstance, nil, scriptsUser},
		{"ssh_authkey_fingerprints", StageFinal, PerInstance, nil, sshAuthkeyFingerprints},
		{"keys_to_console", StageFinal, PerInstance, nil, keysToConsole},
		{"post_password", StageFinal, PerInstance, []string{"earlyinit"}, postPassword},
		{"phone_home", StageFinal, PerInstance, []string{"phone_home"}, phoneHome},
		{"final_message", StageFinal, Always, nil, finalMessage},
		{"power_state", StageFinal, PerInstance, []string{"power_state"}, powerState},
	}
}

// EarlyinitOnly tells whether cloud-init has no module of m's name
// (post_password): an image's module lists, written for cloud-init, cannot
// name it, so it runs in its place in All's order whenever its stage runs.
func (m Module) EarlyinitOnly() bool {
	return m.Name == "post_password"
}

// Lookup returns the module named name ("-" and "_" are the same, and
// cloud-init's "cc_" prefix is allowed).
func Lookup(name string) (Module, bool) {
	n := CanonicalName(name)
	for _, m := range All() {
		if m.Name == n {
			return m, true
		}
	}
	return Module{}, false
}

// CanonicalName is the name of earlyinit's module for a module name as
// cloud-config and cloud.cfg's module lists spell it: "-" is "_", a "cc_"
// prefix goes, and cloud-init's names for modules earlyinit names
// otherwise are mapped (power_state_change is power_state, users is
// users_groups). A name earlyinit has no module for comes back in the
// same form.
func CanonicalName(name string) string {
	n := canonName(name)
	aliases := map[string]string{"power_state_change": "power_state", "users": "users_groups"}
	if a, ok := aliases[n]; ok {
		n = a
	}
	return n
}

func canonName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == '-' {
			b[i] = '_'
		}
	}
	s = string(b)
	if len(s) > 3 && s[:3] == "cc_" {
		s = s[3:]
	}
	return s
}

// BaseConfig is the built-in configuration, under the image's own
// (cloud.cfg, see internal/imagecfg) and user-data: the default user is
// created and root cannot log in by SSH, as in every distribution's
// cloud.cfg.
func BaseConfig() map[string]any {
	return map[string]any{
		"users":             []any{"default"},
		"disable_root":      true,
		"preserve_hostname": false,
	}
}
