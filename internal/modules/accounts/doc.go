// Package accounts holds the config modules for users and their access:
// users_groups, set_passwords (and post_password), ssh (host keys, root's
// and the users' authorized_keys, sshd's password authentication),
// ssh_import_id, ssh_authkey_fingerprints and keys_to_console.
package accounts
