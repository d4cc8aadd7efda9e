package cache

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

func testData() *instance.Data {
	idx := 0
	return &instance.Data{
		Datasource: "configdrive", DatasourceClass: "ConfigDrive",
		CloudName:        "openstack",
		Platform:         "openstack",
		Subplatform:      "config-disk (/dev/sr0)",
		InstanceID:       "83679162-1378-4288-a2d4-70e13ec132aa",
		LocalHostname:    "web-1.example.com",
		AvailabilityZone: "nova",
		PublicKeys:       []string{"ssh-ed25519 AAAA first", "ssh-rsa BBBB second"},
		LaunchIndex:      &idx,
		UserData:         []byte("#cloud-config\r\nruncmd: [\"\\x00\"]\x00\xff"),
		VendorData:       []byte("#cloud-config\nvendor: 1\n"),
		VendorData2:      []byte("#cloud-config\nvendor: 2\n"),
		AdminPass:        "hunter2-admin",
		RandomSeed:       []byte("\x00\x01seed-bytes\xff"),
		Meta: map[string]any{
			"uuid":           "83679162-1378-4288-a2d4-70e13ec132aa",
			"local-hostname": "web-1.example.com",
			"meta":           map[string]any{"role": "web"},
		},
	}
}

func openRoot(t *testing.T, dir string) *rootfs.Root {
	t.Helper()
	r, err := rootfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// storeBoot is one boot: a fresh Cache over the root, IsNew, then Store.
func storeBoot(t *testing.T, dir string, d *instance.Data) bool {
	t.Helper()
	c := New(openRoot(t, dir))
	isNew, err := c.IsNew(d)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Store(d, StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	// Still the previous boot's view after Store.
	if again, err := c.IsNew(d); err != nil || again != isNew {
		t.Errorf("IsNew after Store = %v, %v; want %v", again, err, isNew)
	}
	return isNew
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func checkFile(t *testing.T, p string, mode fs.FileMode, content []byte) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Error(err)
		return
	}
	if fi.Mode() != mode {
		t.Errorf("%s: mode %v, want %v", p, fi.Mode(), mode)
	}
	if st := fi.Sys().(*syscall.Stat_t); st.Uid != 0 || st.Gid != 0 {
		t.Errorf("%s: owner %d:%d, want root", p, st.Uid, st.Gid)
	}
	if content != nil {
		if b, _ := os.ReadFile(p); !bytes.Equal(b, content) {
			t.Errorf("%s = %q, want %q", p, b, content)
		}
	}
}

func TestStoreFirstBoot(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	root := t.TempDir()
	d := testData()
	if !storeBoot(t, root, d) {
		t.Errorf("first boot is not new")
	}
	c := New(openRoot(t, root))
	if id, err := c.CachedID(); err != nil || id != d.InstanceID {
		t.Errorf("CachedID after first boot = %q, %v", id, err)
	}
	redacted, sensitive, err := instance.InstanceData(d, instance.SysInfo{})
	if err != nil {
		t.Fatal(err)
	}
	p := func(s string) string { return filepath.Join(root, s) }
	idir := p("var/lib/earlyinit/instances/" + d.InstanceID)
	for _, f := range []struct {
		path    string
		mode    fs.FileMode
		content []byte
	}{
		{p("var/lib/earlyinit"), fs.ModeDir | 0o755, nil},
		{p("var/lib/earlyinit/instances"), fs.ModeDir | 0o755, nil},
		{idir, fs.ModeDir | 0o755, nil},
		{idir + "/sem", fs.ModeDir | 0o755, nil},
		{idir + "/scripts", fs.ModeDir | 0o755, nil},
		{idir + "/handlers", fs.ModeDir | 0o755, nil},
		{idir + "/user-data.txt", 0o600, d.UserData},
		{idir + "/vendor-data.txt", 0o600, d.VendorData},
		{idir + "/vendor-data2.txt", 0o600, d.VendorData2},
		{idir + "/datasource", 0o644, []byte("DataSourceConfigDrive: config-disk (/dev/sr0)\n")},
		{p("var/lib/earlyinit/data"), fs.ModeDir | 0o755, nil},
		{p("var/lib/earlyinit/data/instance-id"), 0o644, []byte(d.InstanceID + "\n")},
		{p("var/lib/earlyinit/data/previous-instance-id"), 0o644, []byte("NO_PREVIOUS_INSTANCE_ID\n")},
		{p("var/lib/earlyinit/data/previous-datasource"), 0o644, []byte("DataSourceConfigDrive: config-disk (/dev/sr0)\n")},
		{p("var/lib/earlyinit/data/datasource"), 0o644, []byte("DataSourceConfigDrive: config-disk (/dev/sr0)\n")},
		{p("run/earlyinit/instance-data.json"), 0o644, redacted},
		{p("run/earlyinit/instance-data-sensitive.json"), 0o600, sensitive},
		{p("run/earlyinit/.instance-id"), 0o644, []byte(d.InstanceID + "\n")},
	} {
		checkFile(t, f.path, f.mode, f.content)
	}
	if target, err := os.Readlink(p("var/lib/earlyinit/instance")); err != nil || target != "instances/"+d.InstanceID {
		t.Errorf("instance link -> %q, %v", target, err)
	}
	// Through the link, as the late stage reads it.
	if got := readFile(t, p("var/lib/earlyinit/instance/user-data.txt")); got != string(d.UserData) {
		t.Errorf("user-data through the link = %q", got)
	}
	// Nothing else: no temp files, no stray entries.
	var all []string
	filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if strings.Contains(filepath.Base(path), ".earlyinit-") {
			all = append(all, path)
		}
		return nil
	})
	if len(all) > 0 {
		t.Errorf("temporary files left: %v", all)
	}
}

