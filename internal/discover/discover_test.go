package discover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/earlyinit/earlyinit/internal/oracle"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/settings"
)

// testLog records what discovery logs, a line each, "E " before errors.
type testLog struct{ bytes.Buffer }

func (l *testLog) Printf(f string, a ...any) { fmt.Fprintf(&l.Buffer, f+"\n", a...) }
func (l *testLog) Errorf(f string, a ...any) { fmt.Fprintf(&l.Buffer, "E "+f+"\n", a...) }
func (l *testLog) Debugf(f string, a ...any) {}

// fakeSys is a machine with DMI strings, seed directories, drives (their
// files by device path) and a metadata network that works or not. Its zero
// DMI is none at all: the platform is unknown and every source is tried.
type fakeSys struct {
	dmi      dmi.Info
	dmiErr   error
	seeds    map[string]fs.FS
	devs     []blockdev.Device
	files    map[string]fs.FS
	netErr   error
	calls    []string
	driveFor time.Duration
	http     httpget.Fetcher
}

func (s *fakeSys) DMI() (dmi.Info, error) { return s.dmi, s.dmiErr }

func (s *fakeSys) SeedDir(dir string) (fs.FS, bool) {
	s.calls = append(s.calls, "seed "+dir)
	f, ok := s.seeds[dir]
	if !ok {
		return fstest.MapFS{}, false
	}
	return f, true
}

func (s *fakeSys) Drives(wait time.Duration, match func(blockdev.Device) bool) []blockdev.Device {
	s.calls = append(s.calls, "drives")
	s.driveFor = wait
	return s.devs
}

func (s *fakeSys) ReadDrive(dev blockdev.Device, read func(fs.FS) (*instance.Data, error)) (*instance.Data, error) {
	s.calls = append(s.calls, "read "+dev.Path)
	return read(s.files[dev.Path])
}

func (s *fakeSys) RootDir() string { return "/fake-root" }

func (s *fakeSys) RaiseLinks() func() {
	s.calls = append(s.calls, "raise")
	return func() { s.calls = append(s.calls, "lower") }
}

func (s *fakeSys) Network(ctx context.Context) (datasource.Service, func(), error) {
	s.calls = append(s.calls, "network")
	if s.netErr != nil {
		return datasource.Service{}, nil, s.netErr
	}
	return datasource.Service{Base: "http://meta", HTTP: s.http}, func() { s.calls = append(s.calls, "network down") }, nil
}

func configDrive(uuid string) fs.FS {
	return fstest.MapFS{"openstack/latest/meta_data.json": {Data: []byte(`{"uuid": "` + uuid + `", "hostname": "cd-host"}`)}}
}

func noCloudSeed(iid string) fs.FS {
	return fstest.MapFS{"meta-data": {Data: []byte("instance-id: " + iid + "\nlocal-hostname: nc-host\n")}}
}

// bothDrives is a machine with a config drive and a NoCloud drive.
func bothDrives() *fakeSys {
	return &fakeSys{devs: []blockdev.Device{drive("/dev/sr0", "iso9660", "config-2"), drive("/dev/vdb", "vfat", "cidata")},
		files: map[string]fs.FS{"/dev/sr0": configDrive("cd-b"), "/dev/vdb": noCloudSeed("nc-b")}}
}

func drive(path, fstype, label string) blockdev.Device {
	return blockdev.Device{Path: path, Name: strings.TrimPrefix(path, "/dev/"), FS: blockdev.FS{Type: fstype, Label: label}}
}

func cmdline(t *testing.T, s string) settings.Settings {
	t.Helper()
	c, errs := settings.ParseCmdline(s)
	if len(errs) > 0 {
		t.Fatalf("ParseCmdline(%q): %v", s, errs)
	}
	return c
}

