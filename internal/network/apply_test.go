package network

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// fakeNL is an in-memory nic.Netlinker: a name is held by one link only
// (EEXIST) and a link that is up cannot be renamed (EBUSY), as on an old
// kernel. Links in late show up at the given LinkList call.
type fakeNL struct {
	links    []nic.Link
	late     map[int][]nic.Link
	lists    int
	failName bool // every SetName fails
	calls    []string
}

func (f *fakeNL) LinkList() ([]nic.Link, error) {
	f.lists++
	f.links = append(f.links, f.late[f.lists]...)
	return slices.Clone(f.links), nil
}

func (f *fakeNL) find(index int) (*nic.Link, error) {
	for i := range f.links {
		if f.links[i].Index == index {
			return &f.links[i], nil
		}
	}
	return nil, syscall.ENODEV
}

func (f *fakeNL) SetName(index int, name string) error {
	f.calls = append(f.calls, fmt.Sprintf("name %d %s", index, name))
	if f.failName {
		return errors.New("injected")
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
	l, err := f.find(index)
	if err == nil {
		l.Up = true
	}
	return err
}

func (f *fakeNL) SetDown(index int) error {
	l, err := f.find(index)
	if err == nil {
		l.Up = false
	}
	return err
}

// names is index:name of every link.
func (f *fakeNL) names() []string {
	var s []string
	for _, l := range f.links {
		s = append(s, fmt.Sprintf("%d:%s", l.Index, l.Name))
	}
	return s
}

// testLog records what is logged, "E " for errors, "D " for debug lines.
type testLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *testLog) add(p, f string, a ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, p+fmt.Sprintf(f, a...))
}
func (l *testLog) Printf(f string, a ...any) { l.add("", f, a...) }
func (l *testLog) Errorf(f string, a ...any) { l.add("E ", f, a...) }
func (l *testLog) Debugf(f string, a ...any) { l.add("D ", f, a...) }

// without returns the lines but the debug ones.
func (l *testLog) without() []string {
	var out []string
	for _, s := range l.lines {
		if !strings.HasPrefix(s, "D ") {
			out = append(out, s)
		}
	}
	return out
}

