package discover

import (
	"context"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/configdrive"
	"github.com/earlyinit/earlyinit/internal/datasource/ec2"
	"github.com/earlyinit/earlyinit/internal/datasource/nocloud"
	"github.com/earlyinit/earlyinit/internal/datasource/openstack"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// DMI strings of real machines.
var (
	// A QEMU guest with QEMU's defaults (-machine pc); a Proxmox VE guest
	// has the same, with "pc-i440fx-9.2" or the q35 names.
	qemuDMI = dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (i440FX + PIIX, 1996)", ProductVersion: "pc-i440fx-8.2",
		ChassisVendor: "QEMU", BIOSVendor: "SeaBIOS", ProductUUID: "5b0e5e5c-1111-4a4a-8b8b-123456789abc"}
	qemuLine = `sys_vendor="QEMU" product_name="Standard PC (i440FX + PIIX, 1996)" product_version="pc-i440fx-8.2" chassis_vendor="QEMU" bios_vendor="SeaBIOS"`
	// A nova guest under libvirt.
	novaDMI  = dmi.Info{SysVendor: "OpenStack Foundation", ProductName: "OpenStack Nova", ProductVersion: "27.1.0", ChassisVendor: "QEMU"}
	novaLine = `sys_vendor="OpenStack Foundation" product_name="OpenStack Nova" product_version="27.1.0" chassis_vendor="QEMU"`
	// An AWS Nitro instance.
	awsDMI = dmi.Info{SysVendor: "Amazon EC2", ProductName: "t3.micro", ProductSerial: "ec2e1916-9099-7caf-fd21-012345abcdef",
		ProductUUID: "ec2e1916-9099-7caf-fd21-012345abcdef", BIOSVendor: "Amazon EC2"}
)

// baseSources are the sources discovery's tests are written against: the
// registry grows with every platform, their expectations do not.
var baseSources = []datasource.Source{configdrive.Source, nocloud.Source, openstack.Source, ec2.Source}

// pinSources makes Sources baseSources for the test.
func pinSources(t *testing.T) {
	old := Sources
	Sources = baseSources
	t.Cleanup(func() { Sources = old })
}

// withSerial is qemuDMI with the system serial QEMU's -smbios
// type=1,serial=... sets.
func withSerial(serial string) dmi.Info {
	i := qemuDMI
	i.ProductSerial = serial
	return i
}

