package settings

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestSplitCmdline(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
	}{
		{"root=/dev/vda ro quiet\n", []string{"root=/dev/vda", "ro", "quiet"}},
		{`a="b c" d`, []string{"a=b c", "d"}},
		{`ds="nocloud;s=/seed/" x -- single arg`, []string{"ds=nocloud;s=/seed/", "x"}},
		{"   ", nil},
	} {
		if got := SplitCmdline(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitCmdline(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseCmdline(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    Settings
		wantErr string
	}{
		{
			in:   "BOOT_IMAGE=/vmlinuz root=LABEL=root rootfstype=ext4 rootflags=noatime rw init=/bin/sh rootwait rootdelay=2 earlyinit.debug earlyinit.timeout=7",
			want: Settings{Root: "LABEL=root", RootFSType: "ext4", RootFlags: "noatime", Init: "/bin/sh", RootWait: true, RootDelay: 2 * time.Second, Debug: true, Timeout: 7 * time.Second},
		},
		{
			in:   "root=UUID=0b7c ro earlyinit=disabled earlyinit.timeout=1500ms",
			want: Settings{Root: "UUID=0b7c", ReadOnly: true, Disabled: true, Timeout: 1500 * time.Millisecond},
		},
		{
			in:   "root=/dev/vda",
			want: Settings{Root: "/dev/vda", ReadOnly: true, Timeout: DefaultTimeout},
		},
		{
			in:      "root=/dev/vda earlyinit.timeout=soon",
			want:    Settings{Root: "/dev/vda", ReadOnly: true, Timeout: DefaultTimeout},
			wantErr: `earlyinit.timeout="soon"`,
		},
		{
			in:      "root=/dev/vda rootdelay=-1 earlyinit=maybe",
			want:    Settings{Root: "/dev/vda", ReadOnly: true, Timeout: DefaultTimeout},
			wantErr: `rootdelay="-1"`,
		},
	} {
		got, errs := ParseCmdline(tt.in)
		got.Params = nil
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCmdline(%q) =\n %+v, want\n %+v", tt.in, got, tt.want)
		}
		if tt.wantErr == "" && len(errs) > 0 {
			t.Errorf("ParseCmdline(%q): unexpected errors %v", tt.in, errs)
		}
		if tt.wantErr != "" && (len(errs) == 0 || !strings.Contains(errs[0].Error(), tt.wantErr)) {
			t.Errorf("ParseCmdline(%q): errors %v, want one containing %q", tt.in, errs, tt.wantErr)
		}
	}
}

// TestParseCmdlineOptions covers each of earlyinit's own options: the
// values it takes, the malformed ones (one error naming the key, default
// kept) and the unknown keys (one error naming the key, not its value).
func TestParseCmdlineOptions(t *testing.T) {
	def := Settings{ReadOnly: true, Timeout: DefaultTimeout}
	with := func(f func(c *Settings)) Settings {
		c := def
		f(&c)
		return c
	}
	for _, tt := range []struct {
		in      string
		want    Settings
		wantErr string // "" for none; else the one error contains it
		notErr  string // and does not contain this
	}{
		// earlyinit=
		{in: "earlyinit=disabled", want: with(func(c *Settings) { c.Disabled = true })},
		{in: "earlyinit=off", want: with(func(c *Settings) { c.Disabled = true })},
		{in: "earlyinit=0", want: with(func(c *Settings) { c.Disabled = true })},
		{in: "earlyinit=disabled earlyinit=enabled", want: def},
		{in: "earlyinit=on", want: def},
		{in: "earlyinit=1", want: def},
		{in: "earlyinit=maybe", want: def, wantErr: `earlyinit="maybe": want disabled or enabled (default kept)`},
		{in: "earlyinit", want: def, wantErr: `earlyinit="": want disabled or enabled`},
		{in: "earlyinit=disabled earlyinit=maybe", want: with(func(c *Settings) { c.Disabled = true }), wantErr: `earlyinit="maybe"`},

		// Booleans: a bare key is true; 0/1, yes/no, true/false, on/off in any case.
		{in: "earlyinit.debug", want: with(func(c *Settings) { c.Debug = true })},
		{in: "earlyinit.debug=", want: with(func(c *Settings) { c.Debug = true })},
		{in: "earlyinit.debug=1", want: with(func(c *Settings) { c.Debug = true })},
		{in: "earlyinit.debug=yes", want: with(func(c *Settings) { c.Debug = true })},
		{in: "earlyinit.debug=TRUE", want: with(func(c *Settings) { c.Debug = true })},
		{in: "earlyinit.debug=on", want: with(func(c *Settings) { c.Debug = true })},
		{in: "earlyinit.debug=0", want: def},
		{in: "earlyinit.debug=no", want: def},
		{in: "earlyinit.debug=false", want: def},
		{in: "earlyinit.debug=Off", want: def},
		{in: "earlyinit.debug earlyinit.debug=0", want: def},
		{in: "earlyinit.debug=2", want: def, wantErr: `earlyinit.debug="2": want 0/1, yes/no, true/false or on/off (default kept)`},
		{in: "earlyinit.debug earlyinit.debug=y", want: with(func(c *Settings) { c.Debug = true }), wantErr: `earlyinit.debug="y"`},
		{in: "earlyinit.keepnet", want: with(func(c *Settings) { c.KeepNet = true })},
		{in: "earlyinit.keepnet=1", want: with(func(c *Settings) { c.KeepNet = true })},
		{in: "earlyinit.keepnet=yes", want: with(func(c *Settings) { c.KeepNet = true })},
		{in: "earlyinit.keepnet=true", want: with(func(c *Settings) { c.KeepNet = true })},
		{in: "earlyinit.keepnet=on", want: with(func(c *Settings) { c.KeepNet = true })},
		{in: "earlyinit.keepnet=0", want: def},
		{in: "earlyinit.keepnet=no", want: def},
		{in: "earlyinit.keepnet=false", want: def},
		{in: "earlyinit.keepnet=off", want: def},
		{in: "earlyinit.keepnet=sometimes", want: def, wantErr: `earlyinit.keepnet="sometimes": want 0/1`},

		// earlyinit.growpart: a boolean like earlyinit.debug, true by default.
		{in: "earlyinit.growpart=0", want: with(func(c *Settings) { c.NoGrow = true })},
		{in: "earlyinit.growpart=off", want: with(func(c *Settings) { c.NoGrow = true })},
		{in: "earlyinit.growpart=no", want: with(func(c *Settings) { c.NoGrow = true })},
		{in: "earlyinit.growpart=False", want: with(func(c *Settings) { c.NoGrow = true })},
		{in: "earlyinit.growpart", want: def},
		{in: "earlyinit.growpart=1", want: def},
		{in: "earlyinit.growpart=on", want: def},
		{in: "earlyinit.growpart=0 earlyinit.growpart=yes", want: def},
		{in: "earlyinit.growpart=never", want: def, wantErr: `earlyinit.growpart="never": want 0/1, yes/no, true/false or on/off (default kept)`},
		{in: "earlyinit.growpart=0 earlyinit.growpart=x", want: with(func(c *Settings) { c.NoGrow = true }), wantErr: `earlyinit.growpart="x"`},

		// earlyinit.timeout=
		{in: "earlyinit.timeout=10", want: with(func(c *Settings) { c.Timeout = 10 * time.Second })},
		{in: "earlyinit.timeout=0.5", want: with(func(c *Settings) { c.Timeout = 500 * time.Millisecond })},
		{in: "earlyinit.timeout=2m", want: with(func(c *Settings) { c.Timeout = 2 * time.Minute })},
		{in: "earlyinit.timeout=86400", want: with(func(c *Settings) { c.Timeout = 24 * time.Hour })},
		{in: "earlyinit.timeout", want: def, wantErr: `earlyinit.timeout=""`},
		{in: "earlyinit.timeout=0", want: def, wantErr: `earlyinit.timeout="0"`},
		{in: "earlyinit.timeout=-5s", want: def, wantErr: `earlyinit.timeout="-5s"`},
		{in: "earlyinit.timeout=86401", want: def, wantErr: `earlyinit.timeout="86401"`},
		{in: "earlyinit.timeout=25h", want: def, wantErr: `earlyinit.timeout="25h"`},
		{in: "earlyinit.timeout=NaN", want: def, wantErr: `earlyinit.timeout="NaN"`},

		// earlyinit.ds=: the names are DatasourceOrder's to check.
		{in: "earlyinit.ds=configdrive,ec2", want: with(func(c *Settings) { c.Datasources = "configdrive,ec2" })},
		{in: "earlyinit.ds", want: def, wantErr: `earlyinit.ds="": want datasource names`},
		{in: "earlyinit.ds=", want: def, wantErr: `earlyinit.ds="": want datasource names`},
		{in: "earlyinit.ds=,", want: def, wantErr: `earlyinit.ds=",": want datasource names`},

		// earlyinit.metadata_url=: never echoed, it may hold a password.
		{in: "earlyinit.metadata_url=http://10.0.2.2:8080/", want: with(func(c *Settings) { c.MetadataURL = "http://10.0.2.2:8080/" })},
		{in: "earlyinit.metadata_url=http://[fe80::a9fe:a9fe%25eth0]", want: with(func(c *Settings) { c.MetadataURL = "http://[fe80::a9fe:a9fe%25eth0]" })},
		{in: "earlyinit.metadata_url=https://169.254.169.254", want: def, wantErr: `earlyinit.metadata_url: https is not supported in the initramfs`},
		{in: "earlyinit.metadata_url=169.254.169.254", want: def, wantErr: `earlyinit.metadata_url: want an http:// URL`},
		{in: "earlyinit.metadata_url=file:///etc/shadow", want: def, wantErr: `earlyinit.metadata_url: want`},
		{in: "earlyinit.metadata_url=http://", want: def, wantErr: `earlyinit.metadata_url: want`},
		{in: "earlyinit.metadata_url", want: def, wantErr: `earlyinit.metadata_url: want`},
		{in: "earlyinit.metadata_url=http://admin:hunter2@10.0.2.2/", want: def, wantErr: `earlyinit.metadata_url: want`, notErr: "hunter2"},
		{in: "earlyinit.metadata_url=http://10.0.2.2/?token=s3cret", want: def, wantErr: `earlyinit.metadata_url: want`, notErr: "s3cret"},

		// earlyinit.renderer=
		{in: "earlyinit.renderer=networkd", want: with(func(c *Settings) { c.Renderer = "networkd" })},
		{in: "earlyinit.renderer=network-manager", want: with(func(c *Settings) { c.Renderer = "network-manager" })},
		{in: "earlyinit.renderer=netowrkd", want: def, wantErr: `earlyinit.renderer="netowrkd": want one of eni, sysconfig, netplan, network-manager, networkd (default kept)`},
		{in: "earlyinit.renderer", want: def, wantErr: `earlyinit.renderer="": want one of`},

		// earlyinit.test_panic= belongs to test builds; no build warns.
		{in: "earlyinit.test_panic=network,datasource", want: def},

		// Unknown keys: named, their value not echoed.
		{in: "earlyinit.dbug", want: def, wantErr: `unknown option "earlyinit.dbug" ignored (known: earlyinit, earlyinit.debug, earlyinit.ds,`},
		{in: "earlyinit.password=hunter2", want: def, wantErr: `unknown option "earlyinit.password"`, notErr: "hunter2"},
		{in: "earlyinit.KeepNet", want: def, wantErr: `unknown option "earlyinit.KeepNet"`},
		{in: "earlyinit.", want: def, wantErr: `unknown option "earlyinit."`},
		{in: "earlyinit.x\x1b[2J", want: def, wantErr: `unknown option "earlyinit.x\x1b[2J"`},
		// Not earlyinit's: kept in Params for other readers, no error.
		{in: "earlyinit_debug earlyinitx=1", want: def},

		// rootdelay=
		{in: "rootdelay=5", want: with(func(c *Settings) { c.RootDelay = 5 * time.Second })},
		{in: "rootdelay=x", want: def, wantErr: `rootdelay="x"`},
		{in: "rootdelay=-1", want: def, wantErr: `rootdelay="-1"`},
		{in: "rootdelay=9999999999999", want: def, wantErr: `rootdelay="9999999999999": want a whole number of seconds, at most 86400`},
	} {
		got, errs := ParseCmdline(tt.in)
		got.Params = nil
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCmdline(%q) =\n %+v, want\n %+v", tt.in, got, tt.want)
		}
		switch {
		case tt.wantErr == "" && len(errs) > 0:
			t.Errorf("ParseCmdline(%q): unexpected errors %v", tt.in, errs)
		case tt.wantErr != "" && len(errs) != 1:
			t.Errorf("ParseCmdline(%q): errors %v, want exactly one containing %q", tt.in, errs, tt.wantErr)
		case tt.wantErr != "" && !strings.Contains(errs[0].Error(), tt.wantErr):
			t.Errorf("ParseCmdline(%q): error %q, want one containing %q", tt.in, errs[0], tt.wantErr)
		case tt.notErr != "" && strings.Contains(errs[0].Error(), tt.notErr):
			t.Errorf("ParseCmdline(%q): error %q shows %q", tt.in, errs[0], tt.notErr)
		}
		for _, e := range errs {
			if strings.ContainsAny(e.Error(), "\n\x1b") {
				t.Errorf("ParseCmdline(%q): error %q has a control character", tt.in, e)
			}
		}
	}
}