func TestFind(t *testing.T) {
	pinSources(t)
	for _, tt := range []struct {
		name    string
		cmdline string
		img     Image
		sys     *fakeSys
		wantID  string // "" for no instance
		wantSub string
		wantErr string
		calls   []string // the system calls made, in order (nil: not checked)
		logged  []string
	}{{
		name: "config drive",
		sys: &fakeSys{devs: []blockdev.Device{drive("/dev/vda1", "ext4", "root"), drive("/dev/sr0", "iso9660", "config-2")},
			files: map[string]fs.FS{"/dev/sr0": configDrive("u-1")}},
		wantID: "u-1", wantSub: "config-disk (/dev/sr0)",
		calls:  []string{"raise", "seed /var/lib/cloud/seed/config_drive", "drives", "read /dev/sr0", "lower"},
		logged: []string{`datasource configdrive: instance "u-1", hostname "cd-host" (config-disk (/dev/sr0))`},
	}, {
		// Sources go in order, each with its seeds before its drives: a
		// config drive comes before a NoCloud seed directory.
		name: "order before seed dirs",
		sys: &fakeSys{seeds: map[string]fs.FS{"/var/lib/cloud/seed/nocloud": noCloudSeed("nc-1")},
			devs: []blockdev.Device{drive("/dev/sr0", "iso9660", "CONFIG-2")}, files: map[string]fs.FS{"/dev/sr0": configDrive("u-2")}},
		wantID: "u-2", wantSub: "config-disk (/dev/sr0)",
	}, {
		name:   "nocloud seed dir",
		sys:    &fakeSys{seeds: map[string]fs.FS{"/var/lib/cloud/seed/nocloud-net": noCloudSeed("nc-2")}},
		wantID: "nc-2", wantSub: "seed-dir (/var/lib/cloud/seed/nocloud-net)",
	}, {
		// A rejected drive is logged and the next one read.
		name: "rejected then good",
		sys: &fakeSys{devs: []blockdev.Device{drive("/dev/sr0", "iso9660", "config-2"), drive("/dev/vdb", "vfat", "cidata")},
			files: map[string]fs.FS{"/dev/sr0": fstest.MapFS{"openstack/latest/meta_data.json": {Data: []byte("{")}}, "/dev/vdb": noCloudSeed("nc-3")}},
		wantID: "nc-3", wantSub: "config-disk (/dev/vdb)",
		logged: []string{"E datasource configdrive: drive sr0 ", "rejected: parse openstack/latest/meta_data.json"},
	}, {
		name: "only rejected",
		sys: &fakeSys{devs: []blockdev.Device{drive("/dev/vdb", "vfat", "CIDATA")}, netErr: errors.New("no link"),
			files: map[string]fs.FS{"/dev/vdb": fstest.MapFS{"meta-data": {Data: []byte("local-hostname: x\n")}}}},
		wantErr: "no datasource found (tried configdrive, nocloud, openstack, ec2; block devices: vdb no medium); 1 rejected",
		logged:  []string{`E datasource nocloud: drive vdb no medium rejected: meta-data: "instance-id": missing or empty`, "metadata service: no link"},
	}, {
		// Nothing at all is no error: a normal state, and the instance
		// is None, so the image's configuration applies.
		name:    "nothing",
		sys:     &fakeSys{netErr: errors.New("no link")},
		wantID:  "iid-datasource-none",
		wantSub: "config",
		logged: []string{
			"datasource: platform unknown (no DMI strings): trying configdrive, nocloud, openstack, ec2",
			"no datasource found (tried configdrive, nocloud, openstack, ec2; block devices: ): falling back to None, the last resort",
			`datasource none: instance "iid-datasource-none", hostname "" (config)`,
		},
	}, {
		// earlyinit.ds= picks and orders; the drive wait is the timeout.
		name:    "explicit metadata",
		cmdline: "earlyinit.ds=ec2 earlyinit.timeout=3",
		sys:     &fakeSys{devs: []blockdev.Device{drive("/dev/sr0", "iso9660", "config-2")}},
		wantErr: "no datasource found (tried ec2; block devices: ); 1 rejected",
		calls:   []string{"raise", "network", "network down", "lower"},
	}, {
		// ds=nocloud;s=: its seed first, its i= and h= over what is read,
		// and nocloud is tried though earlyinit.ds= leaves it out.
		name:    "cmdline seed",
		cmdline: "earlyinit.ds=configdrive ds=nocloud;s=file:///srv/seed/;i=iid-cmd;h=cmdhost",
		sys:     &fakeSys{seeds: map[string]fs.FS{"/srv/seed": noCloudSeed("nc-4")}},
		wantID:  "iid-cmd", wantSub: "seed-dir (/srv/seed)",
		calls:  []string{"seed /srv/seed"},
		logged: []string{`datasource nocloud: instance "iid-cmd", hostname "cmdhost"`},
	}, {
		name:    "cmdline overrides a drive",
		cmdline: "ds=nocloud;h=cmdhost",
		sys:     &fakeSys{devs: []blockdev.Device{drive("/dev/vdb", "vfat", "cidata")}, files: map[string]fs.FS{"/dev/vdb": noCloudSeed("nc-5")}},
		wantID:  "nc-5", wantSub: "config-disk (/dev/vdb)",
		logged: []string{`hostname "cmdhost"`},
	}, {
		// ds=nocloud with no seed, no drive and no seed directory is an
		// instance by itself, as cloud-init's NoCloud finds it by
		// "cmdline": i= and h=, or the instance-id "nocloud".
		name:    "cmdline alone",
		cmdline: "ds=nocloud;i=iid-alone;h=alonehost",
		sys:     &fakeSys{netErr: errors.New("no link")},
		wantID:  "iid-alone", wantSub: "seed-dir (cmdline)",
		logged: []string{`datasource nocloud: instance "iid-alone", hostname "alonehost" (seed-dir (cmdline))`},
	}, {
		name:    "cmdline alone, no i=",
		cmdline: "ds=nocloud-net",
		sys:     &fakeSys{netErr: errors.New("no link")},
		wantID:  "nocloud", wantSub: "seed-dir (cmdline)",
	}, {
		// Its drive still comes first, and then its i= and h= win.
		name:    "cmdline alone, a drive there",
		cmdline: "ds=nocloud;i=iid-cmd",
		sys:     &fakeSys{devs: []blockdev.Device{drive("/dev/vdb", "vfat", "cidata")}, files: map[string]fs.FS{"/dev/vdb": noCloudSeed("nc-6")}},
		wantID:  "iid-cmd", wantSub: "config-disk (/dev/vdb)",
	}, {
		name:    "cmdline seed rejected",
		cmdline: "ds=nocloud;s=/srv/none earlyinit.ds=nocloud",
		sys:     &fakeSys{},
		wantErr: "; 1 rejected",
		logged:  []string{"E datasource nocloud (ds=nocloud;s=/srv/none) rejected:"},
	}, {
		// A seed over HTTP is read over the temporary network; one that
		// is not there is rejected.
		name:    "cmdline seed over http",
		cmdline: "ds=nocloud;s=http://10.0.0.1/ earlyinit.ds=nocloud",
		sys:     &fakeSys{http: &fakeHTTP{}},
		wantErr: "; 1 rejected",
		logged:  []string{"E datasource nocloud (ds=nocloud;s=http://10.0.0.1/) rejected: seed http://10.0.0.1/: meta-data:"},
	}, {
		name:    "cmdline seed over http read",
		cmdline: "ds=nocloud;s=http://10.0.0.1/seed/;h=cmdhost",
		sys:     &fakeSys{http: &fakeHTTP{docs: map[string]string{"http://10.0.0.1/seed/meta-data": "instance-id: nc-url\nlocal-hostname: urlhost\n"}}},
		wantID:  "nc-url", wantSub: "seed-dir (http://10.0.0.1/seed/)",
		calls:  []string{"raise", "network", "network down", "lower"},
		logged: []string{`datasource nocloud: instance "nc-url", hostname "cmdhost"`},
	}, {
		// The image's datasource_list orders the sources: NoCloud's drive
		// before ConfigDrive's, both attached.
		name:   "image list nocloud first",
		img:    Image{List: []string{"NoCloud", "ConfigDrive"}},
		sys:    bothDrives(),
		wantID: "nc-b", wantSub: "config-disk (/dev/vdb)",
		calls:  []string{"seed /var/lib/cloud/seed/nocloud", "seed /var/lib/cloud/seed/nocloud-net", "drives", "read /dev/vdb"},
		logged: []string{"datasource_list of the image: nocloud, configdrive"},
	}, {
		name:   "image list configdrive first",
		img:    Image{List: []string{"ConfigDrive", "NoCloud", "None"}},
		sys:    bothDrives(),
		wantID: "cd-b", wantSub: "config-disk (/dev/sr0)",
		calls: []string{"seed /var/lib/cloud/seed/config_drive", "drives", "read /dev/sr0"},
	}, {
		// earlyinit.ds= on the kernel command line wins over the image.
		name:    "cmdline wins over image list",
		cmdline: "earlyinit.ds=configdrive",
		img:     Image{List: []string{"NoCloud"}},
		sys:     bothDrives(),
		wantID:  "cd-b", wantSub: "config-disk (/dev/sr0)",
		logged: []string{"datasource_list of the image ignored: earlyinit.ds=configdrive on the kernel command line wins"},
	}, {
		// Names earlyinit lacks are a warning each; the rest are tried.
		name:   "image list unknown names",
		img:    Image{List: []string{"Azure", "NoCloud", "GCE"}},
		sys:    bothDrives(),
		wantID: "nc-b", wantSub: "config-disk (/dev/vdb)",
		logged: []string{`E datasource_list: "Azure": earlyinit has no such datasource`, `E datasource_list: "GCE": earlyinit has no such datasource`},
	}, {
		// [None] alone: None at once, as cloud-init: the drives there
		// are not read, no network is raised.
		name:   "image list None alone",
		img:    Image{List: []string{"None"}},
		sys:    bothDrives(),
		wantID: "iid-datasource-none", wantSub: "config",
		calls:  []string{},
		logged: []string{"datasource_list of the image: None alone: no source is searched", "falling back to None"},
	}, {
		// None: a rejected source and nothing else is no error.
		name: "image list none",
		img:  Image{List: []string{"NoCloud", "None"}},
		sys: &fakeSys{devs: []blockdev.Device{drive("/dev/vdb", "vfat", "cidata")},
			files: map[string]fs.FS{"/dev/vdb": fstest.MapFS{"meta-data": {Data: []byte("local-hostname: x\n")}}}},
		logged: []string{"no datasource found (tried nocloud; block devices: vdb no medium); 1 rejected; datasource_list has None, but a source was there and could not be used: booting without an instance, not as None"},
	}, {
		// The image's seedfrom: a directory in the root, read in
		// NoCloud's place before its seed directories and drives.
		name:   "image seedfrom dir",
		img:    Image{List: []string{"NoCloud"}, Settings: map[string]SourceSettings{"NoCloud": {SeedFrom: "file:///srv/img/"}}},
		sys:    &fakeSys{seeds: map[string]fs.FS{"/srv/img": noCloudSeed("nc-img"), "/var/lib/cloud/seed/nocloud": noCloudSeed("nc-dir")}},
		wantID: "nc-img", wantSub: "seed-dir (/srv/img)",
		calls: []string{"seed /srv/img"},
	}, {
		name:   "image seedfrom url",
		img:    Image{Settings: map[string]SourceSettings{"NoCloud": {SeedFrom: "http://10.0.0.2/s/"}}},
		sys:    &fakeSys{http: &fakeHTTP{docs: map[string]string{"http://10.0.0.2/s/meta-data": "instance-id: nc-imgurl\n"}}},
		wantID: "nc-imgurl", wantSub: "seed-dir (http://10.0.0.2/s/)",
	}, {
		// ds=nocloud;s= on the kernel command line wins over the image.
		name:    "cmdline seed wins over seedfrom",
		cmdline: "ds=nocloud;s=/srv/cmd",
		img:     Image{Settings: map[string]SourceSettings{"NoCloud": {SeedFrom: "/srv/img"}}},
		sys:     &fakeSys{seeds: map[string]fs.FS{"/srv/img": noCloudSeed("nc-img"), "/srv/cmd": noCloudSeed("nc-cmd")}},
		wantID:  "nc-cmd", wantSub: "seed-dir (/srv/cmd)",
		logged: []string{"datasource.NoCloud.seedfrom of the image ignored: ds=nocloud;s=/srv/cmd on the kernel command line wins"},
	}, {
		name:   "image seedfrom bad",
		img:    Image{List: []string{"NoCloud"}, Settings: map[string]SourceSettings{"NoCloud": {SeedFrom: "relative/seed"}}},
		sys:    &fakeSys{seeds: map[string]fs.FS{"/var/lib/cloud/seed/nocloud": noCloudSeed("nc-dir")}},
		wantID: "nc-dir", wantSub: "seed-dir (/var/lib/cloud/seed/nocloud)",
		logged: []string{"E datasource.NoCloud.seedfrom: want a directory (/path or file:///path/) or an http:// URL: ignored"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			var log testLog
			d, err := FindWith(tt.sys, cmdline(t, "root=/dev/vda1 "+tt.cmdline), tt.img, &log)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Errorf("err = %v", err)
			}
			switch {
			case tt.wantID == "" && d != nil:
				t.Errorf("found %q, want nothing", d.InstanceID)
			case tt.wantID != "" && d == nil:
				t.Errorf("found nothing, want %q", tt.wantID)
			case d != nil && (d.InstanceID != tt.wantID || d.Subplatform != tt.wantSub):
				t.Errorf("found %q (%s), want %q (%s)", d.InstanceID, d.Subplatform, tt.wantID, tt.wantSub)
			}
			if tt.calls != nil && (len(tt.calls) != 0 || len(tt.sys.calls) != 0) && !reflect.DeepEqual(tt.sys.calls, tt.calls) {
				t.Errorf("system calls %q, want %q", tt.sys.calls, tt.calls)
			}
			for _, l := range tt.logged {
				if !strings.Contains(log.String(), l) {
					t.Errorf("log has no %q:\n%s", l, log.String())
				}
			}
		})
	}
}