// TestPlatformDiscovery: the sources tried follow the DMI strings and what
// the user asked for; a machine whose platform is not recognised reads its
// drives and seeds only, never raising a link; the decision is one line
// with the DMI strings that made it.
func TestPlatformDiscovery(t *testing.T) {
	pinSources(t)
	noDrive := []string{"seed /var/lib/cloud/seed/config_drive", "drives", "seed /var/lib/cloud/seed/nocloud", "seed /var/lib/cloud/seed/nocloud-net"}
	for _, tt := range []struct {
		name    string
		cmdline string
		img     Image
		sys     *fakeSys
		wantID  string // "" for no instance
		wantSub string
		wantErr string
		calls   []string // nil: not checked
		logged  []string
		absent  []string // must not be in the log
	}{{
		// No platform, no drive: drives and seeds only, then None. No
		// link is raised, no lease asked for.
		name:    "qemu nothing",
		sys:     &fakeSys{dmi: qemuDMI},
		wantID:  "iid-datasource-none",
		wantSub: "config",
		calls:   noDrive,
		logged: []string{
			"datasource: no platform recognised (" + qemuLine + "): drives and seeds only: trying configdrive, nocloud\n",
			"no datasource found (tried configdrive, nocloud; block devices: ): falling back to None",
		},
		absent: []string{"5b0e5e5c"},
	}, {
		// Proxmox's cloud-init drive (NoCloud) is read; nothing over the
		// network.
		name: "proxmox nocloud drive",
		sys: &fakeSys{dmi: dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (Q35 + ICH9, 2009)", ProductVersion: "pc-q35-9.2", ChassisVendor: "QEMU"},
			devs: []blockdev.Device{drive("/dev/sr0", "iso9660", "cidata")}, files: map[string]fs.FS{"/dev/sr0": noCloudSeed("pve-1")}},
		wantID: "pve-1", wantSub: "config-disk (/dev/sr0)",
		calls: []string{"seed /var/lib/cloud/seed/config_drive", "drives", "seed /var/lib/cloud/seed/nocloud", "seed /var/lib/cloud/seed/nocloud-net", "read /dev/sr0"},
	}, {
		// Nova: its metadata service is tried, after the drives; ec2's is
		// not (AWS is not recognised).
		name:    "openstack recognised",
		sys:     &fakeSys{dmi: novaDMI, netErr: errors.New("no link")},
		wantID:  "iid-datasource-none",
		wantSub: "config",
		calls:   []string{"raise", "seed /var/lib/cloud/seed/config_drive", "drives", "seed /var/lib/cloud/seed/nocloud", "seed /var/lib/cloud/seed/nocloud-net", "network", "lower"},
		logged:  []string{"datasource: platform openstack (" + novaLine + "): trying configdrive, nocloud, openstack\n", "metadata service: no link"},
	}, {
		name:   "aws recognised",
		sys:    &fakeSys{dmi: awsDMI, http: &fakeHTTP{}},
		logged: []string{`datasource: platform ec2 (sys_vendor="Amazon EC2" product_name="t3.micro" bios_vendor="Amazon EC2"): trying configdrive, nocloud, ec2` + "\n"},
		// The fake service answers 404 to all: ec2 is rejected.
		wantErr: "1 rejected",
		absent:  []string{"ec2e1916"},
	}, {
		// earlyinit.ds= asks: tried on any platform.
		name:    "asked by earlyinit.ds",
		cmdline: "earlyinit.ds=ec2",
		sys:     &fakeSys{dmi: qemuDMI, netErr: errors.New("no link")},
		calls:   []string{"raise", "network", "lower"},
		logged:  []string{"datasource: no platform recognised; ec2 asked for by earlyinit.ds=ec2 (" + qemuLine + "): trying ec2\n"},
		wantID:  "iid-datasource-none", wantSub: "config",
	}, {
		name:    "metadata_url",
		cmdline: "earlyinit.metadata_url=http://10.0.0.1:8775/",
		sys:     &fakeSys{dmi: qemuDMI, netErr: errors.New("no link")},
		calls:   []string{"raise", "seed /var/lib/cloud/seed/config_drive", "drives", "seed /var/lib/cloud/seed/nocloud", "seed /var/lib/cloud/seed/nocloud-net", "network", "lower"},
		logged:  []string{"datasource: no platform recognised; earlyinit.metadata_url set (" + qemuLine + "): trying configdrive, nocloud, openstack, ec2\n"},
		wantID:  "iid-datasource-none", wantSub: "config",
	}, {
		// A datasource_list of one source (and None) asks for it, as
		// ds-identify takes it.
		name:   "datasource_list single",
		img:    Image{List: []string{"Ec2", "None"}},
		sys:    &fakeSys{dmi: qemuDMI, netErr: errors.New("no link")},
		calls:  []string{"raise", "network", "lower"},
		logged: []string{"datasource: no platform recognised; ec2 asked for by datasource_list (" + qemuLine + "): trying ec2\n"},
		wantID: "iid-datasource-none", wantSub: "config",
	}, {
		// Debian's list names them all: the platform decides.
		name:   "datasource_list long",
		img:    Image{List: []string{"NoCloud", "ConfigDrive", "OpenStack", "Ec2", "None"}},
		sys:    &fakeSys{dmi: qemuDMI},
		calls:  []string{"seed /var/lib/cloud/seed/nocloud", "seed /var/lib/cloud/seed/nocloud-net", "drives", "seed /var/lib/cloud/seed/config_drive"},
		logged: []string{"datasource: no platform recognised (" + qemuLine + "): drives and seeds only: trying nocloud, configdrive\n"},
		wantID: "iid-datasource-none", wantSub: "config",
	}, {
		// A list without None: nothing found is no instance.
		name:   "datasource_list without None",
		img:    Image{List: []string{"NoCloud", "ConfigDrive"}},
		sys:    &fakeSys{dmi: qemuDMI},
		logged: []string{"no datasource found (tried nocloud, configdrive; block devices: ); the image's datasource_list has no None: booting without an instance"},
	}, {
		// The DMI serial: a seed directory, its h= over what is read.
		name:    "dmi serial seed dir",
		sys:     &fakeSys{dmi: withSerial("ds=nocloud;s=file:///srv/dmi/;h=dmihost"), seeds: map[string]fs.FS{"/srv/dmi": noCloudSeed("nc-dmi")}},
		wantID:  "nc-dmi",
		wantSub: "seed-dir (/srv/dmi)",
		calls:   []string{"seed /srv/dmi"},
		logged: []string{
			"datasource: no platform recognised; nocloud asked for by DMI product_serial (" + qemuLine + "): drives and seeds only: trying configdrive, nocloud\n",
			`datasource nocloud: instance "nc-dmi", hostname "dmihost"`,
		},
	}, {
		// ds=nocloud-net;s=http://...: read over the temporary network,
		// the only thing that raises it on this platform.
		name:    "dmi serial seed url",
		sys:     &fakeSys{dmi: withSerial("ds=nocloud-net;s=http://10.0.2.2:8000/seed/"), http: &fakeHTTP{docs: map[string]string{"http://10.0.2.2:8000/seed/meta-data": "instance-id: nc-url\n"}}},
		wantID:  "nc-url",
		wantSub: "seed-dir (http://10.0.2.2:8000/seed/)",
		calls:   []string{"raise", "network", "network down", "lower"},
		logged:  []string{"datasource: no platform recognised; nocloud asked for by DMI product_serial (" + qemuLine + "): drives and seeds, nocloud's seed over the network: trying configdrive, nocloud\n"},
	}, {
		// cloud-init merges the serial's meta-data first: its seed and
		// keys win over the command line's; the command line's others
		// still apply.
		name:    "dmi serial and cmdline",
		cmdline: "ds=nocloud;s=/srv/cmd;h=cmdhost;i=iid-cmd",
		sys:     &fakeSys{dmi: withSerial("ds=nocloud;s=/srv/dmi;h=dmihost"), seeds: map[string]fs.FS{"/srv/dmi": noCloudSeed("nc-dmi"), "/srv/cmd": noCloudSeed("nc-cmd")}},
		wantID:  "iid-cmd",
		wantSub: "seed-dir (/srv/dmi)",
		logged:  []string{`datasource nocloud: instance "iid-cmd", hostname "dmihost"`, "nocloud asked for by the kernel command line and DMI product_serial"},
	}, {
		// The serial alone, no seed: a NoCloud instance of its i= and
		// h=, found by "dmi" as cloud-init reports it (Proxmox and
		// libvirt users set it with -smbios type=1,serial=...).
		name:    "dmi serial alone",
		sys:     &fakeSys{dmi: withSerial("ds=nocloud;i=iid-serial;h=serialhost")},
		wantID:  "iid-serial",
		wantSub: "seed-dir (dmi)",
		logged:  []string{`datasource nocloud: instance "iid-serial", hostname "serialhost" (seed-dir (dmi))`},
	}, {
		// A bad serial seed is rejected, not read, and no None after it.
		name:    "dmi serial bad seed",
		sys:     &fakeSys{dmi: withSerial("ds=nocloud;s=ftp://10.0.2.2/")},
		wantErr: "1 rejected",
		logged:  []string{"E DMI product_serial: datasource nocloud (ds=nocloud;s=ftp://10.0.2.2/) rejected: ds=nocloud: s=ftp://10.0.2.2/: unsupported seed"},
	}, {
		// A seed URL's password never reaches the log.
		name:    "dmi serial seed url with password",
		sys:     &fakeSys{dmi: withSerial("ds=nocloud;s=http://u:hunter2@10.0.2.2/"), http: &fakeHTTP{}},
		wantErr: "1 rejected",
		absent:  []string{"hunter2"},
	}, {
		// A serial that is not NoCloud's asks for nothing.
		name:    "dmi serial other",
		sys:     &fakeSys{dmi: withSerial("ds=other;s=/srv/dmi")},
		wantID:  "iid-datasource-none",
		wantSub: "config",
		calls:   noDrive,
	}, {
		// DMI partly unreadable: what was read decides.
		name:    "dmi error",
		sys:     &fakeSys{dmi: qemuDMI, dmiErr: errors.New("dmi product_serial: permission denied")},
		wantID:  "iid-datasource-none",
		wantSub: "config",
		calls:   noDrive,
		logged:  []string{"E datasource: DMI strings: dmi product_serial: permission denied"},
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
			if tt.calls != nil && !reflect.DeepEqual(tt.sys.calls, tt.calls) {
				t.Errorf("system calls %q, want %q", tt.sys.calls, tt.calls)
			}
			if n := strings.Count(log.String(), "datasource: "); !strings.Contains(tt.name, "error") && n != 1 {
				t.Errorf("%d decision lines, want 1:\n%s", n, log.String())
			}
			for _, l := range tt.logged {
				if !strings.Contains(log.String(), l) {
					t.Errorf("log has no %q:\n%s", l, log.String())
				}
			}
			for _, l := range tt.absent {
				if strings.Contains(log.String(), l) {
					t.Errorf("log has %q:\n%s", l, log.String())
				}
			}
		})
	}
}

