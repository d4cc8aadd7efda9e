package discover

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/logs"
	"github.com/earlyinit/earlyinit/internal/netcfg"
	"github.com/earlyinit/earlyinit/internal/network"
	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/earlyinit/earlyinit/internal/nic/dhcp"
	"golang.org/x/sys/unix"
)

// DefaultBaseURL is where the metadata services answer.
const DefaultBaseURL = "http://169.254.169.254"

// carrierWait bounds the wait for a link to come up on any NIC: with no
// link there is no metadata service to reach.
const carrierWait = 2 * time.Second

// Linux is the System of a running machine: seed directories in the real
// root, block devices from sysfs, drives mounted under /mnt, NICs through
// netlink and a temporary DHCP lease. It adds up the time it waits, and
// remembers the drives it mounted for the handoff to unmount.
type Linux struct {
	// Root is where the real root is mounted.
	Root string
	// Timeout is earlyinit.timeout: it bounds every wait.
	Timeout time.Duration
	// MetadataURL is earlyinit.metadata_url, "" for DefaultBaseURL.
	MetadataURL string
	// KeepNet is earlyinit.keepnet: the temporary lease stays.
	KeepNet bool
	Log     Log
	// Scan runs a coldplug round between device polls; LoadFS loads the
	// modules a filesystem needs; LoadTime is the time spent loading
	// modules so far, taken out of the device wait. Each may be nil.
	Scan     func()
	LoadFS   func(fstype string)
	LoadTime func() time.Duration
	// Netlink is the NICs' interface; nil means nic.System().
	Netlink nic.Netlinker

	// Mounts are the drives mounted (or given up on while mounting),
	// innermost last, for the handoff to unmount.
	Mounts []string
	// DeviceWait and NetWait add up the time spent polling for devices
	// and on the metadata service (carrier, DHCP, HTTP).
	DeviceWait, NetWait time.Duration
	// KeptIface is the NIC whose lease earlyinit.keepnet kept.
	KeptIface string
	// LeaseNTP are the NTP servers (DHCP option 42) of the temporary
	// lease, for the boot step to record (LeaseNTPServers).
	LeaseNTP []netip.Addr

	// wasDown holds the links RaiseLinks brought up, by name.
	wasDown map[string]int
}

func (l *Linux) netlink() nic.Netlinker {
	if l.Netlink == nil {
		l.Netlink = nic.System()
	}
	return l.Netlink
}

func (l *Linux) loadTime() time.Duration {
	if l.LoadTime == nil {
		return 0
	}
	return l.LoadTime()
}

// DMI reads the machine's DMI strings from sysfs (dmi.Dir): the root-only
// serial and UUID too, as earlyinit runs as root.
func (l *Linux) DMI() (dmi.Info, error) {
	return dmi.Read(os.DirFS(dmi.Dir))
}

// SeedDir is dir in the real root, read through a DriveFS.
func (l *Linux) SeedDir(dir string) (fs.FS, bool) {
	full := filepath.Join(l.Root, filepath.Clean("/"+dir))
	fi, err := os.Stat(full)
	return datasource.DriveFS(full, datasource.MaxDriveTotal), err == nil && fi.IsDir()
}

// Drives polls the block devices, with coldplug between rounds.
func (l *Linux) Drives(wait time.Duration, match func(blockdev.Device) bool) []blockdev.Device {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	t0 := time.Now()
	loaded := l.loadTime()
	_, devs, err := blockdev.Wait(ctx, "/sys", "/dev", 50*time.Millisecond, match, l.Scan)
	l.DeviceWait += time.Since(t0) - (l.loadTime() - loaded)
	if err != nil {
		var seen []string
		for _, d := range devs {
			seen = append(seen, d.String())
		}
		l.Log.Printf("no config drive after %s (polled up to %s); block devices: %s", round(time.Since(t0)), wait, strings.Join(seen, "; "))
	}
	return devs
}