// TestDriveWait: without earlyinit.ds= the drive poll is short; with it,
// the sources were asked for and the poll waits earlyinit.timeout.
func TestDriveWait(t *testing.T) {
	pinSources(t)
	for _, tt := range []struct {
		cmdline string
		want    time.Duration
	}{
		{"", DriveGrace},
		{"earlyinit.timeout=1", time.Second},
		{"earlyinit.ds=nocloud earlyinit.timeout=9", 9 * time.Second},
	} {
		sys := &fakeSys{netErr: errors.New("no link")}
		Find(sys, cmdline(t, tt.cmdline), &testLog{})
		if sys.driveFor != tt.want {
			t.Errorf("%q: drives polled for %s, want %s", tt.cmdline, sys.driveFor, tt.want)
		}
	}
}

// TestMetadataShareOneNetwork: the metadata sources are asked in order over
// one temporary network; a rejected one (even one that panics) is logged
// and the next asked.
func TestMetadataShareOneNetwork(t *testing.T) {
	pinSources(t)
	old := Sources
	defer func() { Sources = old }()
	var asked []string
	reader := func(name string, d *instance.Data, err error) func(context.Context, datasource.Service) (*instance.Data, error) {
		return func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
			asked = append(asked, name+" "+svc.Base)
			if name == "boom" {
				panic("reader bug")
			}
			return d, err
		}
	}
	Sources = append([]datasource.Source(nil), old...)
	Sources = append(Sources,
		datasource.Source{Name: "boom", Metadata: reader("boom", nil, nil)},
		datasource.Source{Name: "bad", Metadata: reader("bad", nil, errors.New("404"))},
		datasource.Source{Name: "good", Metadata: reader("good", &instance.Data{InstanceID: "i-9"}, nil)},
	)
	sys := &fakeSys{}
	var log testLog
	d, err := Find(sys, cmdline(t, "earlyinit.ds=boom,bad,good"), &log)
	if err != nil || d == nil || d.InstanceID != "i-9" {
		t.Fatalf("Find = %v, %v\n%s", d, err, log.String())
	}
	if want := []string{"boom http://meta", "bad http://meta", "good http://meta"}; !reflect.DeepEqual(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
	if want := []string{"raise", "network", "network down", "lower"}; !reflect.DeepEqual(sys.calls, want) {
		t.Errorf("system calls %q, want %q", sys.calls, want)
	}
	for _, l := range []string{"E datasource boom rejected: panic: reader bug", "E datasource bad rejected: 404"} {
		if !strings.Contains(log.String(), l) {
			t.Errorf("log has no %q:\n%s", l, log.String())
		}
	}
}