func TestBootSequence(t *testing.T) {
	root := t.TempDir()
	p := func(s string) string { return filepath.Join(root, "var/lib/earlyinit", s) }
	a := testData()
	b := testData()
	b.InstanceID = "i-0b"
	b.Datasource, b.DatasourceClass, b.Subplatform = "nocloud", "NoCloud", "seed-dir (/var/lib/cloud/seed/nocloud)"
	b.UserData = []byte("#cloud-config\n{}\n")

	for i, boot := range []struct {
		d        *instance.Data
		isNew    bool
		previous string
		prevDS   string
	}{
		{a, true, noPreviousInstanceID, "DataSourceConfigDrive: config-disk (/dev/sr0)"},
		{a, false, a.InstanceID, "DataSourceConfigDrive: config-disk (/dev/sr0)"},
		{b, true, a.InstanceID, "DataSourceNoCloud: seed-dir (/var/lib/cloud/seed/nocloud)"},
		{b, false, b.InstanceID, "DataSourceNoCloud: seed-dir (/var/lib/cloud/seed/nocloud)"},
		// Back to the first instance: its directory was kept, and
		// previous-datasource is what that instance had.
		{a, true, b.InstanceID, "DataSourceConfigDrive: config-disk (/dev/sr0)"},
	} {
		if got := storeBoot(t, root, boot.d); got != boot.isNew {
			t.Errorf("boot %d: IsNew = %v, want %v", i+1, got, boot.isNew)
		}
		if got := readFile(t, p("data/previous-instance-id")); got != boot.previous+"\n" {
			t.Errorf("boot %d: previous-instance-id = %q, want %q", i+1, got, boot.previous)
		}
		if got := readFile(t, p("data/instance-id")); got != boot.d.InstanceID+"\n" {
			t.Errorf("boot %d: instance-id = %q", i+1, got)
		}
		if got := readFile(t, p("data/datasource")); got != instance.DatasourceString(boot.d)+"\n" {
			t.Errorf("boot %d: datasource = %q", i+1, got)
		}
		if got := readFile(t, p("data/previous-datasource")); got != boot.prevDS+"\n" {
			t.Errorf("boot %d: previous-datasource = %q, want %q", i+1, got, boot.prevDS)
		}
		if target, _ := os.Readlink(p("instance")); target != "instances/"+boot.d.InstanceID {
			t.Errorf("boot %d: instance -> %q", i+1, target)
		}
		if i >= 2 {
			// Both instance directories kept, each with its own payload.
			if got := readFile(t, p("instances/"+a.InstanceID+"/user-data.txt")); got != string(a.UserData) {
				t.Errorf("boot %d: old instance's user-data = %q", i+1, got)
			}
			if got := readFile(t, p("instances/"+b.InstanceID+"/user-data.txt")); got != string(b.UserData) {
				t.Errorf("boot %d: new instance's user-data = %q", i+1, got)
			}
		}
	}
}

