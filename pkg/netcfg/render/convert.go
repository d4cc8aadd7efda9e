package render

import (
	"fmt"

	"github.com/earlyinit/earlyinit/pkg/netcfg"
)

// Convert is the whole of `net-convert` but the writing: it parses in (kind
// is "network_data.json", "yaml" or "eni", as cloud-init's -k), names links
// with macToName (lower-case MAC -> interface name, from the -m name,mac
// flags; may be nil) and renders with the renderer called rendererName (as
// cloud-init's -O). The CLI writes the result with WriteDir.
func Convert(in []byte, kind string, macToName map[string]string, rendererName string) ([]File, error) {
	r, err := ByName(rendererName)
	if err != nil {
		return nil, err
	}
	c, err := netcfg.Parse(kind, in, macToName)
	if err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", kind, err)
	}
	return r.Render(c)
}
