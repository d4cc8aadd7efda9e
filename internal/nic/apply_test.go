package nic

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

var errInjected = errors.New("injected failure")

// fakeNL is an in-memory Netlinker that behaves like an old kernel: a name
// can be held by one link only (EEXIST) and a link that is up cannot be
// renamed (EBUSY). SetName calls listed in failName (1-based) fail, as do
// SetDown calls for the indexes in failDown.
type fakeNL struct {
	links    []Link
	failName map[int]bool
	failDown map[int]bool
	failList int // LinkList fails this many times first
	renames  int
	calls    []string
	// appear adds links to the listing from the given LinkList call on.
	appear map[int][]Link
	lists  int
}

func (f *fakeNL) LinkList() ([]Link, error) {
	f.lists++
	for _, l := range f.appear[f.lists] {
		f.links = append(f.links, l)
	}
	if f.failList > 0 {
		f.failList--
		return nil, errInjected
	}
	return append([]Link(nil), f.links...), nil
}

func (f *fakeNL) find(index int) (*Link, error) {
	for i := range f.links {
		if f.links[i].Index == index {
			return &f.links[i], nil
		}
	}
	return nil, syscall.ENODEV
}

func (f *fakeNL) SetName(index int, name string) error {
	f.renames++
	f.calls = append(f.calls, fmt.Sprintf("name %d %s", index, name))
	if f.failName[f.renames] {
		return errInjected
	}
	l, err := f.find(index)
	if err != nil {
		return err
	}
	if l.Up {
		return syscall.EBUSY
	}
	for _, o := range f.links {
		if o.Name == name && o.Index != index {
			return syscall.EEXIST
		}
	}
	l.Name = name
	return nil
}

func (f *fakeNL) SetUp(index int) error {
	f.calls = append(f.calls, fmt.Sprintf("up %d", index))
	l, err := f.find(index)
	if err != nil {
		return err
	}
	l.Up = true
	return nil
}

func (f *fakeNL) SetDown(index int) error {
	f.calls = append(f.calls, fmt.Sprintf("down %d", index))
	if f.failDown[index] {
		return errInjected
	}
	l, err := f.find(index)
	if err != nil {
		return err
	}
	l.Up = false
	return nil
}

// state is "index:name:up" for every link, by index.
func (f *fakeNL) state() []string {
	var s []string
	for _, l := range f.links {
		s = append(s, fmt.Sprintf("%d:%s:%v", l.Index, l.Name, l.Up))
	}
	sort.Strings(s)
	return s
}

func noTemp(t *testing.T, f *fakeNL) {
	t.Helper()
	for _, l := range f.links {
		if strings.HasPrefix(l.Name, tmpPrefix) {
			t.Errorf("link %d left at temporary name %q", l.Index, l.Name)
		}
	}
}

func TestApplySwap(t *testing.T) {
	ls := links("eth0", "eth1", "eth2")
	ls[2].Up = false
	f := &fakeNL{links: ls}
	want := map[string]string{mac(1): "eth1", mac(2): "eth0", mac(9): "eth9"}
	applied, problems, err := Apply(f, want)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if wantSteps := []Step{{"eth1", "eirtmp0"}, {"eth0", "eth1"}, {"eirtmp0", "eth0"}}; !reflect.DeepEqual(applied, wantSteps) {
		t.Errorf("applied = %v, want %v", applied, wantSteps)
	}
	if want := []Problem{{mac(9), "eth9", "missing: no live link has this MAC"}}; !reflect.DeepEqual(problems, want) {
		t.Errorf("problems = %v, want %v", problems, want)
	}
	if got, want := f.state(), []string{"1:eth1:true", "2:eth0:true", "3:eth2:false"}; !reflect.DeepEqual(got, want) {
		t.Errorf("state = %v, want %v", got, want)
	}
	// Each link goes down once before its first rename and up once at the end.
	wantCalls := []string{"down 2", "name 2 eirtmp0", "down 1", "name 1 eth1", "name 2 eth0", "up 2", "up 1"}
	if !reflect.DeepEqual(f.calls, wantCalls) {
		t.Errorf("calls = %q, want %q", f.calls, wantCalls)
	}
}

