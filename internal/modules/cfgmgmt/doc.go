// Package cfgmgmt holds the config modules that hand the machine to a
// configuration management system: puppet, chef, ansible, salt_minion and
// rh_subscription.
package cfgmgmt
