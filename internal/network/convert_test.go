package network

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg"
	"github.com/earlyinit/earlyinit/internal/netcfg/render"
)

// convert is what render.Convert was, the net-convert pipeline spelt out:
// parse, validate (errors named by the kind), render.
func convert(in []byte, kind string, macToName map[string]string, renderer string) ([]netcfg.File, error) {
	r, err := render.ByName(renderer)
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

// TestNetConvert: Build as net-convert calls it (the -m MACs, the -O
// renderer, no root, no fallback) gives exactly the renderer's files, or
// the same error, for every input of the renderers' corpus and every
// renderer, and for broken inputs.
func TestNetConvert(t *testing.T) {
	type input struct {
		name, kind string
		data       []byte
		macs       map[string]string
	}
	var inputs []input
	dirs, err := filepath.Glob("../netcfg/render/testdata/corpus/*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, d := range dirs {
		macs := map[string]string{}
		if b, err := os.ReadFile(filepath.Join(d, "macs")); err == nil {
			for _, l := range strings.Fields(string(b)) {
				name, mac, _ := strings.Cut(l, ",")
				macs[strings.ToLower(mac)] = name
			}
		}
		for file, kind := range map[string]string{"network_data.json": "network_data.json", "network.yaml": "yaml", "interfaces": "eni"} {
			if b, err := os.ReadFile(filepath.Join(d, file)); err == nil {
				inputs = append(inputs, input{filepath.Base(d), kind, b, macs})
			}
		}
	}
	inputs = append(inputs,
		input{"empty yaml", "yaml", nil, map[string]string{}},
		input{"empty eni", "eni", []byte{}, map[string]string{}},
		input{"broken json", "network_data.json", []byte("{"), map[string]string{}},
		input{"invalid name", "yaml", []byte(badName), map[string]string{}},
		input{"disabled", "yaml", []byte(disabled), map[string]string{}},
		input{"ec2", "ec2", []byte(ec2JSON), map[string]string{mac2: "ens5"}},
		input{"unknown kind", "toml", []byte("x"), map[string]string{}},
	)
	for _, in := range inputs {
		for _, r := range render.Names() {
			want, wantErr := convert(in.data, in.kind, in.macs, r)
			res, err := Build(Input{Format: in.kind, Data: in.data, MACs: in.macs, Renderer: r})
			if wantErr != nil {
				if err == nil || err.Error() != wantErr.Error() {
					t.Errorf("%s/%s: Build error %v, want %v", in.name, r, err, wantErr)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s/%s: Build: %v", in.name, r, err)
				continue
			}
			if len(want) == 0 && len(res.Files) == 0 {
				continue
			}
			if !reflect.DeepEqual(res.Files, want) {
				t.Errorf("%s/%s: files differ from the renderer's:\n got %q\nwant %q", in.name, r, filePaths(res.Files), filePaths(want))
			}
		}
	}
}
