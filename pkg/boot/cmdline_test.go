package boot

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
		want    Cmdline
		wantErr string
	}{
		{
			in:   "BOOT_IMAGE=/vmlinuz root=LABEL=root rootfstype=ext4 rootflags=noatime rw init=/bin/sh rootwait rootdelay=2 earlyinit.debug earlyinit.timeout=7",
			want: Cmdline{Root: "LABEL=root", RootFSType: "ext4", RootFlags: "noatime", Init: "/bin/sh", RootWait: true, RootDelay: 2 * time.Second, Debug: true, Timeout: 7 * time.Second},
		},
		{
			in:   "root=UUID=0b7c ro earlyinit=disabled earlyinit.timeout=1500ms",
			want: Cmdline{Root: "UUID=0b7c", ReadOnly: true, Disabled: true, Timeout: 1500 * time.Millisecond},
		},
		{
			in:   "root=/dev/vda",
			want: Cmdline{Root: "/dev/vda", ReadOnly: true, Timeout: DefaultTimeout},
		},
		{
			in:      "root=/dev/vda earlyinit.timeout=soon",
			want:    Cmdline{Root: "/dev/vda", ReadOnly: true, Timeout: DefaultTimeout},
			wantErr: `earlyinit.timeout="soon"`,
		},
		{
			in:      "root=/dev/vda rootdelay=-1 earlyinit=maybe",
			want:    Cmdline{Root: "/dev/vda", ReadOnly: true, Timeout: DefaultTimeout},
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

func FuzzParseCmdline(f *testing.F) {
	f.Add(`root=LABEL=x "a=b c" -- init args`)
	f.Add("earlyinit.timeout=1e300 rootdelay=99999999999999999999")
	f.Fuzz(func(t *testing.T, s string) {
		c, _ := ParseCmdline(s)
		if c.Timeout <= 0 {
			t.Fatalf("timeout %v from %q", c.Timeout, s)
		}
	})
}
