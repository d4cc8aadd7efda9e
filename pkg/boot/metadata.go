package boot

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/pkg/datasource/ec2"
	"github.com/earlyinit/earlyinit/pkg/datasource/openstack"
	"github.com/earlyinit/earlyinit/pkg/instance"
	"github.com/earlyinit/earlyinit/pkg/netcfg"
	"github.com/earlyinit/earlyinit/pkg/nic"
	"github.com/earlyinit/earlyinit/pkg/nic/dhcp"
)

// Metadata-service datasource names for earlyinit.ds=.
const (
	DSOpenStack = "openstack"
	DSEC2       = "ec2"
)

// carrierWait bounds the wait for a link to come up on any NIC: with no
// link there is no metadata service to reach.
const carrierWait = 2 * time.Second

// metadataSources reads the metadata service: it picks NICs by cloud-init's
// fallback rule, waits briefly for link, gets a temporary DHCPv4 lease (or
// uses the IPv6 link-local path), tries each named source in order, and
// takes the temporary network down again unless earlyinit.keepnet. The
// whole attempt is bounded by earlyinit.timeout.
func (b *Boot) metadataSources(names []string) (*instance.Data, error) {
	ctx, cancel := context.WithTimeout(context.Background(), b.Cmd.Timeout)
	defer cancel()
	t0 := time.Now()
	defer func() { b.netWait += time.Since(t0) }()
	nl := nic.System()
	iface, err := b.linkedNIC(ctx, nl)
	if err != nil {
		return nil, err
	}
	base := "http://169.254.169.254"
	if u := b.Cmd.MetadataURL; u != "" {
		base = strings.TrimSuffix(u, "/")
	}
	var eph *nic.Ephemeral
	// DHCP gets half of what is left, so the IPv6 link-local path still
	// has time when no DHCP server answers.
	dctx, dcancel := context.WithTimeout(ctx, remaining(ctx)/2)
	lease, err := dhcp.RequestLease(dctx, iface)
	dcancel()
	if err == nil {
		b.Log.Printf("metadata: DHCP lease %s on %s from %s (%s%d classless routes, MTU %d)",
			lease.Addr, iface, lease.Server, routerText(lease.Router), len(lease.Routes), lease.MTU)
		eph, err = nic.Up(lease)
		if err != nil {
			b.Log.Errorf("metadata: apply lease on %s: %v", iface, err)
		}
	} else {
		b.Log.Errorf("metadata: no DHCP lease on %s: %v; trying IPv6 link-local", iface, err)
		eph, err = nic.LinkLocal(iface)
		if err == nil {
			// Duplicate address detection holds the address a moment.
			_, err = eph.WaitLinkLocal(ctx)
		}
		if err != nil {
			b.Log.Errorf("metadata: link-local on %s: %v", iface, err)
		} else if b.Cmd.MetadataURL == "" {
			base = "http://[fe80::a9fe:a9fe%25" + url.PathEscape(iface) + "]"
		}
	}
	if eph != nil {
		keep := b.Cmd.KeepNet
		defer func() {
			if keep {
				b.keptIface = iface
				b.Log.Printf("metadata: earlyinit.keepnet: the lease on %s stays", iface)
				return
			}
			if err := eph.Down(); err != nil {
				b.Log.Errorf("metadata: tear down %s: %v", iface, err)
			} else {
				b.Log.Printf("metadata: temporary network on %s torn down", iface)
			}
		}()
	}
	var errs []error
	for _, name := range names {
		var d *instance.Data
		var err error
		switch name {
		case DSOpenStack:
			c := &openstack.Client{BaseURL: base, Logf: b.Log.Debugf}
			d, err = c.Read(ctx)
		case DSEC2:
			c := &ec2.Client{BaseURL: base, Logf: b.Log.Debugf}
			d, err = c.Read(ctx)
		}
		if err != nil {
			b.Log.Errorf("datasource %s rejected: %v", name, err)
			b.rejected++
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
			continue
		}
		return b.finish(d, name, nil), nil
	}
	return nil, errors.Join(errs...)
}

func remaining(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return time.Until(dl)
	}
	return time.Minute
}

func routerText(r netip.Addr) string {
	if !r.IsValid() {
		return ""
	}
	return "router " + r.String() + ", "
}

// raiseLinks brings the fallback candidates up early, before the config
// drive poll, so that the carrier wait overlaps it: a VM whose NICs have no
// link loses one wait, not two. It remembers which links were down.
func (b *Boot) raiseLinks(nl nic.Netlinker) {
	links, err := nl.LinkList()
	if err != nil {
		b.Log.Errorf("metadata: list links: %v", err)
		return
	}
	b.wasDown = map[string]int{}
	for _, c := range netcfg.FallbackOrder(liveNICs(links)) {
		for _, l := range links {
			if l.Name != c.Name || l.Up {
				continue
			}
			if err := nl.SetUp(l.Index); err != nil {
				b.Log.Errorf("metadata: bring %s up: %v", l.Name, err)
				continue
			}
			b.wasDown[l.Name] = l.Index
		}
	}
}

// linkedNIC returns the first fallback candidate with a carrier within
// carrierWait of the links being raised, and puts the others back down.
func (b *Boot) linkedNIC(ctx context.Context, nl nic.Netlinker) (string, error) {
	if b.wasDown == nil {
		b.raiseLinks(nl)
	}
	wait, cancel := context.WithTimeout(ctx, carrierWait)
	defer cancel()
	for {
		links, err := nl.LinkList()
		if err != nil {
			return "", err
		}
		cands := netcfg.FallbackOrder(liveNICs(links))
		if len(cands) == 0 {
			return "", errors.New("no NIC to reach a metadata service")
		}
		// FallbackOrder puts NICs with carrier first.
		if cands[0].Carrier {
			b.lowerLinks(nl, cands[0].Name)
			return cands[0].Name, nil
		}
		select {
		case <-wait.Done():
			b.lowerLinks(nl, "")
			var names []string
			for _, c := range cands {
				names = append(names, c.Name)
			}
			return "", fmt.Errorf("no NIC has link (%s)", strings.Join(names, " "))
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// lowerLinks puts the links raiseLinks brought up back down, but keep.
func (b *Boot) lowerLinks(nl nic.Netlinker, keep string) {
	for name, idx := range b.wasDown {
		if name != keep {
			nl.SetDown(idx)
		}
	}
}