// ReadDrive mounts dev read-only under /mnt/earlyinit-NAME and reads it.
// The drive stays mounted until the handoff unmounts it (files a source
// names are read while it is mounted).
func (l *Linux) ReadDrive(dev blockdev.Device, read func(fs.FS) (*instance.Data, error)) (*instance.Data, error) {
	dir := filepath.Join("/mnt", "earlyinit-"+dev.Name)
	if slices.Contains(l.Mounts, dir) {
		// Mounted by a source before (configdrive, then cloudstack
		// on CloudStack's config-2 drive): a second mount there
		// fails with EBUSY; read what is mounted, bounded as well.
		ctx, cancel := context.WithTimeout(context.Background(), l.Timeout)
		defer cancel()
		return bounded(ctx, l.Log, dev.Path, func() (*instance.Data, error) {
			return read(datasource.DriveFS(dir, datasource.MaxDriveTotal))
		})
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if l.LoadFS != nil {
		l.LoadFS(dev.FS.Type)
	}
	// A drive whose device stops answering would block the mount or a
	// read forever: both run bounded by earlyinit.timeout, and a drive
	// given up on is detached lazily at the handoff.
	ctx, cancel := context.WithTimeout(context.Background(), l.Timeout)
	defer cancel()
	var mounted atomic.Bool
	d, err := bounded(ctx, l.Log, dev.Path, func() (*instance.Data, error) {
		if err := mount(dev.Path, dir, dev.FS.Type); err != nil {
			return nil, fmt.Errorf("mount -t %s -o ro %s: %w", dev.FS.Type, dev.Path, err)
		}
		mounted.Store(true)
		return read(datasource.DriveFS(dir, datasource.MaxDriveTotal))
	})
	if mounted.Load() || errors.Is(err, errGaveUp) {
		l.Mounts = append(l.Mounts, dir)
	}
	return d, err
}

// errGaveUp is bounded's error when fn did not return in time.
var errGaveUp = errors.New("gave up")

// bounded runs fn in its own goroutine, under a recover, and waits for it
// until ctx ends. A read from a stalled device cannot be interrupted: on
// timeout the goroutine is left behind, blocked, and the boot goes on.
func bounded(ctx context.Context, log Log, what string, fn func() (*instance.Data, error)) (*instance.Data, error) {
	type result struct {
		d   *instance.Data
		err error
	}
	done := make(chan result, 1)
	t0 := time.Now()
	go func() {
		var r result
		r.err = logs.Guard(log, "reading "+what, func() error {
			var err error
			r.d, err = fn()
			return err
		})
		done <- r
	}()
	select {
	case r := <-done:
		return r.d, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w after %s: the device does not answer", what, errGaveUp, round(time.Since(t0)))
	}
}

// RootDir is where the real root is mounted.
func (l *Linux) RootDir() string { return l.Root }

// RaiseLinks brings the fallback candidates up, remembering which were
// down; lower puts them back down but for a kept lease's.
func (l *Linux) RaiseLinks() (lower func()) {
	l.raiseLinks(l.netlink())
	return func() { l.lowerLinks(l.netlink(), l.KeptIface) }
}

// Network picks the NIC by cloud-init's fallback rule, waits briefly for
// its link, gets a temporary DHCPv4 lease (or, without one, uses the IPv6
// link-local path), and returns the metadata base URL; done takes the
// temporary network down unless earlyinit.keepnet.
func (l *Linux) Network(ctx context.Context) (svc datasource.Service, done func(), err error) {
	t0 := time.Now()
	nl := l.netlink()
	iface, err := l.linkedNIC(ctx, nl)
	if err != nil {
		l.NetWait += time.Since(t0)
		return svc, nil, err
	}
	base := DefaultBaseURL
	if l.MetadataURL != "" {
		base = strings.TrimSuffix(l.MetadataURL, "/")
	}
	var eph, eph4 *nic.Ephemeral
	var server, base4 string
	// DHCP gets half of what is left, so the IPv6 link-local path still
	// has time when no DHCP server answers.
	dctx, dcancel := context.WithTimeout(ctx, remaining(ctx)/2)
	lease, err := dhcp.RequestLease(dctx, iface)
	dcancel()
	if err == nil {
		l.Log.Printf("metadata: DHCP lease %s on %s from %s (%s%d classless routes, MTU %d)",
			lease.Addr, iface, lease.Server, routerText(lease.Router), len(lease.Routes), lease.MTU)
		l.LeaseNTP = lease.NTP
		if len(lease.NTP) > 0 {
			l.Log.Printf("metadata: DHCP lease on %s offers %d NTP server(s) (option 42)", iface, len(lease.NTP))
		}
		eph, err = nic.Up(lease)
		if err != nil {
			l.Log.Errorf("metadata: apply lease on %s: %v", iface, err)
		} else if lease.Server.IsValid() {
			server = lease.Server.String()
		}
	} else {
		l.Log.Errorf("metadata: no DHCP lease on %s: %v; trying IPv6 link-local", iface, err)
		eph, err = nic.LinkLocal(iface)
		if err == nil {
			// Duplicate address detection holds the address a moment.
			_, err = eph.WaitLinkLocal(ctx)
		}
		if err != nil {
			l.Log.Errorf("metadata: link-local on %s: %v", iface, err)
		} else if l.MetadataURL == "" {
			base = "http://[fe80::a9fe:a9fe%25" + url.PathEscape(iface) + "]"
		}
		// And IPv4 link-local, for a cloud that serves 169.254.169.254
		// without DHCP (DigitalOcean).
		ll := nic.LinkLocal4Lease(iface, rand.IntN)
		if e4, err := nic.Up(ll); err != nil {
			l.Log.Errorf("metadata: IPv4 link-local on %s: %v", iface, err)
		} else {
			eph4 = e4
			l.Log.Printf("metadata: %s on %s for IPv4 link-local metadata", ll.Addr, iface)
			if l.MetadataURL == "" {
				base4 = DefaultBaseURL
			}
		}
	}
	done = func() {
		defer func() { l.NetWait += time.Since(t0) }()
		if eph4 != nil && !l.KeepNet {
			if err := eph4.Down(); err != nil {
				l.Log.Errorf("metadata: tear down IPv4 link-local on %s: %v", iface, err)
			}
		}
		if eph == nil {
			return
		}
		if l.KeepNet {
			l.KeptIface = iface
			l.Log.Printf("metadata: earlyinit.keepnet: the lease on %s stays", iface)
			return
		}
		if err := eph.Down(); err != nil {
			l.Log.Errorf("metadata: tear down %s: %v", iface, err)
		} else {
			l.Log.Printf("metadata: temporary network on %s torn down", iface)
		}
	}
	return datasource.Service{Base: base, DHCPServer: server, Base4: base4, Root: l.Root}, done, nil
}

// LeaseNTPServers are the NTP servers of the temporary DHCP lease, if
// Network got one: the lease exists only when a metadata service was
// asked, so a boot from a config drive has none.
func (l *Linux) LeaseNTPServers() []netip.Addr { return l.LeaseNTP }

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
func (l *Linux) raiseLinks(nl nic.Netlinker) {
	links, err := nl.LinkList()
	if err != nil {
		l.Log.Errorf("metadata: list links: %v", err)
		return
	}
	l.wasDown = map[string]int{}
	for _, c := range netcfg.FallbackOrder(network.LiveNICs(links)) {
		for _, k := range links {
			if k.Name != c.Name || k.Up {
				continue
			}
			if err := nl.SetUp(k.Index); err != nil {
				l.Log.Errorf("metadata: bring %s up: %v", k.Name, err)
				continue
			}
			l.wasDown[k.Name] = k.Index
		}
	}
}

// linkedNIC returns the first fallback candidate with a carrier within
// carrierWait of the links being raised, and puts the others back down.
func (l *Linux) linkedNIC(ctx context.Context, nl nic.Netlinker) (string, error) {
	if l.wasDown == nil {
		l.raiseLinks(nl)
	}
	wait, cancel := context.WithTimeout(ctx, carrierWait)
	defer cancel()
	for {
		links, err := nl.LinkList()
		if err != nil {
			return "", err
		}
		cands := netcfg.FallbackOrder(network.LiveNICs(links))
		if len(cands) == 0 {
			return "", errors.New("no NIC to reach a metadata service")
		}
		// FallbackOrder puts NICs with carrier first.
		if cands[0].Carrier {
			l.lowerLinks(nl, cands[0].Name)
			return cands[0].Name, nil
		}
		select {
		case <-wait.Done():
			l.lowerLinks(nl, "")
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
func (l *Linux) lowerLinks(nl nic.Netlinker, keep string) {
	for name, idx := range l.wasDown {
		if name != keep {
			nl.SetDown(idx)
		}
	}
}

// round rounds a duration for the logs, as the boot log does.
func round(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}

// mount mounts a config drive read-only, without devices, set-id or
// executables.
func mount(dev, dir, fstype string) error {
	return unix.Mount(dev, dir, fstype, unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
}
