//go:build !initrd

package main

import (
	"io"

	"github.com/earlyinit/earlyinit/internal/pyyaml"
)

// cliFormats tells that this build has the cloud-init output formats
// (status --format yaml, query --format, analyze's show, blame and dump).
const cliFormats = true

// pyYAML writes v as cloud-init status --format yaml does:
// yaml.dump(v, indent=4, explicit_start=True, explicit_end=True,
// default_flow_style=False) with the safe dumper (internal/pyyaml).
func pyYAML(w io.Writer, v any) error {
	_, err := io.WriteString(w, pyyaml.Dump(v, 4, true))
	return err
}
