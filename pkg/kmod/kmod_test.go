package kmod

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
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
	return NewIndex(a, s)
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

// fakeProber records loads and, like a real bus driver, makes new devices
// appear in the fake sysfs when some modules load.
type fakeProber struct {
	t       *testing.T
	sysfs   string
	loaded  []string
	fail    map[string]bool
	appears map[string][2]string // module -> (device dir, modalias) it exposes
}

func (p *fakeProber) Probe(name, _ string) error {
	if p.fail[name] {
		return errors.New("no such device")
	}
	p.loaded = append(p.loaded, name)
	if dev, ok := p.appears[name]; ok {
		writeAlias(p.t, p.sysfs, dev[0], dev[1])
	}
	return nil
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
	writeAlias(t, sysfs, "pci0000:00/0000:00:01.0", "pci:v00008086d00007000sv*") // nothing matches
	p := &fakeProber{t: t, sysfs: sysfs, fail: map[string]bool{"crc32c_intel": true}, appears: map[string][2]string{
		// virtio_pci finds a virtio block device behind the PCI function.
		"virtio_pci": {"pci0000:00/0000:00:04.0/virtio0", "virtio:d00000002v00001AF4"},
	}}
	c := NewColdplug(index(t), p, sysfs, t.Logf)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Settle(ctx, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if want := []string{"virtio_pci", "virtio_blk"}; !reflect.DeepEqual(p.loaded, want) {
		t.Fatalf("loaded %v, want %v", p.loaded, want)
	}
	// Filesystem modules load on demand, softdeps first; one of the two
	// crc32c providers failing is fine.
	if err := c.Load("fs-ext4"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"virtio_pci", "virtio_blk", "crc32c_generic", "ext4"}; !reflect.DeepEqual(p.loaded, want) {
		t.Fatalf("loaded %v, want %v", p.loaded, want)
	}
	// A module is attempted once per boot.
	if err := c.Load("ext4"); err != nil {
		t.Fatal(err)
	}
	if len(p.loaded) != 4 {
		t.Fatalf("ext4 loaded twice: %v", p.loaded)
	}
	if c.Failed["crc32c_intel"] == nil {
		t.Errorf("failure of crc32c_intel not recorded")
	}
}

func TestLoadFailsWhenNoProviderLoads(t *testing.T) {
	p := &fakeProber{t: t, fail: map[string]bool{"crc32c_intel": true, "crc32c_generic": true}}
	c := NewColdplug(index(t), p, t.TempDir(), nil)
	if err := c.Load("crypto-crc32c"); err == nil {
		t.Fatal("Load succeeded with every provider failing")
	}
}

func TestSettleBounded(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c := NewColdplug(index(t), &fakeProber{t: t}, t.TempDir(), nil)
	os.MkdirAll(filepath.Join(c.sysfs, "devices"), 0o755)
	if err := c.Settle(ctx, time.Hour); err == nil {
		t.Fatal("Settle ignored a cancelled context")
	}
}

func TestReadIndexFileNames(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "modules.alias"), []byte("alias fs-vfat vfat\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "modules.dep"), []byte("kernel/fs/nls/nls_iso8859-1.ko:\nkernel/fs/fat/vfat.ko: kernel/fs/fat/fat.ko\n"), 0o644)
	ix, err := ReadIndex(os.DirFS(dir), ".")
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{"nls_iso8859_1": "nls_iso8859-1", "nls-iso8859-1": "nls_iso8859-1", "vfat": "vfat", "unknown-mod": "unknown_mod"} {
		if got := ix.FileName(in); got != want {
			t.Errorf("FileName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestColdplugLoadsByFileName(t *testing.T) {
	ix := NewIndex(nil, nil)
	ix.files["nls_iso8859_1"] = "nls_iso8859-1"
	p := &fakeProber{t: t}
	c := NewColdplug(ix, p, t.TempDir(), nil)
	if err := c.Load("nls_iso8859_1"); err != nil {
		t.Fatal(err)
	}
	if len(p.loaded) != 1 || p.loaded[0] != "nls_iso8859-1" {
		t.Errorf("probed %v, want the file's own name", p.loaded)
	}
}
