package provision

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/discover"
	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/network"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/settings"
)

// TestDatasourceSettings: each datasource.<Class> value is type-checked;
// a bad one is a warning naming its key and is left out, the good ones
// are kept.
func TestDatasourceSettings(t *testing.T) {
	for _, tt := range []struct {
		name  string
		class string
		in    map[string]any
		want  discover.SourceSettings
		warns []string
	}{{
		name:  "openstack",
		class: "OpenStack",
		in:    map[string]any{"metadata_urls": []any{"http://169.254.169.254", "http://10.0.0.1:8775/"}, "max_wait": 10, "timeout": 2.5},
		want:  discover.SourceSettings{MetadataURLs: []string{"http://169.254.169.254", "http://10.0.0.1:8775/"}, MaxWait: 10 * time.Second, Timeout: 2500 * time.Millisecond},
	}, {
		name:  "strings of numbers",
		class: "Ec2",
		in:    map[string]any{"max_wait": "120", "timeout": " 5 "},
		want:  discover.SourceSettings{MaxWait: 120 * time.Second, Timeout: 5 * time.Second},
	}, {
		name:  "bad values",
		class: "OpenStack",
		in: map[string]any{"metadata_urls": []any{"https://x", 7, "http://u:pw@10.0.0.1/", "ftp://x", "http://10.0.0.9"},
			"max_wait": -1, "timeout": "soon", "retries": 3},
		want: discover.SourceSettings{MetadataURLs: []string{"http://10.0.0.9"}},
		warns: []string{
			"datasource.OpenStack.max_wait: want a number of seconds above 0 and at most 86400: the default is used",
			"datasource.OpenStack.metadata_urls[0]: https is not supported (plain http only): skipped",
			"datasource.OpenStack.metadata_urls[1]: want an http:// URL, got a number: skipped",
			"datasource.OpenStack.metadata_urls[2]: a user or password in the URL is not supported: skipped",
			`datasource.OpenStack.metadata_urls[3]: want an http:// URL with a host, got scheme "ftp": skipped`,
			"datasource.OpenStack.retries: not supported: ignored",
			"datasource.OpenStack.timeout: want a number of seconds, got a string that is not one: the default is used",
		},
	}, {
		name:  "metadata_urls not a list",
		class: "Ec2",
		in:    map[string]any{"metadata_urls": "http://169.254.169.254", "max_wait": true},
		warns: []string{
			"datasource.Ec2.max_wait: want a number of seconds, got a boolean: the default is used",
			"datasource.Ec2.metadata_urls: want a list of http:// URLs, got a string: ignored",
		},
	}, {
		name:  "nocloud seedfrom",
		class: "NoCloud",
		in:    map[string]any{"seedfrom": "http://10.0.0.2/seed/", "fs_label": "cidata"},
		want:  discover.SourceSettings{SeedFrom: "http://10.0.0.2/seed/"},
		warns: []string{"datasource.NoCloud.fs_label: not supported: ignored"},
	}, {
		name:  "seedfrom only for nocloud",
		class: "ConfigDrive",
		in:    map[string]any{"seedfrom": "/x"},
		warns: []string{"datasource.ConfigDrive.seedfrom: not supported: ignored"},
	}, {
		name:  "oracle secondary nics",
		class: "Oracle",
		in:    map[string]any{"configure_secondary_nics": true},
		want:  discover.SourceSettings{SecondaryNICs: true},
	}, {
		name:  "secondary nics not a boolean",
		class: "Oracle",
		in:    map[string]any{"configure_secondary_nics": "true"},
		warns: []string{"datasource.Oracle.configure_secondary_nics: want a boolean, got a string: false"},
	}, {
		name:  "secondary nics only for oracle",
		class: "Ec2",
		in:    map[string]any{"configure_secondary_nics": true},
		warns: []string{"datasource.Ec2.configure_secondary_nics: not supported: ignored"},
	}, {
		name:  "seedfrom not a string",
		class: "NoCloud",
		in:    map[string]any{"seedfrom": []any{"/x"}},
		warns: []string{"datasource.NoCloud.seedfrom: want a directory or an http:// URL, got a list: ignored"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			got, warns := datasourceSettings(tt.class, tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("settings %+v, want %+v", got, tt.want)
			}
			if strings.Join(warns, "\n") != strings.Join(tt.warns, "\n") {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(warns, "\n"), strings.Join(tt.warns, "\n"))
			}
			for _, w := range warns {
				if strings.Contains(w, "pw@") {
					t.Errorf("a warning shows a password: %s", w)
				}
			}
		})
	}
}

