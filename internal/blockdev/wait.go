package blockdev

import (
	"context"
	"fmt"
	"time"
)

// minInterval is the poll interval used when Wait is given none.
const minInterval = 10 * time.Millisecond

// ProbeGrace is the least time a listing gets to probe its devices: a
// coldplug scan (seconds of module loading under emulation) can use up the
// wait, and a listing that probes nothing can neither match the device nor
// say what was there.
const ProbeGrace = time.Second

// Wait polls the listing (listContext) every interval until match returns true for a device or
// ctx ends, calling scan (if not nil) before every listing so that late
// devices get their drivers (coldplug). It returns the matching device and the listing, or the last
// listing seen and ctx's error (wrapped with the last listing error, if
// listing itself failed) so the caller can print what was seen. Device
// reads end by ctx's deadline too (see listContext): a stuck device cannot
// hold Wait past it, but each listing gets at least ProbeGrace to probe,
// so a wait always ends with one real look.
func Wait(ctx context.Context, sysRoot, devRoot string, interval time.Duration, match func(Device) bool, scan func()) (Device, []Device, error) {
	if interval <= 0 {
		interval = minInterval
	}
	var last []Device
	var listErr error
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if scan != nil {
			scan()
		}
		devs, err := listGrace(ctx, sysRoot, devRoot)
		if err != nil {
			listErr = err
		} else {
			last, listErr = devs, nil
			for _, d := range devs {
				if match(d) {
					return d, devs, nil
				}
			}
		}
		select {
		case <-ctx.Done():
			if listErr != nil {
				return Device{}, last, fmt.Errorf("%w (last listing: %v)", ctx.Err(), listErr)
			}
			return Device{}, last, ctx.Err()
		case <-t.C:
		}
	}
}

// listGrace is listContext with at least ProbeGrace to probe.
func listGrace(ctx context.Context, sysRoot, devRoot string) ([]Device, error) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < ProbeGrace {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), ProbeGrace)
		defer cancel()
	}
	return listContext(ctx, sysRoot, devRoot)
}
