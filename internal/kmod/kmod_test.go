package kmod

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

const aliasFixture = `# Aliases extracted from modules themselves.
alias pci:v00001AF4d00001001sv*sd*bc*sc*i* virtio_pci
alias pci:v00001AF4d*sv*sd*bc*sc*i* virtio_pci
alias virtio:d00000002v* virtio_blk
alias virtio:d00000001v* virtio_net
alias fs-ext4 ext4
alias crypto-crc32c crc32c_intel
alias crypto-crc32c crc32c_generic
alias scsi:t-0x05* sr_mod
alias acpi*:PNP0501:* 8250-pnp
`

const softdepFixture = `# Soft dependencies extracted from modules themselves.
softdep ext4 pre: crypto-crc32c
softdep cifs gcm
softdep foo pre: a b post: c
`

const depFixture = `kernel/drivers/virtio/virtio_pci.ko.xz: kernel/drivers/virtio/virtio_pci_modern_dev.ko.xz
kernel/drivers/virtio/virtio_pci_modern_dev.ko.xz:
kernel/drivers/net/virtio_net.ko.xz: kernel/drivers/net/net_failover.ko.xz kernel/net/core/failover.ko.xz
kernel/drivers/net/net_failover.ko.xz: kernel/net/core/failover.ko.xz
kernel/net/core/failover.ko.xz:
kernel/fs/ext4/ext4.ko.xz: kernel/fs/jbd2/jbd2.ko.xz kernel/fs/mbcache.ko.xz kernel/lib/crc16.ko.xz
kernel/fs/jbd2/jbd2.ko.xz:
kernel/fs/mbcache.ko.xz:
kernel/lib/crc16.ko.xz:
kernel/arch/x86/crypto/crc32c-intel.ko.xz:
kernel/crypto/crc32c_generic.ko.xz:
kernel/drivers/scsi/sr_mod.ko.xz: kernel/drivers/cdrom/cdrom.ko.xz kernel/drivers/scsi/scsi_mod.ko.xz
kernel/drivers/cdrom/cdrom.ko.xz:
kernel/fs/nls/nls_iso8859-1.ko.xz:
kernel/foo.ko:
kernel/a.ko:
kernel/b.ko:
kernel/c.ko:
`

// virtio_blk and scsi_mod are built in.
const builtinFixture = `kernel/drivers/block/virtio_blk.ko
kernel/drivers/scsi/scsi_mod.ko
`