// TestNoPlatformWaitBound: on a machine with no datasource and no platform,
// the only wait discovery asks of the System is the drive poll, bounded by
// DriveGrace (1.5 s), and no link is raised: the boot's bound, NIC with link
// or not.
func TestNoPlatformWaitBound(t *testing.T) {
	pinSources(t)
	for _, c := range []string{"", "earlyinit.timeout=1", "earlyinit.timeout=60"} {
		sys := &fakeSys{dmi: qemuDMI}
		d, err := Find(sys, cmdline(t, c), &testLog{})
		if err != nil || d == nil || d.InstanceID != "iid-datasource-none" {
			t.Errorf("%q: Find = %+v, %v", c, d, err)
		}
		if sys.driveFor > DriveGrace {
			t.Errorf("%q: drive poll %s, more than %s", c, sys.driveFor, DriveGrace)
		}
		for _, call := range sys.calls {
			if call == "raise" || call == "network" {
				t.Errorf("%q: %s called: %q", c, call, sys.calls)
			}
		}
	}
	if DriveGrace > 2*time.Second {
		t.Errorf("DriveGrace %s is over the 2 s bound", DriveGrace)
	}
}

// TestDecide: the decision alone, on fake sources: a metadata source is
// kept when asked for, recognised, with earlyinit.metadata_url, or with no
// DMI at all; otherwise only its drives and seeds are.
func TestDecide(t *testing.T) {
	meta := func(name string, platform func(dmi.Info) bool) datasource.Source {
		return datasource.Source{Name: name, Platform: platform,
			Metadata: func(context.Context, datasource.Service) (*instance.Data, error) { return nil, nil }}
	}
	isA := func(i dmi.Info) bool { return i.SysVendor == "A" }
	both := meta("both", isA)
	both.Labels = []string{"both-drive"}
	both.ReadFS = func(fs.FS) (*instance.Data, error) { return nil, nil }
	drv := datasource.Source{Name: "drv", Labels: []string{"drv"}}
	srcs := []datasource.Source{drv, meta("ma", isA), meta("mb", nil), both}
	type kept struct {
		name string
		meta bool
	}
	for _, tt := range []struct {
		name  string
		info  dmi.Info
		asked map[string]string
		url   string
		want  []kept
		line  string
	}{
		{"nothing recognised", dmi.Info{SysVendor: "B"}, nil, "", []kept{{"drv", false}, {"both", false}},
			`datasource: no platform recognised (sys_vendor="B"): drives and seeds only: trying drv, both`},
		{"platform A", dmi.Info{SysVendor: "A"}, nil, "", []kept{{"drv", false}, {"ma", true}, {"both", true}},
			`datasource: platform ma, both (sys_vendor="A"): trying drv, ma, both`},
		{"asked", dmi.Info{SysVendor: "B"}, map[string]string{"mb": "earlyinit.ds=mb"}, "", []kept{{"drv", false}, {"mb", true}, {"both", false}},
			`datasource: no platform recognised; mb asked for by earlyinit.ds=mb (sys_vendor="B"): trying drv, mb, both`},
		{"asked and recognised", dmi.Info{SysVendor: "A"}, map[string]string{"mb": "x", "drv": "x"}, "", []kept{{"drv", false}, {"ma", true}, {"mb", true}, {"both", true}},
			`datasource: drv, mb asked for by x; platform ma, both (sys_vendor="A"): trying drv, ma, mb, both`},
		{"metadata_url", dmi.Info{SysVendor: "B"}, nil, "http://m", []kept{{"drv", false}, {"ma", true}, {"mb", true}, {"both", true}},
			`datasource: no platform recognised; earlyinit.metadata_url set (sys_vendor="B"): trying drv, ma, mb, both`},
		{"no DMI", dmi.Info{}, nil, "", []kept{{"drv", false}, {"ma", true}, {"mb", true}, {"both", true}},
			`datasource: platform unknown (no DMI strings): trying drv, ma, mb, both`},
	} {
		dec := Decide(tt.info, srcs, tt.asked, tt.url)
		var got []kept
		for _, s := range dec.Order {
			got = append(got, kept{s.Name, s.Metadata != nil})
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: kept %v, want %v", tt.name, got, tt.want)
		}
		if dec.Line != tt.line {
			t.Errorf("%s: line\n%s\nwant\n%s", tt.name, dec.Line, tt.line)
		}
	}
	// The registry's sources were not changed by the decision.
	if srcs[1].Metadata == nil || srcs[3].Metadata == nil {
		t.Error("Decide cleared Metadata in its argument")
	}
}

