package nic

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"
)

// Netlinker is the small interface over netlink that Apply and WaitFor need.
type Netlinker interface {
	LinkList() ([]Link, error)
	// SetName renames the link; older kernels refuse while it is up.
	SetName(index int, name string) error
	SetUp(index int) error
	SetDown(index int) error
}

// Apply lists the links, plans the renames for want (see Plan) and carries
// them out in order. A link that is up is brought down before its first
// rename, since older kernels refuse to rename a link that is up, and brought
// back up once all renames are done.
//
// If a step fails, the steps done so far are undone in reverse order, so no
// temporary name is left behind, and applied holds the steps still in effect
// (none, when the undo succeeds). Links brought down are brought up again in
// every case. Problems are the entries Plan skipped; they are not errors.
func Apply(nl Netlinker, want map[string]string) (applied []Step, problems []Problem, err error) {
	links, err := nl.LinkList()
	if err != nil {
		return nil, nil, fmt.Errorf("list links: %w", err)
	}
	steps, problems := Plan(links, want)
	if len(steps) == 0 {
		return nil, problems, nil
	}

	index := map[string]int{} // current name -> link index
	up := map[int]bool{}
	for _, l := range links {
		index[l.Name] = l.Index
		up[l.Index] = l.Up
	}
	var downed []int
	restoreUp := func() error {
		var errs []error
		for _, idx := range downed {
			if err := nl.SetUp(idx); err != nil {
				errs = append(errs, fmt.Errorf("set link %d up: %w", idx, err))
			}
		}
		return errors.Join(errs...)
	}
	isDown := map[int]bool{}

	for _, s := range steps {
		idx := index[s.From]
		if up[idx] && !isDown[idx] {
			if err := nl.SetDown(idx); err != nil {
				err = fmt.Errorf("set %s (link %d) down: %w", s.From, idx, err)
				applied, uerr := undo(nl, index, applied)
				return applied, problems, errors.Join(err, uerr, restoreUp())
			}
			isDown[idx] = true
			downed = append(downed, idx)
		}
		if err := nl.SetName(idx, s.To); err != nil {
			err = fmt.Errorf("rename %s (link %d) to %s: %w", s.From, idx, s.To, err)
			applied, uerr := undo(nl, index, applied)
			return applied, problems, errors.Join(err, uerr, restoreUp())
		}
		delete(index, s.From)
		index[s.To] = idx
		applied = append(applied, s)
	}
	return applied, problems, restoreUp()
}

// undo reverses the applied steps, last first, and returns those still in
// effect: none on success, or a prefix if an undo fails (later ones would
// need the name the failed one did not free).
func undo(nl Netlinker, index map[string]int, applied []Step) ([]Step, error) {
	for i := len(applied) - 1; i >= 0; i-- {
		s := applied[i]
		idx := index[s.To]
		if err := nl.SetName(idx, s.From); err != nil {
			return applied[:i+1], fmt.Errorf("undo: rename %s (link %d) back to %s: %w", s.To, idx, s.From, err)
		}
		delete(index, s.To)
		index[s.From] = idx
	}
	return nil, nil
}

// WaitFor polls nl.LinkList every interval until a link has each of macs, or
// ctx ends. It returns the MACs still missing, normalised and sorted; err is
// non-nil only if some are missing, and then says why the wait ended (and the
// last listing error, if any). MACs that do not parse are reported missing
// as given. An interval <= 0 means 100ms.
func WaitFor(ctx context.Context, nl Netlinker, macs []string, interval time.Duration) (missing []string, err error) {
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	want := map[string]bool{}
	for _, m := range macs {
		if n, err := normalizeMAC(m); err == nil {
			want[n] = true
		} else {
			want[m] = true
		}
	}
	var t *time.Ticker
	var lastErr error
	for {
		links, err := nl.LinkList()
		if err != nil {
			lastErr = fmt.Errorf("list links: %w", err)
		} else {
			lastErr = nil
			have := map[string]bool{}
			for _, l := range links {
				have[linkMAC(l.MAC)] = true
			}
			missing = missing[:0]
			for m := range want {
				if !have[m] {
					missing = append(missing, m)
				}
			}
			sort.Strings(missing)
			if len(missing) == 0 {
				return nil, nil
			}
		}
		if t == nil {
			t = time.NewTicker(interval)
			defer t.Stop()
		}
		select {
		case <-ctx.Done():
			if missing == nil && lastErr != nil {
				// Never listed successfully: all are missing.
				for m := range want {
					missing = append(missing, m)
				}
				sort.Strings(missing)
			}
			return missing, errors.Join(fmt.Errorf("wait for %d NICs: %w", len(missing), ctx.Err()), lastErr)
		case <-t.C:
		}
	}
}
