package boot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/logs"
	"github.com/earlyinit/earlyinit/internal/settings"
	"golang.org/x/sys/unix"
)

// rootRequest is what the command line asks for the root.
type rootRequest struct {
	Spec     blockdev.Spec
	FSTypes  []string // from rootfstype=; empty means "what the probe found"
	Flags    uintptr
	Data     string
	ReadOnly bool
}

// newRootRequest builds a request from the command line.
func newRootRequest(c settings.Settings) (rootRequest, error) {
	if c.Root == "" {
		return rootRequest{}, errors.New("no root= on the kernel command line")
	}
	spec, err := blockdev.ParseSpec(c.Root)
	if err != nil {
		return rootRequest{}, fmt.Errorf("root=%s: %w", c.Root, err)
	}
	r := rootRequest{Spec: spec, ReadOnly: c.ReadOnly}
	if c.RootFSType != "" {
		r.FSTypes = strings.Split(c.RootFSType, ",")
	}
	r.Flags, r.Data = ParseMountOptions(c.RootFlags)
	return r, nil
}

// ParseMountOptions splits a mount option string into flags the kernel
// takes as bits and the rest, passed to the filesystem as data.
func ParseMountOptions(opts string) (uintptr, string) {
	var flags uintptr
	var data []string
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "":
		case "ro":
			flags |= unix.MS_RDONLY
		case "rw":
			flags &^= unix.MS_RDONLY
		case "nosuid":
			flags |= unix.MS_NOSUID
		case "nodev":
			flags |= unix.MS_NODEV
		case "noexec":
			flags |= unix.MS_NOEXEC
		case "sync":
			flags |= unix.MS_SYNCHRONOUS
		case "dirsync":
			flags |= unix.MS_DIRSYNC
		case "noatime":
			flags |= unix.MS_NOATIME
		case "nodiratime":
			flags |= unix.MS_NODIRATIME
		case "relatime":
			flags |= unix.MS_RELATIME
		case "strictatime":
			flags |= unix.MS_STRICTATIME
		case "lazytime":
			// Linux 4.0; an older kernel ignores the bit.
			flags |= unix.MS_LAZYTIME
		case "defaults":
		default:
			data = append(data, o)
		}
	}
	return flags, strings.Join(data, ",")
}

// rootError is the one clear message for a root that cannot be mounted.
type rootError struct {
	Asked   string
	Waited  time.Duration
	Seen    []blockdev.Device
	FSTypes []string // filesystems the kernel knows (/proc/filesystems)
	Err     error
}

func (e *rootError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cannot mount root %s after %s: %v\n", e.Asked, e.Waited.Round(time.Millisecond), e.Err)
	if len(e.Seen) == 0 {
		b.WriteString("block devices seen: none\n")
	} else {
		b.WriteString("block devices seen:\n")
		for _, d := range e.Seen {
			fmt.Fprintf(&b, "  %s\n", d)
		}
	}
	known := strings.Join(e.FSTypes, " ")
	if known == "" {
		known = "none yet (filesystem modules load once a device is found)"
	}
	fmt.Fprintf(&b, "filesystems known to the kernel: %s", known)
	return b.String()
}

func (e *rootError) Unwrap() error { return e.Err }

// pollDevices lists block devices until match accepts one or ctx ends,
// running coldplug on every round so late devices get their drivers. It
// returns the device matched (if any) and the last listing.
func (b *Boot) pollDevices(ctx context.Context, match func(blockdev.Device) bool) (blockdev.Device, []blockdev.Device, error) {
	if b.cold == nil {
		// The modules step failed or panicked before coldplug began.
		logs.Guard(b.Log, "coldplug during the root wait", b.startColdplug)
	}
	return blockdev.Wait(ctx, "/sys", "/dev", 50*time.Millisecond, match, b.scan)
}

// scan runs one coldplug round, if coldplug could start.
func (b *Boot) scan() {
	if b.cold != nil {
		logs.Guard(b.Log, "coldplug scan", func() error { _, err := b.cold.Scan(); return err })
	}
}

// knownFilesystems reads /proc/filesystems (block filesystems only).
func knownFilesystems() []string {
	b, err := os.ReadFile("/proc/filesystems")
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) == 1 {
			out = append(out, f[0])
		}
	}
	return out
}
