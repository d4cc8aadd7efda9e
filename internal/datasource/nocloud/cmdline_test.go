package nocloud

import (
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/instance"
)

func TestParseCmdline(t *testing.T) {
	for _, tt := range []struct {
		in      string
		want    Cmdline
		ok      bool
		wantErr string
	}{
		{in: "nocloud", ok: true},
		{in: "nocloud-net", want: Cmdline{Net: true}, ok: true},
		{in: "nocloud;", ok: true},
		{in: "nocloud;s=file:///seed/;h=myhost", want: Cmdline{Seed: "file:///seed/", Hostname: "myhost"}, ok: true},
		{in: "nocloud-net;s=http://10.0.0.1:8000/;i=iid-01", want: Cmdline{Seed: "http://10.0.0.1:8000/", InstanceID: "iid-01", Net: true}, ok: true},
		{in: "nocloud;seedfrom=/var/seed/;instance-id=i-2;local-hostname=h2", want: Cmdline{Seed: "/var/seed/", InstanceID: "i-2", Hostname: "h2"}, ok: true},
		{in: "nocloud;;i=a=b;;", want: Cmdline{InstanceID: "a=b"}, ok: true},
		{in: "nocloud;dsmode=local;h=x", want: Cmdline{Hostname: "x"}, ok: true},
		{in: `"nocloud;h=quoted"`, want: Cmdline{Hostname: "quoted"}, ok: true},
		{in: "nocloud;i=a;i=b", want: Cmdline{InstanceID: "b"}, ok: true},
		{in: "configdrive"},
		{in: "nocloudx;s=/x"},
		{in: "NoCloud"},
		{in: ""},
		{in: "ec2;nocloud"},
		{in: "nocloud;s", ok: true, wantErr: "s= has no value"},
		{in: "nocloud;h=", ok: true, wantErr: "h= has no value"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, ok, err := ParseCmdline(tt.in)
			if ok != tt.ok {
				t.Errorf("ok = %v, want %v", ok, tt.ok)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("ParseCmdline = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestSeedPath(t *testing.T) {
	for _, tt := range []struct {
		seed, want, wantErr string
	}{
		{seed: "file:///var/lib/cloud/seed/nocloud/", want: "/var/lib/cloud/seed/nocloud"},
		{seed: "file:///seed", want: "/seed"},
		{seed: "file://localhost/seed/", want: "/seed"},
		{seed: "file:///my%20seed/", want: "/my seed"},
		{seed: "/seed/", want: "/seed"},
		{seed: "/seed/../other//", want: "/other"},
		{seed: "FILE:///x/", want: "/x"},
		{seed: "", wantErr: "no s= seed"},
		{seed: "http://10.0.0.1/", wantErr: "network seeds"},
		{seed: "https://example.com/seed/", wantErr: "network seeds"},
		{seed: "file://host/seed/", wantErr: `names host "host"`},
		{seed: "file:seed", wantErr: "absolute path"},
		{seed: "seed/", wantErr: "unsupported seed"},
		{seed: "ftp://x/", wantErr: "unsupported seed"},
		{seed: "file://%zz/", wantErr: "s=file://%zz/"},
	} {
		t.Run(tt.seed, func(t *testing.T) {
			got, err := Cmdline{Seed: tt.seed}.SeedPath()
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("SeedPath = %q, %v; want error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("SeedPath = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestApply(t *testing.T) {
	d := &instance.Data{InstanceID: "from-seed", LocalHostname: "seed-host", Meta: map[string]any{"instance-id": "from-seed", "x": 1}}
	Cmdline{InstanceID: "from-cmdline"}.Apply(d)
	want := &instance.Data{InstanceID: "from-cmdline", LocalHostname: "seed-host", Meta: map[string]any{"instance-id": "from-cmdline", "x": 1}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("Apply(i=) = %+v, want %+v", d, want)
	}

	d = &instance.Data{InstanceID: "a"}
	Cmdline{Hostname: "h"}.Apply(d)
	want = &instance.Data{InstanceID: "a", LocalHostname: "h", Meta: map[string]any{"local-hostname": "h"}}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("Apply(h=) = %+v, want %+v", d, want)
	}

	d = &instance.Data{InstanceID: "a", LocalHostname: "b"}
	Cmdline{Seed: "/x"}.Apply(d)
	if want := (&instance.Data{InstanceID: "a", LocalHostname: "b"}); !reflect.DeepEqual(d, want) {
		t.Errorf("Apply(s= only) = %+v, want it unchanged", d)
	}
	Cmdline{InstanceID: "x"}.Apply(nil) // must not panic
}

// TestCmdlineOverSeed is the whole ds=nocloud;s=...;i=... flow over a seed.
func TestCmdlineOverSeed(t *testing.T) {
	c, ok, err := ParseCmdline("nocloud;s=file:///seed/;i=iid-cmdline")
	if err != nil || !ok {
		t.Fatalf("ParseCmdline: %v, %v", ok, err)
	}
	if p, err := c.SeedPath(); err != nil || p != "/seed" {
		t.Fatalf("SeedPath = %q, %v", p, err)
	}
	d, err := Read(seed("instance-id: iid-seed\nlocal-hostname: seeded\n"))
	if err != nil {
		t.Fatal(err)
	}
	c.Apply(d)
	if d.InstanceID != "iid-cmdline" || d.LocalHostname != "seeded" || d.Meta["instance-id"] != "iid-cmdline" {
		t.Errorf("after Apply: %+v", d)
	}
}
