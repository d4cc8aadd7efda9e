// Package core is what every config module runs with: the Env (a
// confined root, the merged cloud-config, the instance, an Exec for the
// root's own tools, the logs), the command runner, the readers of
// cloud-config values cloud-init's modules share (util.is_true, str(),
// get_cfg_option_list...), the root's distribution and init system, its
// users and groups, the host name and the package manager.
//
// The modules themselves live in the family packages beside it
// (accounts, cfgmgmt, disks, repos, scripts, system); internal/modules is
// their registry. core imports none of them.
package core
