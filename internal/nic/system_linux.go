package nic

import (
	"errors"
	"fmt"
	"net"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// system is the Netlinker over the kernel, through rtnetlink in the calling
// thread's network namespace.
type system struct{}

// System returns the real Netlinker, built on vishvananda/netlink. It does
// not bring links down itself: Apply does that around renames. Drivers come
// from the ethtool ioctl, so all of it works in the calling thread's network
// namespace without /sys.
func System() Netlinker { return system{} }

// dumpRetries bounds how often a link dump interrupted by a concurrent
// change is retried.
const dumpRetries = 5

func (system) LinkList() ([]Link, error) {
	var (
		ls  []netlink.Link
		err error
	)
	for range dumpRetries {
		ls, err = netlink.LinkList()
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("netlink link list: %w", err)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fd = -1 // no drivers then; names and MACs are what matter
	} else {
		defer unix.Close(fd)
	}
	out := make([]Link, 0, len(ls))
	for _, l := range ls {
		a := l.Attrs()
		kind := l.Type()
		if a.EncapType == "loopback" || a.Flags&net.FlagLoopback != 0 {
			kind = "loopback"
		}
		mac := ""
		if len(a.HardwareAddr) > 0 {
			mac = a.HardwareAddr.String()
		}
		out = append(out, Link{
			Index:   a.Index,
			Name:    a.Name,
			MAC:     mac,
			Driver:  driver(fd, a.Name),
			Carrier: a.RawFlags&unix.IFF_LOWER_UP != 0,
			Up:      a.Flags&net.FlagUp != 0,
			Kind:    kind,
		})
	}
	return out, nil
}

// driver asks the kernel for the link's driver (ethtool's GDRVINFO) through
// a socket in the caller's network namespace; "" when it cannot tell.
func driver(fd int, name string) string {
	if fd < 0 {
		return ""
	}
	info, err := unix.IoctlGetEthtoolDrvinfo(fd, name)
	if err != nil {
		return ""
	}
	return unix.ByteSliceToString(info.Driver[:])
}

func byIndex(index int) netlink.Link {
	return &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: index}}
}

func (system) SetName(index int, name string) error {
	if err := netlink.LinkSetName(byIndex(index), name); err != nil {
		return fmt.Errorf("netlink rename link %d to %q: %w", index, name, err)
	}
	return nil
}

func (system) SetUp(index int) error {
	if err := netlink.LinkSetUp(byIndex(index)); err != nil {
		return fmt.Errorf("netlink set link %d up: %w", index, err)
	}
	return nil
}

func (system) SetDown(index int) error {
	if err := netlink.LinkSetDown(byIndex(index)); err != nil {
		return fmt.Errorf("netlink set link %d down: %w", index, err)
	}
	return nil
}
