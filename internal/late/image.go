package late

import (
	"fmt"
	"slices"
	"sort"

	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// The image's own configuration (/etc/cloud/cloud.cfg and cloud.cfg.d,
// earlyinit.cfg; see internal/imagecfg) in the late stage:
//
//   - it is the system configuration user-data merges over: user-data over
//     vendor-data over the image's files over core.BaseConfig, as
//     cloud-init's ConfigMerger (baseConfig, processUserData);
//   - the default user is system_info.default_user of that merged
//     configuration (so user-data may change it, as in cloud-init), else
//     the default of the root's distribution (imagecfg.DefaultUser);
//   - its module lists (cloud_init_modules, cloud_config_modules,
//     cloud_final_modules), or user-data's, decide which of earlyinit's
//     modules run and in which order within each stage (planModules).

// imageInternalKeys are top-level keys of a cloud.cfg that configure
// cloud-init itself (its logs, where its .d directory is): nothing to do
// for earlyinit, and no note about them.
var imageInternalKeys = []string{
	"_log", "log_cfgs", "def_log_file", "syslog_fix_perms",
	"conf_d", "vendor_data2",
}

// imageOnlyKeys are top-level keys earlyinit reads from the image's
// configuration, which the user-data schema calls not supported (in
// user-data they act on nothing in earlyinit, nor in cloud-init for
// most): the datasource search is the initramfs's (and
// disable_vmware_customization the ovf source's), the module lists and
// system_info are read from the merged configuration here.
var imageOnlyKeys = []string{
	"datasource", "datasource_list", "system_info", "disable_vmware_customization",
	"cloud_init_modules", "cloud_config_modules", "cloud_final_modules",
}

// initramfsModules are cloud-init modules whose work earlyinit does in the
// initramfs, before the late stages.
var initramfsModules = []string{"growpart", "resizefs"}

// loadImage reads the image's configuration from the root, unless
// Options.Image gives it. A panic while reading it is a problem, and the
// stage goes on with none.
func (s *session) loadImage() (*imagecfg.Config, error) {
	if s.opts.Image != nil {
		return s.opts.Image, nil
	}
	var c *imagecfg.Config
	err := s.guard("image configuration", func() (err error) {
		c, err = imagecfg.LoadRoot(s.opts.Root.Dir())
		return err
	})
	if err != nil || c == nil {
		return &imagecfg.Config{Raw: map[string]any{}}, err
	}
	return c, nil
}

// baseConfig is what user-data merges over: the image's configuration
// over core.BaseConfig (cloud-init's built-in defaults under
// cloud.cfg). warn gets the merge's warnings.
func baseConfig(image map[string]any, warn func(string, ...any)) map[string]any {
	cfg, ws := userdata.MergeConfigs(image, core.BaseConfig())
	for _, w := range ws {
		warn("merge: %s", w)
	}
	return cfg
}

// defaultUser is the default user of the merged configuration cfg on a
// root whose os-release is os's.
func defaultUser(cfg map[string]any, os imagecfg.OSRelease) core.User {
	return (&imagecfg.Config{Raw: cfg, OS: os}).DefaultUser()
}

// imageNotes are the log lines about the image's configuration at boot:
// the files read, and each top-level key earlyinit does not act on.
func imageNotes(img *imagecfg.Config) []string {
	var notes []string
	if len(img.Files) > 0 {
		notes = append(notes, fmt.Sprintf("image configuration: %d file(s): %v", len(img.Files), img.Files))
	}
	for _, k := range unsupportedKeys(img) {
		notes = append(notes, "WARNING: "+k)
	}
	return notes
}

// ImageReport is what earlyinit does not act on in the image's
// configuration, one line each: a top-level key ("/etc/cloud/cloud.cfg:
// apt: not supported by earlyinit: ignored") and a module list entry
// earlyinit has no module for ("module snap (cloud_config_modules in
// /etc/cloud/cloud.cfg): not supported by earlyinit"). cloud-init's own
// settings (_log, log_cfgs, def_log_file, syslog_fix_perms, conf_d,
// vendor_data2) and system_info's keys other than default_user and
// distro (distribution internals) are not listed. The boot stage logs
// the same lines; `earlyinit schema --image` prints them.
func ImageReport(img *imagecfg.Config) []string {
	out := unsupportedKeys(img)
	unsup, _ := listNotes(modules.All(), img.ModuleLists(), func(list string) string {
		if o := img.Origin(list); o != "" {
			return o
		}
		return "the image's configuration"
	})
	return append(out, unsup...)
}

// unsupportedKeys are the top-level keys of the image's configuration
// earlyinit does not act on, "FILE: KEY: not supported by earlyinit:
// ignored", sorted by key.
func unsupportedKeys(img *imagecfg.Config) []string {
	var out []string
	keys := make([]string, 0, len(img.Raw))
	for k := range img.Raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if slices.Contains(imageInternalKeys, k) || slices.Contains(imageOnlyKeys, k) {
			continue
		}
		if supported, _ := userdata.TopLevelKey(k); supported {
			continue
		}
		where := img.Origin(k)
		if where == "" {
			where = "image configuration"
		}
		out = append(out, fmt.Sprintf("%s: %s: not supported by earlyinit: ignored", where, k))
	}
	return out
}