func TestApplyNothingToDo(t *testing.T) {
	f := &fakeNL{links: links("eth0")}
	applied, problems, err := Apply(f, map[string]string{mac(1): "eth0", mac(2): "eth1"})
	if err != nil || applied != nil || len(problems) != 1 {
		t.Errorf("Apply = %v, %v, %v; want no steps, one problem, no error", applied, problems, err)
	}
	if len(f.calls) != 0 {
		t.Errorf("calls = %q, want none", f.calls)
	}
}

func TestApplyListError(t *testing.T) {
	f := &fakeNL{links: links("eth0"), failList: 1}
	_, _, err := Apply(f, map[string]string{mac(1): "eth1"})
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "list links") {
		t.Errorf("err = %v, want the listing error", err)
	}
}

// A rename failing at any point of a 3-cycle leaves every link as it was:
// original names, no temporary name, up again.
func TestApplyRollback(t *testing.T) {
	want := map[string]string{mac(1): "eth1", mac(2): "eth2", mac(3): "eth0"}
	before := (&fakeNL{links: links("eth0", "eth1", "eth2")}).state()
	for fail := 1; fail <= 4; fail++ {
		t.Run(fmt.Sprint("fail rename ", fail), func(t *testing.T) {
			f := &fakeNL{links: links("eth0", "eth1", "eth2"), failName: map[int]bool{fail: true}}
			applied, _, err := Apply(f, want)
			if !errors.Is(err, errInjected) {
				t.Fatalf("err = %v, want the injected one", err)
			}
			if applied != nil {
				t.Errorf("applied = %v after a full undo, want none", applied)
			}
			if got := f.state(); !reflect.DeepEqual(got, before) {
				t.Errorf("state = %v, want %v", got, before)
			}
			noTemp(t, f)
			if f.renames != 2*(fail-1)+1 {
				t.Errorf("%d renames, want %d done, 1 failed and %d undone", f.renames, fail-1, fail-1)
			}
		})
	}
}

func TestApplyRollbackFails(t *testing.T) {
	// Swap: eth1->eirtmp0, eth0->eth1 (fails), undo eirtmp0->eth1 (fails).
	f := &fakeNL{links: links("eth0", "eth1"), failName: map[int]bool{2: true, 3: true}}
	applied, _, err := Apply(f, map[string]string{mac(1): "eth1", mac(2): "eth0"})
	if want := []Step{{"eth1", "eirtmp0"}}; !reflect.DeepEqual(applied, want) {
		t.Errorf("applied = %v, want %v (still in effect)", applied, want)
	}
	if err == nil || !strings.Contains(err.Error(), "rename eth0 (link 1) to eth1") || !strings.Contains(err.Error(), "undo: rename eirtmp0 (link 2) back to eth1") {
		t.Errorf("err = %v, want the failed step and the failed undo", err)
	}
	if got, want := f.state(), []string{"1:eth0:true", "2:eirtmp0:true"}; !reflect.DeepEqual(got, want) {
		t.Errorf("state = %v, want %v", got, want)
	}
}

func TestApplySetDownFails(t *testing.T) {
	// ens4->ens5 first, then ens3 cannot go down: ens4 is renamed back.
	f := &fakeNL{links: links("ens3", "ens4"), failDown: map[int]bool{1: true}}
	applied, _, err := Apply(f, map[string]string{mac(1): "ens4", mac(2): "ens5"})
	if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "set ens3 (link 1) down") {
		t.Errorf("err = %v, want the set-down failure", err)
	}
	if applied != nil {
		t.Errorf("applied = %v, want none", applied)
	}
	if got, want := f.state(), []string{"1:ens3:true", "2:ens4:true"}; !reflect.DeepEqual(got, want) {
		t.Errorf("state = %v, want %v", got, want)
	}
}

func TestWaitFor(t *testing.T) {
	f := &fakeNL{
		links:    links("eth0"),
		failList: 1,
		appear:   map[int][]Link{3: {{Index: 5, Name: "eth1", MAC: "52:54:00:ab:cd:ef"}}},
	}
	missing, err := WaitFor(context.Background(), f, []string{mac(1), "52:54:00:AB:CD:EF"}, time.Millisecond)
	if err != nil || missing != nil {
		t.Errorf("WaitFor = %v, %v; want all present", missing, err)
	}
	if f.lists != 3 {
		t.Errorf("%d listings, want 3 (one failed, one without the MAC, one with)", f.lists)
	}
}