func index(t *testing.T) *Index {
	t.Helper()
	a, err := ParseAliases(strings.NewReader(aliasFixture))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSoftdeps(strings.NewReader(softdepFixture))
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(a, s)
	if err := ix.ReadDeps(strings.NewReader(depFixture)); err != nil {
		t.Fatal(err)
	}
	if err := ix.ReadBuiltin(strings.NewReader(builtinFixture)); err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestLookup(t *testing.T) {
	ix := index(t)
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"pci:v00001AF4d00001001sv00001AF4sd00000002bc01sc00i00", []string{"virtio_pci"}},
		{"pci:v00008086d00001237sv00001AF4sd00001100bc06sc00i00", nil},
		{"virtio:d00000002v00001AF4", []string{"virtio_blk"}},
		{"fs-ext4", []string{"ext4"}},
		{"crypto-crc32c", []string{"crc32c_generic", "crc32c_intel"}},
		{"scsi:t-0x05", []string{"sr_mod"}},
		{"acpi:PNP0501:", []string{"8250_pnp"}},
		{"nothing", nil},
	} {
		got := ix.Lookup(tt.name)
		if len(got) == 0 && len(tt.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Lookup(%q) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestParseSoftdeps(t *testing.T) {
	s, err := ParseSoftdeps(strings.NewReader(softdepFixture))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Softdep{
		"ext4": {Pre: []string{"crypto-crc32c"}},
		"cifs": {},
		"foo":  {Pre: []string{"a", "b"}, Post: []string{"c"}},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("got %+v, want %+v", s, want)
	}
}

func TestParseAliasesError(t *testing.T) {
	_, err := ParseAliases(strings.NewReader("alias a b\nbogus line\n"))
	if err == nil || !strings.Contains(err.Error(), "modules.alias:2") {
		t.Fatalf("got %v, want an error naming line 2", err)
	}
}

// fakeLoader records loads: the order their starts and ends came in, how
// many were in flight at most, and which modules were checked. Like a
// real bus driver, some modules make new devices appear in the fake sysfs.
type fakeLoader struct {
	t       *testing.T
	sysfs   string
	fail    map[string]bool
	present map[string]bool                 // in the kernel already
	appears map[string][2]string            // module -> (device dir, modalias) it exposes
	gate    func(name string, inflight int) // called during each load, outside the lock

	mu          sync.Mutex
	events      []string // "start NAME", "end NAME"
	loaded      []string // file names, as loaded
	checked     []string // Loaded calls
	inflight    int
	maxInflight int
}

func (l *fakeLoader) Loaded(m string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.checked = append(l.checked, m)
	return l.present[m]
}

func (l *fakeLoader) Load(file string) error {
	name := Normalize(fileBase(file))
	l.mu.Lock()
	l.inflight++
	n := l.inflight
	l.maxInflight = max(l.maxInflight, l.inflight)
	l.events = append(l.events, "start "+name)
	l.mu.Unlock()
	if l.gate != nil {
		l.gate(name, n)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inflight--
	l.events = append(l.events, "end "+name)
	if l.fail[name] {
		return errors.New("no such device")
	}
	l.loaded = append(l.loaded, fileBase(file))
	if dev, ok := l.appears[name]; ok {
		writeAlias(l.t, l.sysfs, dev[0], dev[1])
	}
	return nil
}

// at is the index of event in l.events, -1 if absent.
func (l *fakeLoader) at(event string) int { return slices.Index(l.events, event) }

// checkOrder checks the events against ix: every module started after
// each of its modules.dep dependencies and pre softdeps that loaded
// ended, its post softdeps started after it ended, and no module whose
// dependency failed started at all.
func (l *fakeLoader) checkOrder(t *testing.T, ix *Index) {
	t.Helper()
	for _, ev := range l.events {
		m, ok := strings.CutPrefix(ev, "start ")
		if !ok {
			continue
		}
		start := l.at(ev)
		for _, d := range ix.deps[m] {
			if l.fail[d] {
				t.Errorf("%s started though its dependency %s failed: %v", m, d, l.events)
			}
			if e := l.at("end " + d); e > start || (e < 0 && l.at("start "+d) >= 0) {
				t.Errorf("%s started before its dependency %s ended: %v", m, d, l.events)
			}
		}
		sd := ix.Softdep(m)
		for _, pre := range sd.Pre {
			for _, p := range append(ix.Lookup(pre), Normalize(pre)) {
				if e := l.at("end " + p); e > start || (e < 0 && l.at("start "+p) >= 0) {
					t.Errorf("%s started before its pre softdep %s ended: %v", m, p, l.events)
				}
			}
		}
		for _, post := range sd.Post {
			for _, p := range append(ix.Lookup(post), Normalize(post)) {
				if s := l.at("start " + p); s >= 0 && s < l.at("end "+m) {
					t.Errorf("post softdep %s of %s started before it ended: %v", p, m, l.events)
				}
			}
		}
	}
}

func writeAlias(t *testing.T, sysfs, dev, alias string) {
	t.Helper()
	d := filepath.Join(sysfs, "devices", dev)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "modalias"), []byte(alias+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestColdplugFollowsNewDevices(t *testing.T) {
	sysfs := t.TempDir()
	writeAlias(t, sysfs, "pci0000:00/0000:00:04.0", "pci:v00001AF4d00001001sv00001AF4sd00000002bc01sc00i00")
	writeAlias(t, sysfs, "pci0000:00/0000:00:05.0", "pci:v00001AF4d00001000sv00001AF4sd00000001bc02sc00i00")
	writeAlias(t, sysfs, "pci0000:00/0000:00:01.0", "pci:v00008086d00007000sv*") // nothing matches
	l := &fakeLoader{t: t, sysfs: sysfs, fail: map[string]bool{"crc32c_intel": true}, appears: map[string][2]string{
		// virtio_pci finds a virtio block and a virtio net device behind
		// the PCI functions.
		"virtio_pci": {"pci0000:00/0000:00:04.0/virtio0", "virtio:d00000002v00001AF4"},
	}}
	ix := index(t)
	c := NewColdplug(ix, l, sysfs, t.Logf)
	c.Workers = 1
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Settle(ctx, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	writeAlias(t, sysfs, "pci0000:00/0000:00:05.0/virtio1", "virtio:d00000001v00001AF4")
	if _, err := c.Scan(); err != nil {
		t.Fatal(err)
	}
	// virtio_blk is built in: nothing to load.
	if want := []string{"virtio_pci_modern_dev", "virtio_pci", "failover", "net_failover", "virtio_net"}; !reflect.DeepEqual(l.loaded, want) {
		t.Fatalf("loaded %v, want %v", l.loaded, want)
	}
	// Filesystem modules load on demand, softdeps first; one of the two
	// crc32c providers failing is fine.
	if err := c.Load("fs-ext4"); err != nil {
		t.Fatal(err)
	}
	l.checkOrder(t, ix)
	if got, want := l.loaded[5:], []string{"crc32c_generic", "jbd2", "mbcache", "crc16", "ext4"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("loaded %v, want %v", got, want)
	}
	// A module is attempted once per boot.
	if err := c.Load("ext4"); err != nil {
		t.Fatal(err)
	}
	if len(l.loaded) != 10 {
		t.Fatalf("ext4 loaded twice: %v", l.loaded)
	}
	if c.Failed["crc32c_intel"] == nil {
		t.Errorf("failure of crc32c_intel not recorded")
	}
	if !reflect.DeepEqual(c.Loaded, []string{"virtio_pci_modern_dev", "virtio_pci", "failover", "net_failover", "virtio_net", "crc32c_generic", "jbd2", "mbcache", "crc16", "ext4"}) {
		t.Errorf("Loaded = %v", c.Loaded)
	}
}

// TestColdplugOrder loads module sets with 1, 2 and 4 workers: every
// module after what modules.dep and its pre softdeps name, before its post
// softdeps, never more loads at once than the bound, a failed dependency
// failing its dependents and nothing else.
func TestColdplugOrder(t *testing.T) {
	const deps = `kernel/top.ko: kernel/mid1.ko kernel/mid2.ko kernel/leaf.ko
kernel/mid1.ko: kernel/leaf.ko
kernel/mid2.ko: kernel/leaf.ko
kernel/leaf.ko:
kernel/w1.ko:
kernel/w2.ko:
kernel/w3.ko:
kernel/w4.ko:
kernel/w5.ko:
kernel/p.ko:
kernel/q.ko:
kernel/s.ko: kernel/w1.ko
kernel/u.ko:
kernel/v.ko:
`
	const softdeps = `softdep p pre: q
softdep q pre: p
softdep s pre: u post: v
`
	for _, tt := range []struct {
		name   string
		load   []string
		fail   []string
		loaded []string // as a set
		failed []string
		events []string // exactly, when the order is known
	}{
		{name: "diamond", load: []string{"top"}, loaded: []string{"leaf", "mid1", "mid2", "top"}},
		{name: "wide", load: []string{"w1", "w2", "w3", "w4", "w5", "top"}, loaded: []string{"w1", "w2", "w3", "w4", "w5", "leaf", "mid1", "mid2", "top"}},
		// As modprobe: p's own pre softdep first, q's pre: p ignored.
		{name: "softdep cycle", load: []string{"p"}, loaded: []string{"p", "q"}, events: []string{"start q", "end q", "start p", "end p"}},
		{name: "pre and post", load: []string{"s"}, loaded: []string{"u", "w1", "s", "v"}},
		{name: "failed dependency", load: []string{"top", "w2"}, fail: []string{"mid2"}, loaded: []string{"leaf", "mid1", "w2"}, failed: []string{"mid2", "top"}},
		{name: "failed pre softdep", load: []string{"s"}, fail: []string{"u"}, loaded: []string{"w1", "s", "v"}, failed: []string{"u"}},
	} {
		for _, workers := range []int{1, 2, 4} {
			t.Run(fmt.Sprintf("%s/%d", tt.name, workers), func(t *testing.T) {
				sd, err := ParseSoftdeps(strings.NewReader(softdeps))
				if err != nil {
					t.Fatal(err)
				}
				ix := NewIndex(nil, sd)
				if err := ix.ReadDeps(strings.NewReader(deps)); err != nil {
					t.Fatal(err)
				}
				l := &fakeLoader{t: t, fail: map[string]bool{}}
				for _, f := range tt.fail {
					l.fail[f] = true
				}
				c := NewColdplug(ix, l, t.TempDir(), t.Logf)
				c.Workers = workers
				c.mu.Lock()
				c.loadAll([][]string{tt.load})
				c.mu.Unlock()
				if tt.events != nil {
					if !reflect.DeepEqual(l.events, tt.events) {
						t.Errorf("events %v, want %v", l.events, tt.events)
					}
				} else {
					l.checkOrder(t, ix)
				}
				if l.maxInflight > workers {
					t.Errorf("%d loads at once, bound %d", l.maxInflight, workers)
				}
				got := slices.Sorted(slices.Values(c.Loaded))
				if want := slices.Sorted(slices.Values(tt.loaded)); !reflect.DeepEqual(got, want) {
					t.Errorf("loaded %v, want %v (events %v)", got, want, l.events)
				}
				var failed []string
				for m := range c.Failed {
					failed = append(failed, m)
				}
				slices.Sort(failed)
				if want := slices.Sorted(slices.Values(tt.failed)); !reflect.DeepEqual(failed, want) {
					t.Errorf("failed %v, want %v", failed, want)
				}
				if tt.name == "failed dependency" && !strings.Contains(fmt.Sprint(c.Failed["top"]), "dependency mid2") {
					t.Errorf("top's error %v does not name mid2", c.Failed["top"])
				}
			})
		}
	}
}

// TestColdplugConcurrent: independent modules load at once, up to the
// bound and no more. Each load waits until the bound is reached (or no
// other module is left to start), so a loader that loaded one at a time
// would never finish: the test fails after a generous deadline instead of
// hanging.
func TestColdplugConcurrent(t *testing.T) {
	ix := NewIndex(nil, nil)
	if err := ix.ReadDeps(strings.NewReader("kernel/a.ko:\nkernel/b.ko:\nkernel/c.ko:\nkernel/d.ko:\nkernel/e.ko:\n")); err != nil {
		t.Fatal(err)
	}
	const bound = 2
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	started, workers := 0, 0
	timedOut := false
	l := &fakeLoader{t: t}
	l.gate = func(name string, _ int) {
		mu.Lock()
		defer mu.Unlock()
		started++
		me := started
		if me == bound {
			// Every worker the round started, loading or waiting:
			// the bound, not more.
			workers = countWorkers()
		}
		cond.Broadcast()
		// The first 4 loads pair up (the 1st waits for the 2nd to
		// start, the 3rd for the 4th); the 5th is alone.
		for me < 4 && me%bound != 0 && started <= me && !timedOut {
			cond.Wait()
		}
	}
	deadline := time.AfterFunc(30*time.Second, func() {
		mu.Lock()
		timedOut = true
		cond.Broadcast()
		mu.Unlock()
	})
	defer deadline.Stop()
	c := NewColdplug(ix, l, t.TempDir(), nil)
	c.Workers = bound
	c.mu.Lock()
	c.loadAll([][]string{{"a", "b", "c", "d", "e"}})
	c.mu.Unlock()
	if timedOut {
		t.Fatalf("loads never overlapped: %v", l.events)
	}
	if l.maxInflight != bound {
		t.Errorf("at most %d loads at once, want %d", l.maxInflight, bound)
	}
	if workers != bound {
		t.Errorf("%d workers loading, want %d", workers, bound)
	}
	if len(c.Loaded) != 5 {
		t.Errorf("loaded %v", c.Loaded)
	}
}

// countWorkers counts the goroutines running a round's worker.
func countWorkers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "kmod.(*plan).run.func") {
			n++
		}
	}
	return n
}

// TestColdplugFree: a built-in module costs no call to the loader at all;
// one already in the kernel costs the one check, and its dependencies are
// not looked at.
func TestColdplugFree(t *testing.T) {
	ix := index(t)
	l := &fakeLoader{t: t, present: map[string]bool{"ext4": true}}
	c := NewColdplug(ix, l, t.TempDir(), nil)
	for _, m := range []string{"virtio_blk", "scsi_mod", "ext4", "fs-ext4"} {
		if err := c.Load(m); err != nil {
			t.Errorf("Load(%s) = %v", m, err)
		}
	}
	if len(l.events) != 0 || len(c.Loaded) != 0 {
		t.Errorf("loads: %v, Loaded %v", l.events, c.Loaded)
	}
	if !reflect.DeepEqual(l.checked, []string{"ext4"}) {
		t.Errorf("checked %v, want only ext4", l.checked)
	}
	// sr_mod needs the built-in scsi_mod and cdrom: only cdrom and
	// sr_mod are checked and loaded.
	l.checked = nil
	if err := c.Load("sr_mod"); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(l.loaded, []string{"cdrom", "sr_mod"}) || !reflect.DeepEqual(slices.Sorted(slices.Values(l.checked)), []string{"cdrom", "sr_mod"}) {
		t.Errorf("loaded %v, checked %v", l.loaded, l.checked)
	}
}

func TestLoadFailsWhenNoProviderLoads(t *testing.T) {
	l := &fakeLoader{t: t, fail: map[string]bool{"crc32c_intel": true, "crc32c_generic": true}}
	c := NewColdplug(index(t), l, t.TempDir(), nil)
	if err := c.Load("crypto-crc32c"); err == nil {
		t.Fatal("Load succeeded with every provider failing")
	}
	if err := c.Load("no_such_module"); err == nil || !strings.Contains(err.Error(), "no_such_module") {
		t.Errorf("Load of an unknown module = %v", err)
	}
}

func TestSettleBounded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := NewColdplug(index(t), &fakeLoader{t: t}, t.TempDir(), nil)
	os.MkdirAll(filepath.Join(c.sysfs, "devices"), 0o755)
	if err := c.Settle(ctx, time.Hour); err == nil {
		t.Fatal("Settle ignored a cancelled context")
	}
}

func TestReadIndex(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "modules.alias"), []byte("alias fs-vfat vfat\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "modules.dep"), []byte("kernel/fs/nls/nls_iso8859-1.ko:\nkernel/fs/fat/vfat.ko.xz: kernel/fs/fat/fat.ko.xz\nkernel/fs/fat/fat.ko.xz:\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "modules.builtin"), []byte("kernel/fs/ext4/ext4.ko\nkernel/drivers/block/virtio_blk.ko\n"), 0o644)
	ix, err := ReadIndex(os.DirFS(dir), ".")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{"nls_iso8859_1": "nls_iso8859-1", "nls-iso8859-1": "nls_iso8859-1", "vfat": "vfat", "unknown-mod": "unknown_mod"} {
		if got := ix.FileName(in); got != want {
			t.Errorf("FileName(%q) = %q, want %q", in, got, want)
		}
	}
	if got := ix.paths["vfat"]; got != "kernel/fs/fat/vfat.ko.xz" {
		t.Errorf("vfat's file %q", got)
	}
	if got := ix.deps["vfat"]; !reflect.DeepEqual(got, []string{"fat"}) {
		t.Errorf("vfat's dependencies %q", got)
	}
	if !ix.builtin["ext4"] || !ix.builtin["virtio_blk"] || ix.builtin["vfat"] {
		t.Errorf("builtin %v", ix.builtin)
	}
}

