// Package coretest is the config modules' test kit: an Env on a
// temporary root with a fake Exec that records commands (and a useradd
// and groupadd that edit the root's files), file and command assertions,
// and the runners of cloud-init's own code that the oracle tests compare
// with. Only tests import it.
package coretest
