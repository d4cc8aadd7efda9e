package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/network"
)

func init() {
	verbs["net-convert"] = &verbNetConvert
}

// verbNetConvert is the net-convert verb.
var verbNetConvert = verb{help: "convert network config, as cloud-init devel net-convert",
	flags: func() *pflag.FlagSet { return new(netConvertOpts).flags() }, run: netConvert}

// macFlags collects repeated -m name,mac flags into MAC -> name.
type macFlags map[string]string

func (m macFlags) String() string { return fmt.Sprint(map[string]string(m)) }

func (m macFlags) Type() string { return "name,mac" }

func (m macFlags) Set(v string) error {
	name, mac, ok := strings.Cut(v, ",")
	if !ok || name == "" || mac == "" {
		return fmt.Errorf("want name,mac, got %q", v)
	}
	m[strings.ToLower(strings.TrimSpace(mac))] = strings.TrimSpace(name)
	return nil
}

// netConvertOpts are cloud-init devel net-convert's flags.
type netConvertOpts struct {
	in, kind, dir, distro, out string
	macs                       macFlags
	debug                      bool
}

func (o *netConvertOpts) flags() *pflag.FlagSet {
	o.macs = macFlags{}
	fs := newFlags("net-convert")
	fs.StringVarP(&o.in, "network-data", "p", "", "the network configuration `FILE` to read")
	fileFlag(fs, "network-data")
	fs.StringVarP(&o.kind, "kind", "k", "", "its format")
	oneOf(fs, "kind", "eni", "network_data.json", "yaml")
	fs.StringVarP(&o.dir, "directory", "d", "", "the `DIR` to place the output in")
	dirFlag(fs, "directory")
	fs.StringVarP(&o.distro, "distro", "D", "", "accepted for compatibility (a `DISTRO`); the output does not depend on it")
	fs.StringVarP(&o.out, "output-kind", "O", "", "the renderer")
	oneOf(fs, "output-kind", render.Names()...)
	fs.VarP(o.macs, "mac", "m", "interface name to MAC mapping, `name,mac` (repeatable)")
	fs.BoolVar(&o.debug, "debug", false, "accepted for compatibility")
	return fs
}

// netConvert has the flags and meaning of `cloud-init devel net-convert`.
func netConvert(args []string) int {
	var o netConvertOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError("net-convert", "takes no operands, got %q", fs.Args())
	}
	in, kind, dir, out, macs := o.in, o.kind, o.dir, o.out, o.macs
	var missing []string
	for flagName, v := range map[string]string{"-p": in, "-k": kind, "-d": dir, "-O": out} {
		if v == "" {
			missing = append(missing, flagName)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return usageError("net-convert", "missing required flags: %s", strings.Join(missing, " "))
	}
	data, err := os.ReadFile(in)
	if err != nil {
		fmt.Fprintf(os.Stderr, "net-convert: %v\n", err)
		return 1
	}
	// The renderer is checked before the input is parsed, so a bad -O is
	// the error reported whatever the input.
	if _, err := render.ByName(out); err != nil {
		fmt.Fprintf(os.Stderr, "net-convert: %s: %v\n", in, err)
		return 1
	}
	res, err := network.Build(network.Input{Format: kind, Data: data, MACs: macs, Renderer: out})
	if err != nil {
		fmt.Fprintf(os.Stderr, "net-convert: %s: %v\n", in, err)
		return 1
	}
	// What was skipped, changed or cannot be rendered: one line each.
	for _, n := range res.Notes {
		if n.Warning {
			fmt.Fprintf(os.Stderr, "net-convert: %s: warning: %s\n", in, n.Text)
		}
	}
	if err := render.WriteDir(dir, res.Files); err != nil {
		fmt.Fprintf(os.Stderr, "net-convert: %v\n", err)
		return 1
	}
	return 0
}