// TestOrder: earlyinit.ds= names the sources in any case; unknown names
// are one error each and skipped.
func TestOrder(t *testing.T) {
	pinSources(t)
	names := func(l []datasource.Source) []string {
		var n []string
		for _, s := range l {
			n = append(n, s.Name)
		}
		return n
	}
	for _, tt := range []struct {
		in       string
		want     []string
		explicit bool
		nerrs    int
	}{
		{"", []string{"configdrive", "nocloud", "openstack", "ec2"}, false, 0},
		{"NoCloud, ec2", []string{"nocloud", "ec2"}, true, 0},
		{"ec2,azure", []string{"ec2"}, true, 1},
		{"azure", nil, true, 1},
		{",", []string{"configdrive", "nocloud", "openstack", "ec2"}, false, 0},
	} {
		got, explicit, errs := Order(tt.in)
		if !reflect.DeepEqual(names(got), tt.want) || explicit != tt.explicit || len(errs) != tt.nerrs {
			t.Errorf("Order(%q) = %q, %v, %v; want %q, %v, %d errors", tt.in, names(got), explicit, errs, tt.want, tt.explicit, tt.nerrs)
		}
	}
	if _, _, errs := Order("azure"); len(errs) != 1 || !strings.Contains(errs[0].Error(), "(known: configdrive, nocloud, openstack, ec2)") {
		t.Errorf("unknown name: %v", errs)
	}
}