// twoDrives is a machine with a config drive (the recorded one) and a
// NoCloud drive (a directory), and no metadata service.
type twoDrives struct{ configDrive, noCloud string }

func (s twoDrives) SeedDir(dir string) (fs.FS, bool) { return nil, false }
func (s twoDrives) Drives(time.Duration, func(blockdev.Device) bool) []blockdev.Device {
	return []blockdev.Device{
		{Path: "/dev/sr0", Name: "sr0", FS: blockdev.FS{Type: "iso9660", Label: "config-2"}},
		{Path: "/dev/vdb", Name: "vdb", FS: blockdev.FS{Type: "vfat", Label: "cidata"}},
	}
}
func (s twoDrives) ReadDrive(dev blockdev.Device, read func(fs.FS) (*instance.Data, error)) (*instance.Data, error) {
	dir := s.configDrive
	if dev.Path == "/dev/vdb" {
		dir = s.noCloud
	}
	return read(datasource.DriveFS(dir, datasource.MaxDriveTotal))
}
func (s twoDrives) RaiseLinks() func() { return func() {} }
func (s twoDrives) Network(context.Context) (datasource.Service, func(), error) {
	return datasource.Service{}, nil, errors.New("no metadata service here")
}

// noCloudDrive writes a NoCloud seed whose network config renames the
// NIC with driveMAC to lan0, with userData as its user-data.
func noCloudDrive(t *testing.T, userData string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range map[string]string{
		"meta-data":      "instance-id: nc-1\nlocal-hostname: nc-host\n",
		"user-data":      userData,
		"network-config": "version: 2\nethernets:\n  id0:\n    match: {macaddress: \"" + driveMAC + "\"}\n    set-name: lan0\n    dhcp4: true\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// imageEnv is testEnv with both drives attached, the image's files
// (paths in the root: contents) written and cmdline added to the kernel
// command line.
func imageEnv(t *testing.T, log Log, files map[string]string, cmdline, userData string) Env {
	t.Helper()
	env := testEnv(t, log)
	for p, data := range files {
		full := filepath.Join(env.Root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, errs := settings.ParseCmdline("root=/dev/vda1 " + cmdline)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	env.Settings = s
	env.System = twoDrives{configDrive: driveDir, noCloud: noCloudDrive(t, userData)}
	return env
}

// nicNames are the NICs' names.
func nicNames(nl *fakeNL) string {
	var names []string
	for _, l := range nl.links {
		names = append(names, l.Name)
	}
	return strings.Join(names, " ")
}

// TestRunImageDatasourceList: the image's datasource_list chooses between
// two attached drives, in its order; earlyinit.ds= wins over it.
func TestRunImageDatasourceList(t *testing.T) {
	for _, tt := range []struct {
		name, cloudCfg, cmdline, wantID string
	}{
		{"default order", "", "", driveIID},
		{"nocloud first", "datasource_list: [NoCloud, ConfigDrive, None]\n", "", "nc-1"},
		{"configdrive first", "datasource_list: [ConfigDrive, NoCloud]\n", "", driveIID},
		{"nocloud only", "datasource_list: [ NoCloud ]\n", "", "nc-1"},
		{"cmdline wins", "datasource_list: [NoCloud]\n", "earlyinit.ds=configdrive", driveIID},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := &testLog{}
			files := map[string]string{}
			if tt.cloudCfg != "" {
				files["etc/cloud/cloud.cfg"] = tt.cloudCfg
			}
			env := imageEnv(t, log, files, tt.cmdline, "")
			if res := Run(env); !res.Instance {
				t.Fatalf("no instance:\n%s", log.String())
			}
			b, _ := os.ReadFile(filepath.Join(env.Root, paths.DataDir, "instance-id"))
			if got := strings.TrimSpace(string(b)); got != tt.wantID {
				t.Errorf("instance %q, want %q\n%s", got, tt.wantID, log.String())
			}
		})
	}
}

// TestRunImageNetworkDisabled: network: {config: disabled} in the image
// (cloud.cfg, or the usual cloud.cfg.d drop-in) or network-config=disabled
// on the kernel command line: no NIC renamed, no network file written, one
// line saying why. earlyinit's own drop-in, which it writes for an
// installed cloud-init, does not count.
func TestRunImageNetworkDisabled(t *testing.T) {
	const list = "datasource_list: [NoCloud]\n"
	for _, tt := range []struct {
		name     string
		files    map[string]string
		cmdline  string
		disabled string // "" for not disabled, else the log line's part
	}{
		{name: "enabled", files: map[string]string{"etc/cloud/cloud.cfg": list}},
		{name: "earlyinit's own drop-in", files: map[string]string{"etc/cloud/cloud.cfg": list,
			"etc/cloud/cloud.cfg.d/99-earlyinit-disable-network-config.cfg": "network: {config: disabled}\n"}},
		{name: "cloud.cfg", files: map[string]string{"etc/cloud/cloud.cfg": list + "network: {config: disabled}\n"},
			disabled: "network: config disabled by the image's configuration (network: {config: disabled})"},
		{name: "cloud.cfg.d", files: map[string]string{"etc/cloud/cloud.cfg": list,
			"etc/cloud/cloud.cfg.d/99-disable-network-config.cfg": "network:\n  config: disabled\n"},
			disabled: "network: config disabled by the image's configuration"},
		{name: "cmdline", files: map[string]string{"etc/cloud/cloud.cfg": list}, cmdline: "network-config=disabled",
			disabled: "network: config disabled by network-config=disabled on the kernel command line"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := &testLog{}
			env := imageEnv(t, log, tt.files, tt.cmdline, "")
			nl := env.Netlink.(*fakeNL)
			if res := Run(env); !res.Instance {
				t.Fatalf("no instance:\n%s", log.String())
			}
			if !strings.Contains(log.String(), `datasource nocloud: instance "nc-1"`) {
				t.Fatalf("not the NoCloud drive:\n%s", log.String())
			}
			entries, _ := os.ReadDir(filepath.Join(env.Root, "etc/systemd/network"))
			_, digestErr := os.Stat(filepath.Join(env.Root, network.DigestFile))
			if tt.disabled == "" {
				if nicNames(nl) != "lo lan0" || len(entries) == 0 || digestErr != nil {
					t.Errorf("enabled: NICs %q, %d network files, digest %v\n%s", nicNames(nl), len(entries), digestErr, log.String())
				}
				return
			}
			if nicNames(nl) != "lo ens3" {
				t.Errorf("NICs %q: renamed with the network config disabled", nicNames(nl))
			}
			if len(entries) != 0 || digestErr == nil {
				t.Errorf("network files written with the network config disabled: %v, digest %v", entries, digestErr)
			}
			if n := strings.Count(log.String(), tt.disabled); n != 1 {
				t.Errorf("%d lines %q:\n%s", n, tt.disabled, log.String())
			}
		})
	}
}

// TestRunImagePreserveHostname: preserve_hostname: true leaves
// /etc/hostname and /etc/hosts alone; user-data wins over the image.
func TestRunImagePreserveHostname(t *testing.T) {
	for _, tt := range []struct {
		name, cloudCfg, userData string
		preserve                 bool
	}{
		{"default", "", "", false},
		{"image", "preserve_hostname: true\n", "", true},
		{"image false", "preserve_hostname: false\n", "", false},
		{"user-data over image", "preserve_hostname: true\n", "#cloud-config\npreserve_hostname: false\n", false},
		{"user-data", "", "#cloud-config\npreserve_hostname: true\n", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := &testLog{}
			files := map[string]string{
				"etc/cloud/cloud.cfg": "datasource_list: [NoCloud]\n" + tt.cloudCfg,
				"etc/hostname":        "image-host\n",
				"etc/hosts":           "127.0.0.1 localhost\n127.0.1.1 image-host\n",
			}
			env := imageEnv(t, log, files, "", tt.userData)
			if res := Run(env); !res.Instance {
				t.Fatalf("no instance:\n%s", log.String())
			}
			hostname, _ := os.ReadFile(filepath.Join(env.Root, "etc/hostname"))
			hosts, _ := os.ReadFile(filepath.Join(env.Root, "etc/hosts"))
			kept := string(hostname) == files["etc/hostname"] && string(hosts) == files["etc/hosts"]
			if kept != tt.preserve {
				t.Errorf("hostname %q, hosts %q; preserved %v, want %v\n%s", hostname, hosts, kept, tt.preserve, log.String())
			}
			if tt.preserve && strings.Count(log.String(), "preserve_hostname") != 1 {
				t.Errorf("want one line about preserve_hostname:\n%s", log.String())
			}
			if !tt.preserve && string(hostname) != "nc-host\n" {
				t.Errorf("hostname %q, want nc-host", hostname)
			}
		})
	}
}

