//go:build initrd

package main

import (
	"errors"
	"io"

	"github.com/earlyinit/earlyinit/internal/paths"
)

// The initramfs builds leave out the CLI's cloud-init output formats:
// analyze blame, show and dump, status --format yaml and query --format
// (some 100 KB of binary, issue 29). Their flags are the same in every
// build; asked for one of these, the initramfs build names the binary
// that has it.

// cliFormats tells that this build has the cloud-init output formats.
const cliFormats = false

// analyzeShowFormat is cloud-init analyze show's default --format.
const analyzeShowFormat = "%I%D @%Es +%ds"

// errNotInInitrd says that what was asked is in the installed binary.
func errNotInInitrd(what string) error {
	return errors.New(what + " is not in this build (the initramfs's): run " + paths.InstalledBinary)
}

func analyzeEvents(io.Writer, string, analyzeOpts) error {
	return errNotInInitrd("analyze blame, show and dump")
}

func pyYAML(io.Writer, any) error { return errNotInInitrd("--format yaml") }

type queryPart struct{}

func parseQueryFormat(string) ([]queryPart, error) { return nil, errNotInInitrd("query --format") }

func renderQueryFormat([]byte, []queryPart) (string, []string, error) {
	return "", nil, errNotInInitrd("query --format")
}
