package blockdev

import (
	"context"
	"fmt"
	"time"
)

// minInterval is the poll interval used when Wait is given none.
const minInterval = 10 * time.Millisecond

// Wait polls List every interval until match returns true for a device or
// ctx ends. It returns the matching device and the listing, or the last
// listing seen and ctx's error (wrapped with the last listing error, if
// listing itself failed) so the caller can print what was seen. Device
// reads end by ctx's deadline too (see ListContext): a stuck device cannot
// hold Wait past it.
func Wait(ctx context.Context, sysRoot, devRoot string, interval time.Duration, match func(Device) bool) (Device, []Device, error) {
	if interval <= 0 {
		interval = minInterval
	}
	var last []Device
	var listErr error
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		devs, err := ListContext(ctx, sysRoot, devRoot)
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