// TestEffectiveConfig: the cloud-config the initramfs decides with is
// merged as cloud-init merges it: user-data over vendor-data over the
// image's configuration over the built-in defaults, maps key by key.
func TestEffectiveConfig(t *testing.T) {
	image := map[string]any{
		"preserve_hostname": true,
		"growpart":          map[string]any{"mode": "auto", "devices": []any{"/"}},
		"ssh_pwauth":        false,
		"disable_root":      false,
	}
	for _, tt := range []struct {
		name                  string
		image                 map[string]any
		user, vendor, vendor2 string
		noData                bool
		want                  map[string]any // the keys compared
	}{{
		name:   "built-in defaults",
		noData: true,
		want:   map[string]any{"preserve_hostname": false, "disable_root": true, "users": []any{"default"}},
	}, {
		name:   "image over built-in",
		image:  image,
		noData: true,
		want:   map[string]any{"preserve_hostname": true, "disable_root": false, "ssh_pwauth": false, "users": []any{"default"}},
	}, {
		name:   "vendor over image",
		image:  image,
		vendor: "#cloud-config\npreserve_hostname: false\nssh_pwauth: true\n",
		want:   map[string]any{"preserve_hostname": false, "ssh_pwauth": true, "disable_root": false},
	}, {
		name:   "user over vendor",
		image:  image,
		vendor: "#cloud-config\nssh_pwauth: true\npreserve_hostname: false\n",
		user:   "#cloud-config\nssh_pwauth: false\n",
		want:   map[string]any{"ssh_pwauth": false, "preserve_hostname": false},
	}, {
		name:   "user turns vendor-data off",
		image:  image,
		vendor: "#cloud-config\npreserve_hostname: false\n",
		user:   "#cloud-config\nvendor_data: {enabled: false}\n",
		want:   map[string]any{"preserve_hostname": true},
	}, {
		// Maps merge key by key: the user's mode, the image's devices.
		name:  "maps merge",
		image: image,
		user:  "#cloud-config\ngrowpart: {mode: 'off'}\n",
		want:  map[string]any{"growpart": map[string]any{"mode": "off", "devices": []any{"/"}}},
	}, {
		// OpenStack's vendor_data2 over vendor_data, under the user's.
		name:    "vendor-data2",
		vendor:  "#cloud-config\npreserve_hostname: false\ngrowpart: {mode: 'off'}\n",
		vendor2: "#cloud-config\npreserve_hostname: true\n",
		want:    map[string]any{"preserve_hostname": true, "growpart": map[string]any{"mode": "off"}},
	}, {
		name: "user's users over built-in",
		user: "#cloud-config\nusers: [alice]\n",
		want: map[string]any{"users": []any{"alice"}},
	}, {
		// #include is the final stage's; the rest of a MIME message is
		// used.
		name: "include left out",
		user: "Content-Type: multipart/mixed; boundary=XX\nMIME-Version: 1.0\n\n--XX\nContent-Type: text/x-include-url\n\nhttp://10.0.0.1/cfg\n--XX\nContent-Type: text/cloud-config\n\npreserve_hostname: true\n--XX--\n",
		want: map[string]any{"preserve_hostname": true},
	}, {
		name:  "not cloud-config",
		image: image,
		user:  "#!/bin/sh\necho hi\n",
		want:  map[string]any{"preserve_hostname": true},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			var d *instance.Data
			if !tt.noData {
				d = &instance.Data{UserData: []byte(tt.user), VendorData: []byte(tt.vendor), VendorData2: []byte(tt.vendor2)}
			}
			var img *imagecfg.Config
			if tt.image != nil {
				img = &imagecfg.Config{Raw: tt.image}
			}
			got := effectiveConfig(img, d, &testLog{})
			for k, want := range tt.want {
				if !reflect.DeepEqual(got[k], want) {
					t.Errorf("%s = %#v, want %#v (all: %v)", k, got[k], want, got)
				}
			}
		})
	}
	if got := effectiveConfig(&imagecfg.Config{Raw: image}, nil, &testLog{}); image["users"] != nil || got["users"] == nil {
		t.Errorf("the image's map was changed, or the defaults left out: %v", got)
	}
}