// TestSourcesNamedOnce: every source has a unique lower-case name and a
// way to be read.
func TestSourcesNamedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Sources {
		if s.Name == "" || s.Name != strings.ToLower(s.Name) || seen[s.Name] {
			t.Errorf("source name %q: empty, not lower case or twice", s.Name)
		}
		seen[s.Name] = true
		if (len(s.Labels) > 0 || len(s.SeedDirs) > 0) != (s.ReadFS != nil) {
			t.Errorf("%s: drives or seeds without ReadFS, or the reverse", s.Name)
		}
		if s.ReadFS == nil && s.Metadata == nil {
			t.Errorf("%s: no way to read it", s.Name)
		}
	}
}

func TestNearMissLabels(t *testing.T) {
	pinSources(t)
	var log testLog
	devs := []blockdev.Device{
		drive("/dev/sr0", "iso9660", "Config-2"),
		drive("/dev/sr1", "iso9660", "config-2"),
		drive("/dev/vdb", "vfat", "CIDATA_"),
		drive("/dev/vdc", "vfat", "data"),
		drive("/dev/vda1", "ext4", "CONFIG_2"),
	}
	nearMisses(&log, Sources, devs)
	out := log.String()
	for _, want := range []string{
		`/dev/sr0: label "Config-2" is not "config-2": not read as a configdrive drive`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q:\n%s", want, out)
		}
	}
	for _, quiet := range []string{"/dev/sr1", "/dev/vdc", "/dev/vda1"} {
		if strings.Contains(out, quiet+":") {
			t.Errorf("a line for %s (exact, unrelated or not a drive filesystem):\n%s", quiet, out)
		}
	}
}

// TestBoundedDriveRead: a drive whose device stops answering (a mount or
// read that never returns) is given up on at the bound; a panic in the
// reader is an error; a normal read comes back.
func TestBoundedDriveRead(t *testing.T) {
	var log testLog
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	block := make(chan struct{})
	defer close(block)
	t0 := time.Now()
	_, err := bounded(ctx, &log, "/dev/sr0", func() (*instance.Data, error) { <-block; return nil, nil })
	if !errors.Is(err, errGaveUp) || !strings.Contains(err.Error(), "/dev/sr0") {
		t.Errorf("stalled read: %v", err)
	}
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("gave up after %s, bound 100ms", took)
	}
	_, err = bounded(context.Background(), &log, "/dev/sr1", func() (*instance.Data, error) { panic("reader bug") })
	if err == nil || !strings.Contains(err.Error(), "panic: reader bug") || !strings.Contains(log.String(), "reading /dev/sr1 panicked") {
		t.Errorf("panicking read: %v\n%s", err, log.String())
	}
	d, err := bounded(context.Background(), &log, "/dev/sr2", func() (*instance.Data, error) { return &instance.Data{InstanceID: "i-1"}, nil })
	if err != nil || d.InstanceID != "i-1" {
		t.Errorf("normal read: %v %v", d, err)
	}
}

// fakeHTTP answers GETs from a map of URL to body; anything else is a 404.
type fakeHTTP struct {
	docs map[string]string
	got  []string
}

func (f *fakeHTTP) Get(ctx context.Context, r httpget.Request) ([]byte, error) {
	f.got = append(f.got, r.URL)
	if b, ok := f.docs[r.URL]; ok {
		return []byte(b), nil
	}
	return nil, &httpget.StatusError{Method: "GET", URL: r.URL, Code: 404}
}

// TestMetadataThroughSystemHTTP: a metadata source makes its requests
// through the HTTP client the System gives, at the base URL it gives: the
// real OpenStack reader reads a fake service without a socket.
func TestMetadataThroughSystemHTTP(t *testing.T) {
	h := &fakeHTTP{docs: map[string]string{
		"http://meta/openstack":                         "latest\n",
		"http://meta/openstack/latest/meta_data.json":   `{"uuid": "os-1", "hostname": "from-http"}`,
		"http://meta/openstack/latest/user_data":        "#cloud-config\n",
		"http://meta/openstack/latest/vendor_data.json": "{}",
	}}
	sys := &fakeSys{http: h}
	var log testLog
	d, err := Find(sys, cmdline(t, "earlyinit.ds=openstack"), &log)
	if err != nil || d == nil || d.InstanceID != "os-1" || d.LocalHostname != "from-http" || d.Datasource != "openstack" || d.DatasourceClass != "OpenStack" {
		t.Fatalf("Find = %+v, %v\n%s", d, err, log.String())
	}
	if len(h.got) < 2 || h.got[0] != "http://meta/openstack" {
		t.Errorf("requests %q", h.got)
	}
}