func TestStoreIDs(t *testing.T) {
	for _, tt := range []struct {
		id, dir, err string
	}{
		{id: "i-0123", dir: "i-0123"},
		{id: "a/b/c", dir: "a_b_c"},
		{id: "/", dir: "_"},
		{id: "../../etc", dir: ".._.._etc"},
		{id: "", err: "empty"},
		{id: "..", err: "cannot name a directory"},
		{id: "a\nb", err: "control character"},
		{id: strings.Repeat("x", 256), err: "longer than 255"},
	} {
		root := t.TempDir()
		d := testData()
		d.InstanceID = tt.id
		err := New(openRoot(t, root)).Store(d, StoreOptions{})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "instance-id") {
				t.Errorf("Store(%q) = %v, want an instance-id error with %q", tt.id, err, tt.err)
			}
			if entries, _ := os.ReadDir(root); len(entries) != 0 {
				t.Errorf("Store(%q) failed but wrote %v", tt.id, entries)
			}
			continue
		}
		if err != nil {
			t.Errorf("Store(%q): %v", tt.id, err)
			continue
		}
		base := filepath.Join(root, "var/lib/earlyinit")
		if _, err := os.Stat(filepath.Join(base, "instances", tt.dir, "user-data.txt")); err != nil {
			t.Errorf("Store(%q): %v", tt.id, err)
		}
		if target, _ := os.Readlink(filepath.Join(base, "instance")); target != "instances/"+tt.dir {
			t.Errorf("Store(%q): link -> %q", tt.id, target)
		}
		if got := readFile(t, filepath.Join(base, "data/instance-id")); got != tt.id+"\n" {
			t.Errorf("Store(%q): instance-id = %q", tt.id, got)
		}
		if id, _ := New(openRoot(t, root)).CachedID(); id != tt.id {
			t.Errorf("CachedID = %q, want %q", id, tt.id)
		}
	}
}

func TestStoreSeparateRun(t *testing.T) {
	realRoot, initramfs := t.TempDir(), t.TempDir()
	d := testData()
	err := New(openRoot(t, realRoot)).Store(d, StoreOptions{Run: openRoot(t, initramfs), RunDir: "/run/x"})
	if err != nil {
		t.Fatal(err)
	}
	checkFile(t, filepath.Join(initramfs, "run/x/instance-data-sensitive.json"), 0o600, nil)
	checkFile(t, filepath.Join(initramfs, "run/x/instance-data.json"), 0o644, nil)
	if _, err := os.Stat(filepath.Join(realRoot, "run")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("run files written into the real root: %v", err)
	}
}