// TestLoadImageConfig: each file read is one line and each problem one
// warning, and nothing stops the run; earlyinit's own drop-in and links
// are not read.
func TestLoadImageConfig(t *testing.T) {
	log := &testLog{}
	env := imageEnv(t, log, map[string]string{
		"etc/cloud/cloud.cfg":                                           "datasource_list: [NoCloud]\npreserve_hostname: true\n",
		"etc/cloud/cloud.cfg.d/50-bad.cfg":                              "a: [\n",
		"etc/cloud/cloud.cfg.d/99-earlyinit-disable-network-config.cfg": "network: {config: disabled}\n",
		"etc/earlyinit/earlyinit.cfg":                                   "datasource: {OpenStack: {max_wait: never}}\n",
		"srv/elsewhere.cfg":                                             "preserve_hostname: false\n",
	}, "", "")
	if err := os.Symlink("/srv/elsewhere.cfg", filepath.Join(env.Root, "etc/cloud/cloud.cfg.d/60-link.cfg")); err != nil {
		t.Fatal(err)
	}
	img := loadImageConfig(env)
	if !img.PreserveHostname() || img.NetworkDisabled() || !reflect.DeepEqual(img.DatasourceList(), []string{"NoCloud"}) {
		t.Errorf("config %v", img.Raw)
	}
	out := log.String()
	for _, want := range []string{
		"image configuration: read /etc/cloud/cloud.cfg\n",
		"image configuration: read /etc/earlyinit/earlyinit.cfg\n",
		"E image configuration: /etc/cloud/cloud.cfg.d/50-bad.cfg: ",
		"E image configuration: /etc/cloud/cloud.cfg.d/60-link.cfg: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log has no %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "99-earlyinit") {
		t.Errorf("earlyinit's own drop-in was read:\n%s", out)
	}
	di := discoverImage(img, log)
	if !reflect.DeepEqual(di.List, []string{"NoCloud"}) || di.Settings["OpenStack"].MaxWait != 0 {
		t.Errorf("discover.Image %+v", di)
	}
	if !strings.Contains(log.String(), "E image configuration: datasource.OpenStack.max_wait: want a number of seconds") {
		t.Errorf("no warning for max_wait:\n%s", log.String())
	}

	// No root at all: a warning, and an empty configuration.
	log = &testLog{}
	env.Root = filepath.Join(t.TempDir(), "none")
	if img := loadImageConfig(env); img == nil || len(img.Raw) != 0 {
		t.Errorf("config from no root: %+v", img)
	}
}

