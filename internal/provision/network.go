package provision

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/netcfg"
	"github.com/earlyinit/earlyinit/internal/network"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// networkStep runs the network pipeline on the instance's network config
// (or the fallback when it has none or it is unusable), names the NICs and
// writes the config into root (env.Root with its labels), unless the kernel command line or img,
// the image's configuration, turns the network config off
// (networkDisabledBy): then nothing is renamed or written, and one line
// says why. It returns the time spent waiting for NICs, module loading
// taken out.
func networkStep(env Env, root *rootfs.Root, d *instance.Data, isNew bool, img *imagecfg.Config) (time.Duration, error) {
	if why := networkDisabledBy(env, img); why != "" {
		env.Log.Printf("network: config disabled by %s; nothing renamed or written", why)
		return 0, nil
	}
	nl := env.netlink()
	links, err := nl.LinkList()
	if err != nil {
		return 0, fmt.Errorf("list links: %w", err)
	}
	in := network.Input{NICs: network.LiveNICs(links), Renderer: env.Settings.Renderer,
		RendererSetting: "earlyinit.renderer", Root: root, Fallback: true}
	if d != nil && len(d.Network) > 0 {
		in.Format, in.Data = string(d.NetworkFormat), d.Network
	} else if len(netcfg.FallbackOrder(in.NICs)) == 0 {
		// The fallback is DHCP on the first NIC: with none (a VM without
		// a network card, the None source), there is nothing to do.
		env.Log.Printf("network: no network config and no NIC: nothing written")
		return 0, nil
	}
	res, buildErr := network.Build(in)
	if res == nil {
		return 0, buildErr
	}
	res.LogNotes(env.Log)
	wait, err := network.Apply(context.Background(), network.Env{Netlink: nl, Root: root, Log: env.Log,
		Wait: env.Settings.Timeout, Scan: env.Scan, LoadTime: env.LoadTime, IsNew: isNew}, res)
	return wait, errors.Join(err, buildErr)
}