// listNotes are the notes on the module lists' entries earlyinit has no
// module for (all is its set): unsupported ones, and the ones whose work
// the initramfs did.
func listNotes(all []modules.Module, lists imagecfg.ModuleLists, origin func(list string) string) (unsupported, initramfs []string) {
	have := map[string]bool{}
	for _, m := range all {
		have[m.Name] = true
	}
	for _, e := range lists.All() {
		name := modules.CanonicalName(e.Name)
		switch {
		case have[name]:
		case slices.Contains(initramfsModules, name):
			initramfs = append(initramfs, fmt.Sprintf("module %s (%s in %s): done by earlyinit in the initramfs", e.Given, e.List, origin(e.List)))
		default:
			unsupported = append(unsupported, fmt.Sprintf("module %s (%s in %s): not supported by earlyinit", e.Given, e.List, origin(e.List)))
		}
	}
	return unsupported, initramfs
}

// planned is a module to run and its frequency.
type planned struct {
	m    modules.Module
	freq modules.Frequency
}

// planModules orders the stage's modules (all is earlyinit's set). Without
// module lists it is all's own order. With them (lists.Set), as
// cloud-init: only the modules the lists name run, in the lists' order
// (cloud_init_modules, then cloud_config_modules, then
// cloud_final_modules), each in its own earlyinit stage, at the
// frequency an entry gives or its own. origin says where a list comes
// from, for the notes: one for each entry earlyinit has no module for,
// and one for each of the stage's modules the lists leave out. Notes on
// entries are given in the boot stage only (they are the same in both).
func planModules(all []modules.Module, lists imagecfg.ModuleLists, stage modules.Stage, origin func(list string) string) (plan []planned, notes []string) {
	if !lists.Set {
		for _, m := range all {
			if m.Stage == stage {
				plan = append(plan, planned{m, m.Frequency})
			}
		}
		return plan, nil
	}
	if stage == modules.StageBoot {
		unsup, initramfs := listNotes(all, lists, origin)
		for _, n := range unsup {
			notes = append(notes, "WARNING: "+n)
		}
		notes = append(notes, initramfs...)
	}
	byName := map[string]modules.Module{}
	for _, m := range all {
		byName[m.Name] = m
	}
	seen := map[string]bool{}
	for _, e := range lists.All() {
		m, ok := byName[modules.CanonicalName(e.Name)]
		if !ok {
			continue
		}
		if m.Stage != stage || seen[m.Name] {
			continue
		}
		seen[m.Name] = true
		freq := m.Frequency
		if e.Frequency != "" {
			if f, err := modules.ParseFrequency(e.Frequency); err == nil {
				freq = f
			}
		}
		plan = append(plan, planned{m, freq})
	}
	for i, m := range all {
		if m.Stage != stage || seen[m.Name] {
			continue
		}
		if !m.EarlyinitOnly() {
			notes = append(notes, fmt.Sprintf("module %s: in none of the module lists: not run", m.Name))
			continue
		}
		// Before the first planned module that follows it in all.
		at := len(plan)
		for j, p := range plan {
			if slices.IndexFunc(all[i+1:], func(n modules.Module) bool { return n.Name == p.m.Name }) >= 0 {
				at = j
				break
			}
		}
		plan = slices.Insert(plan, at, planned{m, m.Frequency})
	}
	return plan, notes
}