// TestParseCmdlineParams: Params keeps the words of other programs, and
// none of earlyinit's own, so no step can read an option by its presence.
func TestParseCmdlineParams(t *testing.T) {
	c, errs := ParseCmdline(`quiet ds="nocloud;s=/seed/" earlyinit.keepnet=0 earlyinit.ds=ec2 earlyinit=enabled console=ttyS0 console=tty0`)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	want := map[string]string{"quiet": "", "ds": "nocloud;s=/seed/", "console": "tty0"}
	if !reflect.DeepEqual(c.Params, want) {
		t.Errorf("Params = %q, want %q", c.Params, want)
	}
	if c.KeepNet {
		t.Errorf("earlyinit.keepnet=0: KeepNet is true")
	}
}

func FuzzParseCmdline(f *testing.F) {
	f.Add(`root=LABEL=x "a=b c" -- init args`)
	f.Add("earlyinit.timeout=1e300 rootdelay=99999999999999999999")
	f.Add("earlyinit.timeout=NaN earlyinit.keepnet=2 earlyinit.nope=x")
	f.Fuzz(func(t *testing.T, s string) {
		c, _ := ParseCmdline(s)
		if c.Timeout <= 0 || c.Timeout > maxTimeout || c.RootDelay < 0 || c.RootDelay > maxTimeout {
			t.Fatalf("timeout %v, rootdelay %v from %q", c.Timeout, c.RootDelay, s)
		}
	})
}