func TestStoreConfined(t *testing.T) {
	// A hostile root image pointing the cache outside: writes stay in.
	root, outside := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "var/lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "var/lib/earlyinit")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../../../../../..", filepath.Join(root, "run")); err != nil {
		t.Fatal(err)
	}
	if !storeBoot(t, root, testData()) {
		t.Errorf("not new")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("cache written outside the root: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(root, outside, "data/instance-id")); err != nil {
		t.Errorf("cache not where the symlink points inside the root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "earlyinit/instance-data.json")); err != nil {
		t.Errorf("run dir not where the symlink points inside the root: %v", err)
	}
}

func TestApplyNewInstance(t *testing.T) {
	for _, tt := range []struct {
		name     string
		hosts    *string // nil: no /etc/hosts
		hostname string
		want     string
	}{
		{
			name:     "no hosts file",
			hostname: "web-1.example.com",
			want:     "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.1.1\tweb-1.example.com web-1\n",
		},
		{
			name:     "hosts without 127.0.1.1",
			hosts:    ptr("127.0.0.1 localhost\n# comment\n10.0.0.5 db\n"),
			hostname: "web-1.example.com",
			want:     "127.0.0.1 localhost\n# comment\n10.0.0.5 db\n127.0.1.1\tweb-1.example.com web-1\n",
		},
		{
			name:     "hosts with 127.0.1.1",
			hosts:    ptr("127.0.0.1 localhost\n127.0.1.1  debian.localdomain debian # old\n::1 ip6-localhost\n"),
			hostname: "web-1",
			want:     "127.0.0.1 localhost\n127.0.1.1\tweb-1\n::1 ip6-localhost\n",
		},
		{
			name:     "two 127.0.1.1 lines, no final newline",
			hosts:    ptr("\t127.0.1.1 a\n#127.0.1.1 commented\n127.0.1.1 b\n10.1.1.1 x"),
			hostname: "n.d.example.",
			want:     "127.0.1.1\tn.d.example n\n#127.0.1.1 commented\n10.1.1.1 x",
		},
		{
			name:     "ipv4 local-hostname",
			hosts:    ptr("127.0.0.1 localhost\n"),
			hostname: "10.0.0.7",
			want:     "127.0.0.1 localhost\n127.0.1.1\tip-10-0-0-7\n",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.hosts != nil {
				if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(root, "etc/hosts"), []byte(*tt.hosts), 0o664); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(filepath.Join(root, "etc/hosts"), 0o664); err != nil {
					t.Fatal(err)
				}
				if err := os.Chown(filepath.Join(root, "etc/hosts"), 0, 1000); err != nil {
					t.Fatal(err)
				}
			}
			d := testData()
			d.LocalHostname = tt.hostname
			if err := applyNewInstance(openRoot(t, root), d); err != nil {
				t.Fatal(err)
			}
			if got := readFile(t, filepath.Join(root, "etc/hosts")); got != tt.want {
				t.Errorf("/etc/hosts =\n%s\nwant\n%s", got, tt.want)
			}
			_, short, _ := strings.Cut(tt.want, "127.0.1.1\t")
			short, _, _ = strings.Cut(short, "\n")
			f := strings.Fields(short)
			checkHostname := f[len(f)-1] + "\n"
			if got := readFile(t, filepath.Join(root, "etc/hostname")); got != checkHostname {
				t.Errorf("/etc/hostname = %q, want %q", got, checkHostname)
			}
			fi, _ := os.Stat(filepath.Join(root, "etc/hosts"))
			wantMode, wantGid := fs.FileMode(0o644), uint32(0)
			if tt.hosts != nil {
				wantMode, wantGid = 0o664, 1000
			}
			if fi.Mode() != wantMode || fi.Sys().(*syscall.Stat_t).Gid != wantGid {
				t.Errorf("/etc/hosts mode %v gid %d, want %v %d", fi.Mode(), fi.Sys().(*syscall.Stat_t).Gid, wantMode, wantGid)
			}
		})
	}
}

func ptr(s string) *string { return &s }

