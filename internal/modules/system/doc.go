// Package system holds the config modules for the system's settings:
// set_hostname, update_hostname, update_etc_hosts, resolv_conf, timezone,
// locale, keyboard, ntp, rsyslog, ca_certs, seed_random and
// disable_ec2_metadata.
package system