// TestDecideRegistry: the real sources against real DMI strings.
func TestDecideRegistry(t *testing.T) {
	pinSources(t)
	for _, tt := range []struct {
		info dmi.Info
		want string
	}{
		{qemuDMI, "no platform recognised (" + qemuLine + "): drives and seeds only: trying configdrive, nocloud"},
		{novaDMI, "platform openstack (" + novaLine + "): trying configdrive, nocloud, openstack"},
		{dmi.Info{ChassisAssetTag: "HUAWEICLOUD"}, `platform openstack (chassis_asset_tag="HUAWEICLOUD"): trying configdrive, nocloud, openstack`},
		{dmi.Info{ProductUUID: "EC23AEF5-54BE-4843-8D24-8C819F88453E"}, `platform ec2 (no DMI strings): trying configdrive, nocloud, ec2`},
	} {
		dec := Decide(tt.info, Sources, nil, "")
		if want := "datasource: " + tt.want; !strings.HasPrefix(dec.Line, want) {
			t.Errorf("Decide(%+v):\n%s\nwant\n%s", tt.info, dec.Line, want)
		}
	}
}

func TestSingleEntry(t *testing.T) {
	for _, tt := range []struct {
		list []string
		want bool
	}{
		{[]string{"Ec2"}, true},
		{[]string{"Ec2", "None"}, true},
		{[]string{"OpenStack", "DataSourceNone"}, true},
		{[]string{"None"}, false},
		{[]string{"None", "Ec2"}, false},
		{[]string{"NoCloud", "ConfigDrive"}, false},
		{[]string{"NoCloud", "ConfigDrive", "None"}, false},
		{nil, false},
	} {
		if got := singleEntry(tt.list); got != tt.want {
			t.Errorf("singleEntry(%q) = %v, want %v", tt.list, got, tt.want)
		}
	}
}