// TestImageOrder: datasource_list's cloud-init names map to earlyinit's
// sources by class; None is no source but makes "nothing found" fine;
// unknown names are a warning each; a list naming none falls back to all.
func TestImageOrder(t *testing.T) {
	pinSources(t)
	all := []string{"configdrive", "nocloud", "openstack", "ec2"}
	for _, tt := range []struct {
		list   []string
		want   []string
		noneOK bool
		nwarns int
	}{
		{[]string{"NoCloud", "ConfigDrive", "OpenStack", "Ec2", "None"}, []string{"nocloud", "configdrive", "openstack", "ec2"}, true, 0},
		{[]string{"ConfigDrive", "NoCloud"}, []string{"configdrive", "nocloud"}, false, 0},
		{[]string{"DataSourceEc2", "openstack", "Ec2"}, []string{"ec2", "openstack"}, false, 0},
		{[]string{"Azure", "OpenStack", "GCE"}, []string{"openstack"}, false, 2},
		{[]string{"None"}, nil, true, 0},          // cloud-init: None, no search
		{[]string{"Azure", "None"}, nil, true, 1}, // the same, and a warning for Azure
		{[]string{"Azure"}, all, false, 2},
		{[]string{}, all, false, 1},
	} {
		got, noneOK, warns := ImageOrder(tt.list)
		if !reflect.DeepEqual(names(got), tt.want) || noneOK != tt.noneOK || len(warns) != tt.nwarns {
			t.Errorf("ImageOrder(%q) = %q, %v, %q; want %q, %v, %d warnings", tt.list, names(got), noneOK, warns, tt.want, tt.noneOK, tt.nwarns)
		}
	}
}

// TestImageMetadataSettings: a metadata source is asked at the image's
// metadata_urls in order, with its per-request timeout, within its
// max_wait or earlyinit.timeout, whichever is smaller; earlyinit.metadata_url
// wins over metadata_urls.
func TestImageMetadataSettings(t *testing.T) {
	old := Sources
	defer func() { Sources = old }()
	type ask struct {
		base    string
		timeout time.Duration
		left    time.Duration // until the context's deadline
	}
	var asked []ask
	Sources = []datasource.Source{{Name: "meta", Class: "Meta", Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		dl, _ := ctx.Deadline()
		asked = append(asked, ask{svc.Base, svc.Timeout, time.Until(dl)})
		if svc.Base != "http://b" {
			return nil, errors.New("no answer")
		}
		return &instance.Data{InstanceID: "i-b"}, nil
	}}}
	img := Image{Settings: map[string]SourceSettings{"Meta": {MetadataURLs: []string{"http://a", "http://b/"}, MaxWait: 5 * time.Second, Timeout: 3 * time.Second}}}
	for _, tt := range []struct {
		cmdline string
		bases   []string
		maxLeft time.Duration
		wantID  string
		logged  string
	}{
		{"earlyinit.timeout=30", []string{"http://a", "http://b"}, 5 * time.Second, "i-b", ""},
		{"earlyinit.timeout=2", []string{"http://a", "http://b"}, 2 * time.Second, "i-b", ""},
		{"earlyinit.metadata_url=http://c", []string{"http://meta"}, 5 * time.Second, "", "datasource.Meta.metadata_urls of the image ignored: earlyinit.metadata_url on the kernel command line wins"},
	} {
		asked = nil
		var log testLog
		d, _ := FindWith(&fakeSys{}, cmdline(t, tt.cmdline), img, &log)
		var bases []string
		for _, a := range asked {
			bases = append(bases, a.base)
			if a.timeout != 3*time.Second || a.left > tt.maxLeft || a.left <= 0 {
				t.Errorf("%s: asked %s with timeout %s and %s left, want 3s and at most %s", tt.cmdline, a.base, a.timeout, a.left, tt.maxLeft)
			}
		}
		if !reflect.DeepEqual(bases, tt.bases) {
			t.Errorf("%s: asked %q, want %q", tt.cmdline, bases, tt.bases)
		}
		if (d == nil) != (tt.wantID == "") || (d != nil && d.InstanceID != tt.wantID) {
			t.Errorf("%s: found %+v, want %q", tt.cmdline, d, tt.wantID)
		}
		if tt.logged != "" && !strings.Contains(log.String(), tt.logged) {
			t.Errorf("%s: log has no %q:\n%s", tt.cmdline, tt.logged, log.String())
		}
	}
}

// TestImageSourceSettings: the image's default user and a source's
// configure_secondary_nics reach the source in its Service.
func TestImageSourceSettings(t *testing.T) {
	old := Sources
	defer func() { Sources = old }()
	var got []datasource.Service
	Sources = []datasource.Source{{Name: "meta", Class: "Meta", Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		got = append(got, svc)
		return &instance.Data{InstanceID: "i-1"}, nil
	}}}
	for _, tt := range []struct {
		img       Image
		user      string
		secondary bool
	}{
		{Image{DefaultUser: "debian", Settings: map[string]SourceSettings{"Meta": {SecondaryNICs: true}}}, "debian", true},
		{Image{Settings: map[string]SourceSettings{"Other": {SecondaryNICs: true}}}, "", false},
	} {
		got = nil
		if d, _ := FindWith(&fakeSys{}, cmdline(t, "earlyinit.ds=meta"), tt.img, &testLog{}); d == nil || len(got) != 1 {
			t.Fatalf("%+v: found %+v after %d asks", tt.img, d, len(got))
		}
		if got[0].DefaultUser != tt.user || got[0].SecondaryNICs != tt.secondary {
			t.Errorf("%+v: Service.DefaultUser %q, SecondaryNICs %v; want %q, %v", tt.img, got[0].DefaultUser, got[0].SecondaryNICs, tt.user, tt.secondary)
		}
	}
}