func TestColdplugLoadsByFileName(t *testing.T) {
	l := &fakeLoader{t: t}
	c := NewColdplug(index(t), l, t.TempDir(), nil)
	if err := c.Load("nls_iso8859_1"); err != nil {
		t.Fatal(err)
	}
	if len(l.loaded) != 1 || l.loaded[0] != "nls_iso8859-1" {
		t.Errorf("loaded %v, want the file's own name", l.loaded)
	}
}

// TestSysLoader: Loaded is Sysfs/module/NAME; Load names the file it
// could not load.
func TestSysLoader(t *testing.T) {
	sysfs := t.TempDir()
	if err := os.MkdirAll(filepath.Join(sysfs, "module", "ext4"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := SysLoader{Dir: t.TempDir(), Sysfs: sysfs}
	if !l.Loaded("ext4") || l.Loaded("vfat") {
		t.Errorf("Loaded(ext4) = %v, Loaded(vfat) = %v", l.Loaded("ext4"), l.Loaded("vfat"))
	}
	if err := l.Load("kernel/fs/fat/vfat.ko"); err == nil || !strings.Contains(err.Error(), "vfat.ko") {
		t.Errorf("Load of a missing file = %v", err)
	}
}

// TestLoadSeveralAtOnce: Load's names make one round (a filesystem and
// its code pages load at once), each module after its dependencies, and
// the error names only what did not load.
func TestLoadSeveralAtOnce(t *testing.T) {
	a, err := ParseAliases(strings.NewReader("alias fs-vfat vfat\n"))
	if err != nil {
		t.Fatal(err)
	}
	ix := NewIndex(a, nil)
	if err := ix.ReadDeps(strings.NewReader("kernel/fs/fat/vfat.ko: kernel/fs/fat/fat.ko\nkernel/fs/fat/fat.ko:\nkernel/fs/nls/nls_cp437.ko:\nkernel/fs/nls/nls_utf8.ko:\n")); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	started, timedOut := 0, false
	l := &fakeLoader{t: t}
	l.gate = func(string, int) {
		mu.Lock()
		defer mu.Unlock()
		started++
		cond.Broadcast()
		// The first load waits for a second to start: loading one name
		// at a time would never get there.
		for started < 2 && !timedOut {
			cond.Wait()
		}
	}
	deadline := time.AfterFunc(30*time.Second, func() {
		mu.Lock()
		timedOut = true
		cond.Broadcast()
		mu.Unlock()
	})
	defer deadline.Stop()
	c := NewColdplug(ix, l, t.TempDir(), nil)
	c.Workers = 2
	err = c.Load("fs-vfat", "nls_cp437", "nls-utf8", "no_such")
	if timedOut {
		t.Fatalf("loads never overlapped: %v", l.events)
	}
	if err == nil || !strings.Contains(err.Error(), "no_such") || strings.Contains(err.Error(), "vfat") {
		t.Errorf("Load error %v, want one naming no_such alone", err)
	}
	if got := slices.Sorted(slices.Values(c.Loaded)); !reflect.DeepEqual(got, []string{"fat", "nls_cp437", "nls_utf8", "vfat"}) {
		t.Errorf("loaded %v", c.Loaded)
	}
	if l.maxInflight < 2 {
		t.Errorf("at most %d loads at once, want 2", l.maxInflight)
	}
	l.checkOrder(t, ix)
	if err := c.Load(); err != nil {
		t.Errorf("Load() = %v", err)
	}
}