func readRoot(t *testing.T, root *rootfs.Root, name string) string {
	t.Helper()
	b, err := root.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestApply: the swap is done, logged and persisted, the files written with
// their digest; a second run of the same instance leaves them alone, a new
// instance or a changed config rewrites them.
func TestApply(t *testing.T) {
	root := newRoot(t, networkdBins, udevd)
	build := func(data string) *Result {
		res, err := Build(Input{Format: "yaml", Data: []byte(data), NICs: LiveNICs(testLinks()), Root: root, Fallback: true})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := build(v2Swap)
	nl := &fakeNL{links: testLinks()}
	nl.links[1].Up = true
	log := &testLog{}
	env := Env{Netlink: nl, Root: root, Log: log, Wait: time.Second}
	if _, err := Apply(context.Background(), env, res); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if want := []string{"1:lo", "2:eth1", "3:eth0", "4:br0"}; !reflect.DeepEqual(nl.names(), want) {
		t.Errorf("links %q, want %q", nl.names(), want)
	}
	if !nl.links[1].Up {
		t.Error("eth0, up before, is left down")
	}
	want := []string{
		"network: renamed eth1 -> eirtmp0", "network: renamed eth0 -> eth1", "network: renamed eirtmp0 -> eth0",
		"network: renderer networkd",
		"network: wrote /etc/systemd/network/10-cloud-init-eth0.network",
		"network: wrote /etc/systemd/network/10-cloud-init-eth1.network",
		"network: wrote /etc/systemd/network/10-earlyinit-eth0.link",
		"network: wrote /etc/systemd/network/10-earlyinit-eth1.link",
	}
	if !reflect.DeepEqual(log.without(), want) {
		t.Errorf("log:\n%s\nwant\n%s", strings.Join(log.without(), "\n"), strings.Join(want, "\n"))
	}
	for _, f := range res.Files {
		if got := readRoot(t, root, f.Path); got != string(f.Data) {
			t.Errorf("%s = %q, want %q", f.Path, got, f.Data)
		}
	}
	digest := readRoot(t, root, DigestFile)
	if digest != digestFiles(res.Files)+"\n" {
		t.Errorf("%s = %q", DigestFile, digest)
	}

	// Same instance, same files: left alone, even a file changed since.
	const link = "/etc/systemd/network/10-earlyinit-eth0.link"
	if err := root.WriteFile(link, []byte("mine\n"), 0o644, 0, 0); err != nil {
		t.Fatal(err)
	}
	rerun := func(res *Result, isNew bool) []string {
		t.Helper()
		nl := &fakeNL{links: []nic.Link{{Index: 2, Name: "eth1", MAC: mac1, Kind: "device"}, {Index: 3, Name: "eth0", MAC: mac2, Kind: "device"}}}
		log := &testLog{}
		env := Env{Netlink: nl, Root: root, Log: log, Wait: time.Second, IsNew: isNew}
		if _, err := Apply(context.Background(), env, res); err != nil {
			t.Fatalf("Apply: %v", err)
		}
		if len(nl.calls) != 0 {
			t.Errorf("names in place, yet %q", nl.calls)
		}
		return log.without()
	}
	if got := rerun(res, false); !reflect.DeepEqual(got, []string{"network: renderer networkd", "network: config unchanged since last written; left as is"}) {
		t.Errorf("same instance: log %q", got)
	}
	if readRoot(t, root, link) != "mine\n" {
		t.Error("same instance, same config: a file was rewritten")
	}
	// A new instance: written again.
	if got := rerun(res, true); len(got) != 5 || got[3] != "network: wrote "+link {
		t.Errorf("new instance: log %q", got)
	}
	if readRoot(t, root, link) == "mine\n" {
		t.Error("new instance: not rewritten")
	}
	// Another config: written again, the digest follows.
	res2 := build(strings.Replace(v2Swap, "dhcp4: true}\n", "dhcp4: true, mtu: 1400}\n", 1))
	if got := rerun(res2, false); len(got) != 5 {
		t.Errorf("changed config: log %q", got)
	}
	if readRoot(t, root, DigestFile) != digestFiles(res2.Files)+"\n" || digestFiles(res2.Files) == digestFiles(res.Files) {
		t.Error("changed config: digest not updated")
	}
}

// TestApplyFileRefused: a file that cannot be written (a directory at its
// name) fails Apply with its name; the others are written, and the
// digest is not, so the next boot of the same instance writes them all
// again rather than find the config "unchanged".
func TestApplyFileRefused(t *testing.T) {
	root := newRoot(t, networkdBins, udevd)
	res, err := Build(Input{Format: "yaml", Data: []byte(v2Swap), NICs: LiveNICs(testLinks()), Root: root, Fallback: true})
	if err != nil {
		t.Fatal(err)
	}
	const link = "/etc/systemd/network/10-earlyinit-eth0.link"
	if err := root.MkdirAll(link+"/x", 0o755, 0, 0); err != nil {
		t.Fatal(err)
	}
	apply := func() (error, []string) {
		log := &testLog{}
		env := Env{Netlink: &fakeNL{links: testLinks()}, Root: root, Log: log, Wait: time.Second}
		_, err := Apply(context.Background(), env, res)
		return err, log.without()
	}
	err, got := apply()
	if err == nil || !strings.Contains(err.Error(), link) {
		t.Fatalf("Apply: %v, want an error naming %s", err, link)
	}
	if slices.Contains(got, "network: wrote "+link) {
		t.Errorf("log says %s was written:\n%s", link, strings.Join(got, "\n"))
	}
	for _, f := range res.Files {
		if f.Path == link {
			continue
		}
		if readRoot(t, root, f.Path) != string(f.Data) {
			t.Errorf("%s not written", f.Path)
		}
		if !slices.Contains(got, "network: wrote "+f.Path) {
			t.Errorf("no \"wrote %s\" in the log:\n%s", f.Path, strings.Join(got, "\n"))
		}
	}
	if _, err := root.ReadFile(DigestFile); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s after a failed file: %v, want none", DigestFile, err)
	}
	// The directory gone, the same instance's next boot writes the files.
	for _, p := range []string{link + "/x", link} {
		if err := root.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	if err, got := apply(); err != nil || !slices.Contains(got, "network: wrote "+link) {
		t.Errorf("next boot: %v, log:\n%s", err, strings.Join(got, "\n"))
	}
	if readRoot(t, root, DigestFile) != digestFiles(res.Files)+"\n" {
		t.Errorf("%s not written on the next boot", DigestFile)
	}
}

// TestApplyMissingNIC: a NIC that never shows up is waited for (scanning
// between polls, the scan's module loading not counted), reported, left out
// of the persistent names; the one that is there is renamed and persisted.
// A NIC that shows up late is waited for.
func TestApplyMissingNIC(t *testing.T) {
	const mac3 = "52:54:00:00:00:03"
	root := newRoot(t, networkdBins, udevd)
	v2 := "network:\n  version: 2\n  ethernets:\n" +
		"    a: {match: {macaddress: \"" + mac2 + "\"}, set-name: lan0, dhcp4: true}\n" +
		"    b: {match: {macaddress: \"" + mac3 + "\"}, set-name: lan1, dhcp4: true}\n"
	res, err := Build(Input{Format: "yaml", Data: []byte(v2), NICs: LiveNICs(testLinks()), Root: root, Fallback: true})
	if err != nil {
		t.Fatal(err)
	}
	nl := &fakeNL{links: testLinks()}
	log := &testLog{}
	var loaded time.Duration
	scans := 0
	env := Env{Netlink: nl, Root: root, Log: log, Wait: 600 * time.Millisecond,
		Scan:     func() { scans++; loaded += 100 * time.Millisecond },
		LoadTime: func() time.Duration { return loaded }}
	t0 := time.Now()
	wait, err := Apply(context.Background(), env, res)
	elapsed := time.Since(t0)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if scans == 0 {
		t.Error("no scan between polls")
	}
	if wait > elapsed-loaded || wait < env.Wait-loaded-50*time.Millisecond {
		t.Errorf("device wait %s: elapsed %s, module loading %s, bound %s", wait, elapsed, loaded, env.Wait)
	}
	lines := log.without()
	if len(lines) < 3 || lines[0] != "E network: NICs not found within 600ms: "+mac3 ||
		lines[1] != `E network: rename `+mac3+` to "lan1": missing: no live link has this MAC` || lines[2] != "network: renamed eth1 -> lan0" {
		t.Errorf("log %q", lines)
	}
	if !root.Exists("/etc/systemd/network/10-earlyinit-lan0.link") || root.Exists("/etc/systemd/network/10-earlyinit-lan1.link") {
		t.Error("persisted names are not those that took")
	}
	if !root.Exists("/etc/systemd/network/10-cloud-init-lan1.network") {
		t.Error("the missing NIC's config was not written")
	}

	// Late: it shows up on the third listing.
	nl = &fakeNL{links: testLinks(), late: map[int][]nic.Link{3: {{Index: 5, Name: "eth2", MAC: mac3, Kind: "device"}}}}
	log = &testLog{}
	env = Env{Netlink: nl, Root: root, Log: log, Wait: 5 * time.Second, IsNew: true}
	if _, err := Apply(context.Background(), env, res); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if want := []string{"1:lo", "2:eth0", "3:lan0", "4:br0", "5:lan1"}; !reflect.DeepEqual(nl.names(), want) {
		t.Errorf("links %q, want %q", nl.names(), want)
	}
	if !root.Exists("/etc/systemd/network/10-earlyinit-lan1.link") {
		t.Error("the late NIC's name was not persisted")
	}
}

// TestApplyRenameFails: a failed rename is the error, the files are still
// written (with the names planned: Plan refused none).
func TestApplyRenameFails(t *testing.T) {
	root := newRoot(t, networkdBins)
	res, err := Build(Input{Format: "yaml", Data: []byte(v2Swap), NICs: LiveNICs(testLinks()), Root: root, Fallback: true})
	if err != nil {
		t.Fatal(err)
	}
	nl := &fakeNL{links: testLinks(), failName: true}
	_, err = Apply(context.Background(), Env{Netlink: nl, Root: root, Log: &testLog{}, Wait: time.Second}, res)
	if err == nil || !strings.Contains(err.Error(), "rename NICs: ") {
		t.Errorf("Apply: %v, want the rename error", err)
	}
	if !strings.Contains(readRoot(t, root, "/etc/udev/rules.d/70-persistent-net.rules"), `NAME="eth1"`) {
		t.Error("files not written")
	}
}

// TestApplyNothingWritten: a disabled config touches nothing; a Result
// whose rendering failed has its NICs renamed, and nothing written.
func TestApplyNothingWritten(t *testing.T) {
	root := newRoot(t)
	res, err := Build(Input{Format: "yaml", Data: []byte(disabled), NICs: LiveNICs(testLinks()), Root: root, Fallback: true})
	if err != nil {
		t.Fatal(err)
	}
	nl := &fakeNL{links: testLinks()}
	log := &testLog{}
	if _, err := Apply(context.Background(), Env{Netlink: nl, Root: root, Log: log, Wait: time.Second}, res); err != nil || nl.lists != 0 {
		t.Errorf("disabled: Apply %v, %d listings", err, nl.lists)
	}
	if !reflect.DeepEqual(log.lines, []string{"network: config disabled by the datasource; nothing renamed or written"}) {
		t.Errorf("disabled: log %q", log.lines)
	}

	res, buildErr := Build(Input{Format: "yaml", Data: []byte(v2Swap), NICs: LiveNICs(testLinks()), Root: root, Fallback: true})
	if buildErr == nil {
		t.Fatal("Build found a renderer in an empty root")
	}
	log = &testLog{}
	if _, err := Apply(context.Background(), Env{Netlink: nl, Root: root, Log: log, Wait: time.Second}, res); err != nil {
		t.Errorf("no renderer: Apply %v", err)
	}
	if want := []string{"1:lo", "2:eth1", "3:eth0", "4:br0"}; !reflect.DeepEqual(nl.names(), want) {
		t.Errorf("no renderer: links %q, want %q", nl.names(), want)
	}
	if root.Exists(DigestFile) || root.Exists(nic.UdevRules) {
		t.Error("no renderer: files written")
	}
}

// TestResultLogNotes: notes are logged as the boot always did.
func TestResultLogNotes(t *testing.T) {
	log := &testLog{}
	(&Result{Notes: []Note{{Warning: true, Text: "bad; using the fallback config instead"}, {Text: "fallback config, DHCP on eth0"}}}).LogNotes(log)
	want := []string{"E network: bad; using the fallback config instead", "network: fallback config, DHCP on eth0"}
	if !reflect.DeepEqual(log.lines, want) {
		t.Errorf("log %q, want %q", log.lines, want)
	}
}

// TestApplyTakesOverCloudInitFiles: a netplan or ENI file cloud-init left
// in the root would be read beside earlyinit's (two configs for one NIC):
// earlyinit's config takes its path, as cloud-init re-renders its file,
// with a copy of the old one (0600) under BackupDir; a second cloud-init
// ENI name is moved aside, earlyinit's own file of an earlier boot is
// removed; a later boot keeps the first copy; when the copy cannot be
// made, nothing is written.
func TestApplyTakesOverCloudInitFiles(t *testing.T) {
	const ciNetplan = "/etc/netplan/50-cloud-init.yaml"
	const ciENI, ciENI2 = "/etc/network/interfaces.d/50-cloud-init", "/etc/network/interfaces.d/50-cloud-init.cfg"
	for _, tc := range []struct {
		name      string
		bins      []string
		files     []string // path=content
		want      string   // the file that holds earlyinit's config
		gone      []string
		backedUp  []string
		blockCopy bool
	}{
		{name: "netplan", bins: netplanBin, files: []string{ciNetplan + "=network: {version: 2, ethernets: {eth0: {dhcp4: true}}}\n"},
			want: ciNetplan, backedUp: []string{ciNetplan}},
		{name: "netplan and an earlier earlyinit file", bins: netplanBin,
			files: []string{ciNetplan + "=network: {version: 2}\n", render.NetplanPath + "=# Written by earlyinit from the instance's network configuration.\n"},
			want:  ciNetplan, gone: []string{render.NetplanPath}, backedUp: []string{ciNetplan}},
		{name: "eni, both of cloud-init's names", bins: eniBins,
			files: []string{"/etc/network/interfaces=source /etc/network/interfaces.d/*\n", ciENI + "=auto eth0\niface eth0 inet dhcp\n", ciENI2 + "=auto eth1\niface eth1 inet dhcp\n"},
			want:  ciENI, gone: []string{ciENI2}, backedUp: []string{ciENI, ciENI2}},
		{name: "no copy, nothing written", bins: netplanBin, files: []string{ciNetplan + "=network: {version: 2}\n", BackupDir + "=not a directory"},
			blockCopy: true},
		{name: "none of cloud-init's", bins: netplanBin, want: render.NetplanPath},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := newRoot(t, tc.bins, udevd, tc.files)
			before := map[string]string{}
			for _, f := range tc.files {
				name, data, _ := strings.Cut(f, "=")
				before[name] = data
			}
			res, err := Build(Input{Format: "yaml", Data: []byte(v2Swap), NICs: LiveNICs(testLinks()), Root: root, Fallback: true})
			if err != nil {
				t.Fatal(err)
			}
			log := &testLog{}
			env := Env{Netlink: &fakeNL{links: testLinks()}, Root: root, Log: log, Wait: time.Second, IsNew: true}
			_, err = Apply(context.Background(), env, res)
			if tc.blockCopy {
				if err == nil || !strings.Contains(err.Error(), "keep a copy of "+ciNetplan) || !strings.Contains(err.Error(), "the network files are not written") {
					t.Fatalf("Apply: %v", err)
				}
				if readRoot(t, root, ciNetplan) != before[ciNetplan] {
					t.Fatal("cloud-init's file was replaced without its copy")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := readRoot(t, root, tc.want); !strings.HasPrefix(got, "# Written by earlyinit") {
				t.Errorf("%s = %q, want earlyinit's config", tc.want, got)
			}
			for _, f := range tc.gone {
				if root.Exists(f) {
					t.Errorf("%s left beside %s", f, tc.want)
				}
			}
			for _, p := range tc.backedUp {
				fi, err := root.Stat(BackupDir + p)
				if err != nil || fi.Mode().Perm() != 0o600 || readRoot(t, root, BackupDir+p) != before[p] {
					t.Errorf("copy of %s: %v %v", p, fi, err)
				}
			}
			// A later boot: the copy stays cloud-init's.
			if _, err := Apply(context.Background(), env, res); err != nil {
				t.Fatal(err)
			}
			for _, p := range tc.backedUp {
				if readRoot(t, root, BackupDir+p) != before[p] {
					t.Errorf("the second boot overwrote the copy of %s", p)
				}
			}
		})
	}
}