// TestApplyNewInstancePreserveHostname: preserve_hostname leaves
// /etc/hostname and /etc/hosts alone (and absent when they were); the
// injected files are still written.
func TestApplyNewInstancePreserveHostname(t *testing.T) {
	for _, existing := range []bool{true, false} {
		root := t.TempDir()
		if existing {
			if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
				t.Fatal(err)
			}
			for name, data := range map[string]string{"etc/hostname": "image\n", "etc/hosts": "127.0.1.1 image\n"} {
				if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		d := testData()
		d.LocalHostname = "web-1.example.com"
		d.Files = []instance.File{{Path: "/etc/motd", Content: []byte("hi\n")}}
		if err := applyNewInstanceWith(openRoot(t, root), d, NewInstanceOptions{PreserveHostname: true}); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{"etc/hostname": "image\n", "etc/hosts": "127.0.1.1 image\n"} {
			b, err := os.ReadFile(filepath.Join(root, name))
			if existing && string(b) != want {
				t.Errorf("%s = %q, %v; want it left as %q", name, b, err, want)
			}
			if !existing && !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s written: %q, %v", name, b, err)
			}
		}
		checkFile(t, filepath.Join(root, "etc/motd"), 0o644, []byte("hi\n"))
	}
}

func TestApplyNewInstanceFiles(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "opt")); err != nil {
		t.Fatal(err)
	}
	d := testData()
	d.LocalHostname = "bad host\nname"
	d.Files = []instance.File{
		{Path: "/etc/motd", Content: []byte("hello\n")},
		{Path: "/../../../etc/escape", Content: []byte("x")},
		{Path: "/opt/app/conf", Content: []byte("conf")},
		{Path: "relative/file", Content: []byte("rel")},
	}
	err := applyNewInstance(openRoot(t, root), d)
	if err == nil || !strings.Contains(err.Error(), "local-hostname") {
		t.Errorf("bad hostname: err = %v", err)
	}
	for p, want := range map[string]string{
		"etc/motd":                             "hello\n",
		"etc/escape":                           "x",
		filepath.Join(outside, "app/conf")[1:]: "conf",
		"relative/file":                        "rel",
	} {
		checkFile(t, filepath.Join(root, p), 0o644, []byte(want))
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("injected file written outside the root: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/hostname")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("/etc/hostname written for a bad name: %v", err)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n++
	return 0, errors.New("no entropy for you")
}

func TestSeedRandom(t *testing.T) {
	var b bytes.Buffer
	seed := []byte("\x00seed\xff")
	if err := SeedRandom(&b, seed); err != nil || !bytes.Equal(b.Bytes(), seed) {
		t.Errorf("SeedRandom wrote %q, %v", b.Bytes(), err)
	}
	w := &failWriter{}
	if err := SeedRandom(w, nil); err != nil || w.n != 0 {
		t.Errorf("empty seed: %v, %d writes", err, w.n)
	}
	if err := SeedRandom(w, seed); err == nil || !strings.Contains(err.Error(), "6 bytes") {
		t.Errorf("failing writer: %v", err)
	}
}

// TestStoreQuery: what Store writes is what query finds. Root reads the
// sensitive instance data and the raw user-data through the instance link;
// anyone else the redacted file and a file reference.
func TestStoreQuery(t *testing.T) {
	root := t.TempDir()
	d := testData()
	d.UserData = []byte("#cloud-config\nruncmd: [x]\n")
	storeBoot(t, root, d)
	for _, tt := range []struct {
		uid            int
		file           string
		userdata, pass string
	}{
		{0, instance.InstanceDataSensitiveFile, string(d.UserData), d.AdminPass},
		{1000, instance.InstanceDataFile,
			"<redacted for non-root user> file:" + filepath.Join(root, "/var/lib/earlyinit/instance/user-data.txt"),
			instance.Redacted},
	} {
		p := instance.DefaultQueryPaths(root, tt.uid)
		if filepath.Base(p.InstanceData) != tt.file {
			t.Errorf("uid %d reads %s, want %s", tt.uid, p.InstanceData, tt.file)
		}
		b, err := instance.ReadQueryData(p, tt.uid == 0)
		if err != nil {
			t.Fatal(err)
		}
		for key, want := range map[string]string{
			"userdata":                tt.userdata,
			"ds.meta_data.admin_pass": tt.pass,
			"v1.instance_id":          d.InstanceID,
		} {
			if got, err := instance.Query(b, key); err != nil || got != want {
				t.Errorf("uid %d: %s = %q, %v; want %q", tt.uid, key, got, err, want)
			}
		}
	}
}
