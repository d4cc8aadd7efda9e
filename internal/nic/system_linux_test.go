package nic

import (
	"context"
	"errors"
	"net"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// inNetns runs f on this goroutine's thread moved into a fresh network
// namespace, then moves the thread back and unlocks it. If the thread cannot
// be moved back it stays locked, so Go discards it when the test ends.
func inNetns(t *testing.T, f func()) {
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatalf("get network namespace: %v", err)
	}
	defer orig.Close()
	defer func() {
		if err := netns.Set(orig); err != nil {
			t.Errorf("restore network namespace: %v", err)
			return
		}
		runtime.UnlockOSThread()
	}()
	ns, err := netns.New()
	if err != nil {
		t.Fatalf("new network namespace: %v", err)
	}
	defer ns.Close()
	f()
}

func hw(t *testing.T, s string) net.HardwareAddr {
	t.Helper()
	m, err := net.ParseMAC(s)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// macNames returns MAC -> name for the veths whose MAC starts with 02:00.
func macNames(t *testing.T) map[string]string {
	t.Helper()
	ls, err := System().LinkList()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, l := range ls {
		if strings.HasPrefix(l.MAC, "02:00:00:00:00:0") {
			out[l.MAC] = l.Name
		}
		if strings.HasPrefix(l.Name, tmpPrefix) {
			t.Errorf("link %d left at temporary name %q", l.Index, l.Name)
		}
	}
	return out
}

// failNth makes the nth SetName of a Netlinker fail.
type failNth struct {
	Netlinker
	n, calls int
}

func (f *failNth) SetName(index int, name string) error {
	f.calls++
	if f.calls == f.n {
		return errInjected
	}
	return f.Netlinker.SetName(index, name)
}

// TestSystem renames real links (veth pairs: this kernel has no dummy
// driver) in a fresh network namespace: plain renames, a swap, a 3-cycle,
// and a swap that fails half-way and is rolled back.
func TestSystem(t *testing.T) {
	inNetns(t, func() {
		const m1, m2, m3 = "02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:00:03"
		for i, m := range []string{m1, m2, m3} {
			v := &netlink.Veth{
				LinkAttrs:        netlink.LinkAttrs{Name: "v" + string(rune('0'+i)), HardwareAddr: hw(t, m)},
				PeerName:         "p" + string(rune('0'+i)),
				PeerHardwareAddr: hw(t, "02:00:00:00:01:0"+string(rune('1'+i))),
			}
			if err := netlink.LinkAdd(v); err != nil {
				t.Fatalf("add veth %s: %v", v.Name, err)
			}
		}
		// v0 and its peer are up, so v0 has carrier and must be up again
		// after every rename.
		for _, n := range []string{"v0", "p0"} {
			l, err := netlink.LinkByName(n)
			if err != nil {
				t.Fatal(err)
			}
			if err := netlink.LinkSetUp(l); err != nil {
				t.Fatal(err)
			}
		}

		ls, err := System().LinkList()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]Link{}
		for _, l := range ls {
			got[l.Name] = l
		}
		if lo := got["lo"]; lo.Kind != "loopback" {
			t.Errorf("lo = %+v, want kind loopback", lo)
		}
		if v0 := got["v0"]; v0.MAC != m1 || v0.Kind != "veth" || v0.Driver != "veth" || !v0.Up || !v0.Carrier {
			t.Errorf("v0 = %+v, want MAC %s, veth, up with carrier", v0, m1)
		}
		if v1 := got["v1"]; v1.Up || v1.Carrier {
			t.Errorf("v1 = %+v, want down without carrier", v1)
		}

		missing, err := WaitFor(context.Background(), System(), []string{m1, strings.ToUpper(m3)}, time.Millisecond)
		if err != nil || missing != nil {
			t.Errorf("WaitFor = %v, %v; want all present", missing, err)
		}

		for _, step := range []struct {
			name string
			want map[string]string
			n    int
		}{
			{"rename", map[string]string{m1: "eth0", m2: "eth1", m3: "eth2"}, 3},
			{"swap", map[string]string{m1: "eth1", m2: "eth0"}, 3},
			{"3-cycle", map[string]string{m1: "eth2", m2: "eth1", m3: "eth0"}, 4},
		} {
			applied, problems, err := Apply(System(), step.want)
			if err != nil || len(problems) != 0 || len(applied) != step.n {
				t.Fatalf("%s: Apply = %v, %v, %v; want %d steps", step.name, applied, problems, err, step.n)
			}
			now := macNames(t)
			for m, n := range step.want {
				if now[m] != n {
					t.Errorf("%s: %s is %q, want %q", step.name, m, now[m], n)
				}
			}
			l, err := netlink.LinkByName(now[m1])
			if err != nil {
				t.Fatal(err)
			}
			if l.Attrs().Flags&net.FlagUp == 0 {
				t.Errorf("%s: %s (%s) was left down", step.name, now[m1], m1)
			}
		}

		// Now m1=eth2, m2=eth1, m3=eth0. Swap eth0 and eth2, failing the
		// second rename: the kernel must be back where it was.
		before := macNames(t)
		nl := &failNth{Netlinker: System(), n: 2}
		applied, _, err := Apply(nl, map[string]string{m1: "eth0", m3: "eth2"})
		if !errors.Is(err, errInjected) || applied != nil {
			t.Fatalf("Apply with a failing rename = %v, %v; want the injected error and nothing applied", applied, err)
		}
		if after := macNames(t); !reflect.DeepEqual(after, before) {
			t.Errorf("after rollback names = %v, want %v", after, before)
		}
		if nl.calls != 3 {
			t.Errorf("%d renames, want 1 done, 1 failed, 1 undone", nl.calls)
		}
	})
}