// TestImageMetadataURLsOpenStack: the real OpenStack reader is asked at
// the image's metadata_urls.
func TestImageMetadataURLsOpenStack(t *testing.T) {
	h := &fakeHTTP{docs: map[string]string{
		"http://10.1.1.1/openstack/latest/meta_data.json": `{"uuid": "os-img"}`,
	}}
	img := Image{List: []string{"OpenStack"}, Settings: map[string]SourceSettings{"OpenStack": {MetadataURLs: []string{"http://10.1.1.1"}}}}
	var log testLog
	d, err := FindWith(&fakeSys{http: h}, cmdline(t, ""), img, &log)
	if err != nil || d == nil || d.InstanceID != "os-img" {
		t.Fatalf("FindWith = %+v, %v\n%s", d, err, log.String())
	}
	if h.got[0] != "http://10.1.1.1/openstack" {
		t.Errorf("requests %q", h.got)
	}
}

// TestReadyReport: a source's Ready hook is called once with the instance
// its Metadata returned, while the network is up; a failing report is
// logged and the instance kept.
func TestReadyReport(t *testing.T) {
	old := Sources
	defer func() { Sources = old }()
	for _, fail := range []bool{false, true} {
		var readied []string
		Sources = []datasource.Source{{Name: "meta", Class: "Meta",
			Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
				return &instance.Data{InstanceID: "i-ready"}, nil
			},
			Ready: func(ctx context.Context, svc datasource.Service, d *instance.Data) error {
				readied = append(readied, d.InstanceID)
				if fail {
					return errors.New("fabric says no")
				}
				return nil
			}}}
		var log testLog
		d, err := FindWith(&fakeSys{}, cmdline(t, "earlyinit.ds=meta"), Image{}, &log)
		if err != nil || d == nil || d.InstanceID != "i-ready" {
			t.Fatalf("fail=%v: FindWith = %+v, %v", fail, d, err)
		}
		if !reflect.DeepEqual(readied, []string{"i-ready"}) {
			t.Errorf("fail=%v: Ready called with %q", fail, readied)
		}
		want := "datasource meta: reported ready to the platform"
		if fail {
			want = "datasource meta: ready report to the platform failed: fabric says no"
		}
		if !strings.Contains(log.String(), want) {
			t.Errorf("fail=%v: log lacks %q:\n%s", fail, want, log.String())
		}
	}
}

// TestImageOrderClass: a datasource_list class names every source of it
// (cloud-init's Ec2 is AWS, ZStack and Outscale), in registry order.
func TestImageOrderClass(t *testing.T) {
	order, _, warns := ImageOrder([]string{"Ec2"})
	var got []string
	for _, s := range order {
		if s.Class != "Ec2" {
			t.Errorf("%s (class %s) in the order of [Ec2]", s.Name, s.Class)
		}
		got = append(got, s.Name)
	}
	if len(got) < 2 || got[0] != "ec2" || !slices.Contains(got, "zstack") || !slices.Contains(got, "outscale") || len(warns) != 0 {
		t.Errorf("ImageOrder([Ec2]) = %q, %q", got, warns)
	}
}

// TestProvisioningDrive: a source with provisioning media (Azure's
// ovf-env.xml disc, any label) gets the first drive that holds the file in
// Service.Drive when its metadata service is asked; a drive of the right
// type without the file is passed over; with none, Drive is nil. A
// source whose metadata is not asked never has its media read.
func TestProvisioningDrive(t *testing.T) {
	old := Sources
	defer func() { Sources = old }()
	var got []string
	Sources = []datasource.Source{{Name: "prov", Class: "Prov",
		Platform:          func(i dmi.Info) bool { return i.SysVendor == "Prov" },
		ProvisioningDrive: func(fstype, _ string) bool { return fstype == "udf" || fstype == "iso9660" },
		ProvisioningFile:  "ovf-env.xml",
		Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
			if svc.Drive == nil {
				got = append(got, "no drive")
				return &instance.Data{InstanceID: "i-none"}, nil
			}
			b, err := fs.ReadFile(svc.Drive, "ovf-env.xml")
			if err != nil {
				return nil, err
			}
			got = append(got, string(b))
			return &instance.Data{InstanceID: "i-drive"}, nil
		}}}
	media := func() *fakeSys {
		return &fakeSys{dmi: dmi.Info{SysVendor: "Prov"},
			devs: []blockdev.Device{drive("/dev/vda", "ext4", "root"), drive("/dev/sr0", "iso9660", "other"), drive("/dev/sr1", "udf", "rd_rdfe_stable")},
			files: map[string]fs.FS{
				"/dev/sr0": fstest.MapFS{"readme": {Data: []byte("x")}},
				"/dev/sr1": fstest.MapFS{"ovf-env.xml": {Data: []byte("<ovf/>")}},
			}}
	}
	for _, tt := range []struct {
		name   string
		sys    *fakeSys
		wantID string
		want   []string
		calls  []string
		logged string
	}{
		{"media", media(), "i-drive", []string{"<ovf/>"},
			[]string{"raise", "network", "drives", "read /dev/sr0", "read /dev/sr1", "network down", "lower"},
			"datasource prov: provisioning media sr1"},
		{"no media", &fakeSys{dmi: dmi.Info{SysVendor: "Prov"}, devs: []blockdev.Device{drive("/dev/vda", "ext4", "root")}}, "i-none", []string{"no drive"},
			[]string{"raise", "network", "drives", "network down", "lower"}, ""},
		{"not the platform", func() *fakeSys { s := media(); s.dmi = dmi.Info{SysVendor: "Other"}; return s }(), "", nil,
			[]string{}, ""},
	} {
		got = nil
		var log testLog
		d, _ := Find(tt.sys, cmdline(t, ""), &log)
		if (tt.wantID == "") != (d == nil || d.InstanceID == "iid-datasource-none") || (d != nil && tt.wantID != "" && d.InstanceID != tt.wantID) {
			t.Errorf("%s: found %+v, want %q", tt.name, d, tt.wantID)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: metadata saw %q, want %q", tt.name, got, tt.want)
		}
		var calls []string
		for _, c := range tt.sys.calls {
			if strings.HasPrefix(c, "seed ") {
				continue
			}
			calls = append(calls, c)
		}
		if len(tt.calls) > 0 && !reflect.DeepEqual(calls, tt.calls) {
			t.Errorf("%s: calls %q, want %q", tt.name, calls, tt.calls)
		}
		if len(tt.calls) == 0 && slices.Contains(calls, "read /dev/sr1") {
			t.Errorf("%s: the media was read on another platform: %q", tt.name, calls)
		}
		if tt.logged != "" && !strings.Contains(log.String(), tt.logged) {
			t.Errorf("%s: log has no %q:\n%s", tt.name, tt.logged, log.String())
		}
	}
}

