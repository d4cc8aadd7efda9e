// Package repos holds the config modules for package sources and
// packages: apt_configure, yum_add_repo, zypper_add_repo, apk_configure,
// package_update_upgrade_install and wireguard (whose tools it installs).
package repos
