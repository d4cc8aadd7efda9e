// Package modules is the registry of earlyinit's late-stage config
// modules: what cloud-init's config/cc_*.py do with cloud-config once the
// real system runs. All lists them in cloud-init's order with their stage,
// frequency and the keys that activate them.
//
// The modules live in one package per family (accounts, cfgmgmt, disks,
// repos, scripts, system) around a shared core (internal/modules/core).
// Every module is a function of a core.Env: a confined root
// (internal/rootfs) for every file it reads or writes, the merged
// cloud-config, and an Exec through which it runs the root's own tools
// (useradd, ssh-keygen, chpasswd...). Tests give a temporary directory and
// a fake Exec (internal/modules/coretest); the runner (internal/late) gives
// "/" and SystemExec. Frequencies and semaphores are the runner's
// business: a module just does its job when asked.
//
// The reference is cloud-init 22.4.2.
package modules

import (
	"context"
	"fmt"

	"github.com/earlyinit/earlyinit/internal/modules/accounts"
	"github.com/earlyinit/earlyinit/internal/modules/cfgmgmt"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/disks"
	"github.com/earlyinit/earlyinit/internal/modules/repos"
	"github.com/earlyinit/earlyinit/internal/modules/scripts"
	"github.com/earlyinit/earlyinit/internal/modules/system"
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
	Run  func(ctx context.Context, e *core.Env) error
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
		{"seed_random", StageBoot, PerInstance, []string{"random_seed"}, system.SeedRandom},
		{"bootcmd", StageBoot, Always, []string{"bootcmd"}, scripts.Bootcmd},
		{"write_files", StageBoot, PerInstance, []string{"write_files"}, scripts.WriteFiles},
		{"disk_setup", StageBoot, PerInstance, []string{"disk_setup", "fs_setup"}, disks.DiskSetup},
		{"mounts", StageBoot, PerInstance, []string{"mounts", "mount_default_fields", "swap"}, disks.Mounts},
		{"growpart", StageBoot, Always, []string{"growpart"}, disks.Growpart},
		{"set_hostname", StageBoot, PerInstance, nil, system.SetHostname},
		{"update_hostname", StageBoot, Always, nil, system.UpdateHostname},
		{"update_etc_hosts", StageBoot, Always, []string{"manage_etc_hosts"}, system.UpdateEtcHosts},
		{"ca_certs", StageBoot, PerInstance, []string{"ca_certs", "ca-certs"}, system.CACerts},
		{"rsyslog", StageBoot, PerInstance, []string{"rsyslog"}, system.Rsyslog},
		{"users_groups", StageBoot, PerInstance, nil, accounts.UsersGroups},
		{"ssh", StageBoot, PerInstance, nil, accounts.SSH},
		{"keyboard", StageBoot, PerInstance, []string{"keyboard"}, system.Keyboard},
		{"locale", StageBoot, PerInstance, []string{"locale"}, system.Locale},
		{"set_passwords", StageBoot, PerInstance, nil, accounts.SetPasswords},
		{"resolv_conf", StageBoot, PerInstance, []string{"manage_resolv_conf"}, system.ResolvConf},
		{"ntp", StageBoot, PerInstance, []string{"ntp"}, system.NTP},
		{"timezone", StageBoot, PerInstance, []string{"timezone"}, system.Timezone},

		// Repositories and packages need the network: the final stage,
		// in cloud_config_modules' order (upstream's, which has wireguard
		// first), then the package module first of cloud_final_modules.
		{"wireguard", StageFinal, PerInstance, []string{"wireguard"}, repos.Wireguard},
		{"ssh_import_id", StageFinal, PerInstance, []string{"ssh_import_id", "users", "user"}, accounts.SSHImportID},
		{"rh_subscription", StageFinal, PerInstance, []string{"rh_subscription"}, cfgmgmt.RHSubscription},
		{"yum_add_repo", StageFinal, PerInstance, []string{"yum_repos"}, repos.YumAddRepo},
		{"apt_configure", StageFinal, PerInstance, repos.AptConfigKeys, repos.AptConfigure},
		{"zypper_add_repo", StageFinal, Always, []string{"zypper"}, repos.ZypperAddRepo},
		{"apk_configure", StageFinal, PerInstance, []string{"apk_repos"}, repos.ApkConfigure},
		{"disable_ec2_metadata", StageFinal, Always, []string{"disable_ec2_metadata"}, system.DisableEC2Metadata},
		{"runcmd", StageFinal, PerInstance, []string{"runcmd"}, scripts.Runcmd},
		{"package_update_upgrade_install", StageFinal, PerInstance, []string{"apt_update", "package_update", "apt_upgrade", "package_upgrade", "packages"}, repos.PackageUpdateUpgradeInstall},
		{"write_files_deferred", StageFinal, PerInstance, []string{"write_files"}, scripts.WriteFilesDeferred},
		{"puppet", StageFinal, PerInstance, []string{"puppet"}, cfgmgmt.Puppet},
		{"chef", StageFinal, Always, []string{"chef"}, cfgmgmt.Chef},
		{"ansible", StageFinal, PerInstance, []string{"ansible"}, cfgmgmt.Ansible},
		{"salt_minion", StageFinal, PerInstance, []string{"salt_minion"}, cfgmgmt.SaltMinion},
		{"scripts_per_once", StageFinal, Once, nil, scripts.ScriptsPerOnce},
		{"scripts_per_boot", StageFinal, Always, nil, scripts.ScriptsPerBoot},
		{"scripts_per_instance", StageFinal, PerInstance, nil, scripts.ScriptsPerInstance},
		{"scripts_user", StageFinal, PerInstance, nil, scripts.ScriptsUser},
		{"ssh_authkey_fingerprints", StageFinal, PerInstance, nil, accounts.SSHAuthkeyFingerprints},
		{"keys_to_console", StageFinal, PerInstance, nil, accounts.KeysToConsole},
		{"post_password", StageFinal, PerInstance, []string{"earlyinit"}, accounts.PostPassword},
		{"phone_home", StageFinal, PerInstance, []string{"phone_home"}, scripts.PhoneHome},
		{"final_message", StageFinal, Always, nil, scripts.FinalMessage},
		{"power_state", StageFinal, PerInstance, []string{"power_state"}, scripts.PowerState},
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