// TestDefaultUserName: the default user the image creates, as cloud-init
// finds it for GCE's keys, reaches discovery.
func TestDefaultUserName(t *testing.T) {
	du := map[string]any{"default_user": map[string]any{"name": "img"}}
	for _, tt := range []struct {
		name string
		raw  map[string]any
		want string
	}{
		{"users: [default]", map[string]any{"users": []any{"default"}, "system_info": du}, "img"},
		{"distribution's default user", map[string]any{"users": []any{"default", map[string]any{"name": "bob"}}}, "debian"},
		{"a map entry named default", map[string]any{"users": []any{map[string]any{"name": "default"}}, "system_info": du}, "img"},
		{"comma-separated", map[string]any{"users": "bob, default", "system_info": du}, "img"},
		{"a map of users", map[string]any{"users": map[string]any{"default": true}, "system_info": du}, "img"},
		{"default turned off", map[string]any{"users": map[string]any{"default": false}, "system_info": du}, ""},
		{"no default in users", map[string]any{"users": []any{"bob"}, "system_info": du}, ""},
		{"no users", map[string]any{"system_info": du}, ""},
		{"user: a name", map[string]any{"user": "ann", "system_info": du}, "ann"},
		{"user: a map", map[string]any{"user": map[string]any{"name": "ann"}}, "ann"},
		{"user: a map without a name", map[string]any{"user": map[string]any{"shell": "/bin/sh"}, "system_info": du}, "img"},
	} {
		di := discoverImage(&imagecfg.Config{Raw: tt.raw}, &testLog{})
		if di.DefaultUser != tt.want {
			t.Errorf("%s: DefaultUser = %q, want %q", tt.name, di.DefaultUser, tt.want)
		}
	}
}

// TestDiscoverImageUnknownSources: settings of a source earlyinit lacks
// are one warning each.
func TestDiscoverImageUnknownSources(t *testing.T) {
	log := &testLog{}
	img := &imagecfg.Config{Raw: map[string]any{"datasource": map[string]any{
		"SmartOS":  map[string]any{"serial_device": "/dev/ttyS1"},
		"Ec2":      map[string]any{"metadata_urls": []any{"http://169.254.169.254"}, "timeout": 5},
		"RbxCloud": map[string]any{},
	}}}
	di := discoverImage(img, log)
	want := discover.SourceSettings{MetadataURLs: []string{"http://169.254.169.254"}, Timeout: 5 * time.Second}
	if di.List != nil || !reflect.DeepEqual(di.Settings, map[string]discover.SourceSettings{"Ec2": want}) {
		t.Errorf("discover.Image %+v", di)
	}
	if got, want := log.String(), "E image configuration: datasource.RbxCloud: not supported: earlyinit has no such datasource\nE image configuration: datasource.SmartOS: not supported: earlyinit has no such datasource\n"; got != want {
		t.Errorf("log:\n%s\nwant:\n%s", got, want)
	}
}