// TestLocalSource: a Local source (VMware's guestinfo) is asked in its
// place without the temporary network, given the real root; a failure
// rejects it and the search goes on.
func TestLocalSource(t *testing.T) {
	old := Sources
	defer func() { Sources = old }()
	var roots []string
	fail := false
	Sources = []datasource.Source{{Name: "loc", Class: "Loc", Local: true,
		Platform: func(i dmi.Info) bool { return i.SysVendor == "Loc" },
		Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
			roots = append(roots, svc.Root)
			if fail {
				return nil, errors.New("no guestinfo")
			}
			return &instance.Data{InstanceID: "i-loc"}, nil
		}}}
	sys := &fakeSys{dmi: dmi.Info{SysVendor: "Loc"}}
	var log testLog
	d, err := Find(sys, cmdline(t, ""), &log)
	if err != nil || d == nil || d.InstanceID != "i-loc" || !reflect.DeepEqual(roots, []string{"/fake-root"}) {
		t.Errorf("Find = %+v, %v; roots %q", d, err, roots)
	}
	for _, c := range sys.calls {
		if c == "raise" || c == "network" {
			t.Errorf("calls %q: the network was raised for a local source", sys.calls)
		}
	}
	fail = true
	log.Reset()
	if d, _ := Find(&fakeSys{dmi: dmi.Info{SysVendor: "Loc"}}, cmdline(t, ""), &log); d != nil && d.InstanceID == "i-loc" {
		t.Errorf("a failing local source gave %+v", d)
	}
	if !strings.Contains(log.String(), "datasource loc rejected: no guestinfo") {
		t.Errorf("log:\n%s", log.String())
	}

	// Nothing there for it (cloud-init's get_data returning False) is
	// not a rejection: None follows, as in cloud-init. A rejection is
	// never None.
	for _, tc := range []struct {
		err      error
		wantNone bool
	}{{datasource.Absent("no guestinfo"), true}, {errors.New("no guestinfo"), false}} {
		Sources = []datasource.Source{{Name: "loc", Class: "Loc", Local: true,
			Platform: func(i dmi.Info) bool { return i.SysVendor == "Loc" },
			Metadata: func(context.Context, datasource.Service) (*instance.Data, error) { return nil, tc.err }}}
		log.Reset()
		d, _ := Find(&fakeSys{dmi: dmi.Info{SysVendor: "Loc"}}, cmdline(t, ""), &log)
		if gotNone := d != nil && d.InstanceID == "iid-datasource-none"; gotNone != tc.wantNone || strings.Contains(log.String(), "rejected") == tc.wantNone {
			t.Errorf("%v: Find = %+v, want None %v; log:\n%s", tc.err, d, tc.wantNone, log.String())
		}
	}
}

// TestImageOrderNoneAloneOracle: cloud-init 22.4 given datasource_list
// [None] lists DataSourceNone alone to search, in both stages
// (sources.list_sources, as stages.Init._get_data_source calls it): no
// source is searched before None, as ImageOrder says.
func TestImageOrderNoneAloneOracle(t *testing.T) {
	const script = `
from cloudinit import sources
out = []
for deps in ([sources.DEP_FILESYSTEM], [sources.DEP_FILESYSTEM, sources.DEP_NETWORK]):
    out.append([c.__name__ for c in sources.list_sources(["None"], deps, ["", "cloudinit.sources"])])
print(json.dumps(out))
`
	var got [][]string
	oracle.Run(t, script, nil, &got)
	if len(got) != 2 || len(got[1]) != 1 || got[1][0] != "DataSourceNone" || len(got[0]) > 1 || len(got[0]) == 1 && got[0][0] != "DataSourceNone" {
		t.Fatalf("cloud-init's sources for datasource_list [None]: %q, want DataSourceNone alone", got)
	}
	order, noneOK, warns := ImageOrder([]string{"None"})
	if len(order) != 0 || !noneOK || len(warns) != 0 {
		t.Errorf("ImageOrder([None]) = %q, %v, %q; want no source, None", names(order), noneOK, warns)
	}
}
