// Package sshd reads and edits sshd's configuration as sshd itself reads
// it (sshd_config with its Include drop-ins and Match blocks, bounded in
// depth, files and visits), sets options in earlyinit's own drop-in or in
// place, and reloads the service through the running init. The ssh and
// set_passwords modules (internal/modules/accounts) use it for
// ssh_pwauth and host certificates.
package sshd
