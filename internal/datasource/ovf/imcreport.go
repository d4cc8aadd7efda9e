package ovf

import (
	"context"
	"fmt"
	"time"
)

// The customization's reports to vCenter through VMware Tools, and the
// NICs' connection.

// fail reports a failed customization as cloud-init's _raise_error_status
// does (state running, the event; guestinfo.gc.status the prefix), removes
// the package and returns the error.
func (c *Customization) fail(ctx context.Context, prefix string, err error, event int) error {
	c.status(ctx, stateRunning, event, "")
	c.gcStatus(ctx, prefix)
	c.removePackage()
	return fmt.Errorf("VMware customization: %s: %w", prefix, err)
}

// status sends deployPkg.update.state; a failure to send is logged.
func (c *Customization) status(ctx context.Context, state, code int, msg string) (string, error) {
	m := StatusLog
	if msg != "" {
		m += "@" + msg
	}
	out, err := c.Tools.RPC(ctx, fmt.Sprintf("deployPkg.update.state %d %d %s", state, code, m))
	if err != nil {
		c.logf("ovf: reporting the customization's state %d %d: %v", state, code, err)
	}
	return out, err
}

// gcStatus sets guestinfo.gc.status when MISC POST-GC-STATUS asks for it.
func (c *Customization) gcStatus(ctx context.Context, msg string) {
	if !c.postGC {
		return
	}
	if _, err := c.Tools.RPC(ctx, "info-set guestinfo.gc.status "+msg); err != nil {
		c.logf("ovf: guestinfo.gc.status: %v", err)
	}
}

// enableNICs asks VMware Tools to connect the NICs nics.txt lists, as
// cloud-init's enable_nics: up to 5 attempts, each waiting for them to be
// connected for up to 5 queries a second apart, bounded by ctx.
func (c *Customization) enableNICs(ctx context.Context, nics string) {
	if nics == "" {
		return
	}
	sleep := c.Sleep
	if sleep == nil {
		sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	for attempt := 0; attempt < 5; attempt++ {
		out, _ := c.status(ctx, stateRunning, eventEnableNICs, nics)
		if out == "" {
			if sleep(ctx, 5*time.Second) != nil {
				break
			}
			continue
		}
		if out != "queryNicsSupported" {
			c.logf("ovf: VMware Tools do not support the NICs' connection query")
			return
		}
		for i := 0; i < 5; i++ {
			if out, _ := c.status(ctx, stateRunning, eventQueryNICs, nics); out == "connected" {
				c.logf("ovf: the NICs are connected")
				return
			}
			if sleep(ctx, time.Second) != nil {
				break
			}
		}
		if ctx.Err() != nil {
			break
		}
	}
	c.logf("ovf: the NICs could not be connected after 5 attempts")
}