// TestSerialWords: the serial is read as command-line words; earlyinit's
// own options are not taken from it.
func TestSerialWords(t *testing.T) {
	for _, tt := range []struct {
		serial string
		want   map[string]string
	}{
		{"ds=nocloud;s=http://10.0.2.2:8000/;h=vm1;i=iid-1", map[string]string{"ds": "nocloud;s=http://10.0.2.2:8000/;h=vm1;i=iid-1"}},
		{"ds=nocloud-net;s=http://10.0.2.2/", map[string]string{"ds": "nocloud-net;s=http://10.0.2.2/"}},
		{"  ds=nocloud  earlyinit.ds=ec2 earlyinit=disabled", map[string]string{"ds": "nocloud"}},
		{"ec23aef5-54be-4843-8d24-8c819f88453e", map[string]string{"ec23aef5-54be-4843-8d24-8c819f88453e": ""}},
		{"", map[string]string{}},
	} {
		if got := serialWords(tt.serial); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("serialWords(%q) = %q, want %q", tt.serial, got, tt.want)
		}
	}
}

// TestNoneFallback: None is the last resort unless the image's
// datasource_list leaves it out, whatever earlyinit.ds= says; a rejected
// source blocks it.
func TestNoneFallback(t *testing.T) {
	pinSources(t)
	for _, tt := range []struct {
		name    string
		cmdline string
		list    []string
		want    bool
	}{
		{"no list", "", nil, true},
		{"list with None", "", []string{"NoCloud", "None"}, true},
		{"list without None", "", []string{"NoCloud"}, false},
		{"earlyinit.ds, no list", "earlyinit.ds=nocloud", nil, true},
		{"earlyinit.ds, list without None", "earlyinit.ds=nocloud", []string{"ConfigDrive"}, false},
		{"earlyinit.ds, list with None", "earlyinit.ds=nocloud", []string{"ConfigDrive", "None"}, true},
	} {
		d, err := FindWith(&fakeSys{dmi: qemuDMI}, cmdline(t, tt.cmdline), Image{List: tt.list}, &testLog{})
		if err != nil || (d != nil) != tt.want || (d != nil && (d.InstanceID != "iid-datasource-none" || d.Datasource != "none" || d.DatasourceClass != "None")) {
			t.Errorf("%s: FindWith = %+v, %v; want None: %v", tt.name, d, err, tt.want)
		}
	}
}

