package render_test

import (
	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/network"
)

// init gives the package's tests render.Convert: net-convert's pipeline, as
// cmd/earlyinit's netconvert.go runs it.
func init() {
	render.Convert = func(in []byte, kind string, macToName map[string]string, renderer string) ([]render.File, error) {
		if _, err := render.ByName(renderer); err != nil {
			return nil, err
		}
		res, err := network.Build(network.Input{Format: kind, Data: in, MACs: macToName, Renderer: renderer})
		if err != nil {
			return nil, err
		}
		return res.Files, nil
	}
}
