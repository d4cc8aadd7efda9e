package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/earlyinit/earlyinit/pkg/netcfg/render"
	"github.com/earlyinit/earlyinit/pkg/network"
)

func init() {
	verbs["net-convert"] = verb{"convert network config, as cloud-init devel net-convert", netConvert}
}

// macFlags collects repeated -m name,mac flags into MAC -> name.
type macFlags map[string]string

func (m macFlags) String() string { return fmt.Sprint(map[string]string(m)) }

func (m macFlags) Set(v string) error {
	name, mac, ok := strings.Cut(v, ",")
	if !ok || name == "" || mac == "" {
		return fmt.Errorf("want name,mac, got %q", v)
	}
	m[strings.ToLower(strings.TrimSpace(mac))] = strings.TrimSpace(name)
	return nil
}

// netConvert has the flags and meaning of `cloud-init devel net-convert`.
func netConvert(args []string) int {
	fs := flag.NewFlagSet("net-convert", flag.ContinueOnError)
	var in, kind, dir, distro, out string
	macs := macFlags{}
	for _, n := range []string{"p", "network-data"} {
		fs.StringVar(&in, n, "", "the network configuration to read")
	}
	for _, n := range []string{"k", "kind"} {
		fs.StringVar(&kind, n, "", "its format: eni, network_data.json, yaml")
	}
	for _, n := range []string{"d", "directory"} {
		fs.StringVar(&dir, n, "", "directory to place output in")
	}
	for _, n := range []string{"D", "distro"} {
		fs.StringVar(&distro, n, "", "accepted for compatibility; the output does not depend on it")
	}
	for _, n := range []string{"O", "output-kind"} {
		fs.StringVar(&out, n, "", "renderer: eni, netplan, networkd, sysconfig, network-manager")
	}
	for _, n := range []string{"m", "mac"} {
		fs.Var(macs, n, "interface name to MAC mapping, name,mac (repeatable)")
	}
	fs.Bool("debug", false, "accepted for compatibility")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var missing []string
	for flagName, v := range map[string]string{"-p": in, "-k": kind, "-d": dir, "-O": out} {
		if v == "" {
			missing = append(missing, flagName)
		}
	}
	if len(missing) > 0 {
		fmt.Fprintf(os.Stderr, "net-convert: missing required flags: %s\n", strings.Join(missing, " "))
		return 2
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