// TestMetadataBase: a source's own address is where it is asked, unless
// earlyinit.metadata_url names one; the image's metadata_urls still win.
func TestMetadataBase(t *testing.T) {
	old := Sources
	defer func() { Sources = old }()
	var asked []string
	Sources = []datasource.Source{{Name: "own", Class: "Own", MetadataBase: "http://100.100.100.200",
		Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
			asked = append(asked, svc.Base)
			return &instance.Data{InstanceID: "i-own"}, nil
		}}}
	for _, tt := range []struct {
		cmdline string
		img     Image
		want    string
	}{
		{"earlyinit.ds=own", Image{}, "http://100.100.100.200"},
		{"earlyinit.ds=own earlyinit.metadata_url=http://10.9.9.9", Image{}, "http://meta"},
		{"earlyinit.ds=own", Image{Settings: map[string]SourceSettings{"Own": {MetadataURLs: []string{"http://img"}}}}, "http://img"},
	} {
		asked = nil
		d, err := FindWith(&fakeSys{}, cmdline(t, tt.cmdline), tt.img, &testLog{})
		if err != nil || d == nil || !reflect.DeepEqual(asked, []string{tt.want}) {
			t.Errorf("%s: asked %q (%v, %v), want %q", tt.cmdline, asked, d, err, tt.want)
		}
	}
}

// TestRegistryPlatforms: on the whole registry, every metadata source has
// a Platform rule (without one it is tried only when asked for), and no
// rule recognises a plain QEMU or Proxmox VE guest: those read their
// drives only, and reach their init within the drive poll.
func TestRegistryPlatforms(t *testing.T) {
	plain := []dmi.Info{
		qemuDMI,
		{SysVendor: "QEMU", ProductName: "Standard PC (Q35 + ICH9, 2009)", ProductVersion: "pc-q35-9.2", ChassisVendor: "QEMU",
			BIOSVendor: "SeaBIOS", BIOSVersion: "rel-1.16.3-0-ga6ed6b701f0a-prebuilt.qemu.org", ProductUUID: "3b4a1b5e-8c2f-4d7e-9a61-2f0c5d8e7b90"},
		{SysVendor: "QEMU", ProductName: "Standard PC (Q35 + ICH9, 2009)", ProductVersion: "pc-q35-8.2", ChassisVendor: "QEMU",
			BIOSVendor: "EDK II", BIOSVersion: "4.2023.08-4"},
	}
	for _, src := range Sources {
		if src.Metadata != nil && src.Platform == nil {
			t.Errorf("%s: a metadata source without a Platform rule: tried only when asked for", src.Name)
		}
		if src.Platform == nil {
			continue
		}
		for _, i := range plain {
			if src.Platform(i) {
				t.Errorf("%s: recognises a plain QEMU guest (%s): it would be probed over the network", src.Name, i)
			}
		}
	}
}