func TestWaitForTimeout(t *testing.T) {
	f := &fakeNL{links: links("eth0")}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	missing, err := WaitFor(ctx, f, []string{mac(1), mac(3), "52-54-00-00-00-02"}, time.Millisecond)
	if want := []string{mac(2), mac(3)}; !reflect.DeepEqual(missing, want) {
		t.Errorf("missing = %v, want %v", missing, want)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want deadline exceeded", err)
	}
	if f.lists < 2 {
		t.Errorf("%d listings, want polling", f.lists)
	}
}

func TestWaitForListFails(t *testing.T) {
	f := &fakeNL{links: links("eth0"), failList: 1 << 30}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	missing, err := WaitFor(ctx, f, []string{mac(1), "bogus"}, time.Millisecond)
	if want := []string{mac(1), "bogus"}; !reflect.DeepEqual(missing, want) {
		t.Errorf("missing = %v, want %v", missing, want)
	}
	if !errors.Is(err, errInjected) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want both the deadline and the listing error", err)
	}
}

// TestApplyNameInUse: renames onto a name held by a NIC that is not in the
// plan. Planned around when the holder is known: the entry is refused,
// with the entries that depended on it, and nothing is renamed. When the
// name is taken after the listing (a NIC hot-plugged in between), the
// kernel's EEXIST undoes what was done: every NIC is back at its name, none
// at a temporary one.
func TestApplyNameInUse(t *testing.T) {
	t.Run("held by a NIC not in the plan", func(t *testing.T) {
		// Link 2 (eth1) wants eth2, held by link 3, which is not being
		// renamed: refused. Then link 2 stays eth1, which link 1 (ens3)
		// wants: refused as well.
		f := &fakeNL{links: links("ens3", "eth1", "eth2")}
		before := f.state()
		applied, problems, err := Apply(f, map[string]string{mac(1): "eth1", mac(2): "eth2"})
		if err != nil || applied != nil {
			t.Fatalf("Apply = %v, %v; want nothing applied, no error", applied, err)
		}
		want := []Problem{
			{mac(1), "eth1", "name held by link 2 (MAC " + mac(2) + "), which is not being renamed"},
			{mac(2), "eth2", "name held by link 3 (MAC " + mac(3) + "), which is not being renamed"},
		}
		if !reflect.DeepEqual(problems, want) {
			t.Errorf("problems = %v\nwant %v", problems, want)
		}
		if got := f.state(); !reflect.DeepEqual(got, before) || f.renames != 0 {
			t.Errorf("state = %v after %d renames, want %v untouched", got, f.renames, before)
		}
	})
	t.Run("taken after the listing", func(t *testing.T) {
		// ens3 -> eth0, ens4 -> eth1; eth1 appears before the second
		// rename.
		f := &fakeNL{links: links("ens3", "ens4")}
		before := f.state()
		g := &hotplug{fakeNL: f, after: 1, link: Link{Index: 9, Name: "eth1", MAC: mac(9), Kind: "device"}}
		applied, _, err := Apply(g, map[string]string{mac(1): "eth0", mac(2): "eth1"})
		if !errors.Is(err, syscall.EEXIST) || !strings.Contains(err.Error(), "rename ens4 (link 2) to eth1") {
			t.Fatalf("err = %v, want EEXIST naming the rename", err)
		}
		if applied != nil {
			t.Errorf("applied = %v, want all undone", applied)
		}
		f.links = f.links[:2] // the newcomer is not ours to check
		if got := f.state(); !reflect.DeepEqual(got, before) {
			t.Errorf("state = %v, want %v", got, before)
		}
		noTemp(t, f)
	})
}

// hotplug adds link to the fake after the given number of renames.
type hotplug struct {
	*fakeNL
	after int
	link  Link
	done  bool
}

func (h *hotplug) SetName(index int, name string) error {
	if !h.done && h.renames >= h.after {
		h.links = append(h.links, h.link)
		h.done = true
	}
	return h.fakeNL.SetName(index, name)
}
