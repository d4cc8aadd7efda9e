package zstack

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/ec2/ec2test"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
)

func TestPlatform(t *testing.T) {
	for _, tt := range []struct {
		name string
		info dmi.Info
		want bool
	}{
		// cloud-init's tests/unittests/test_ds_identify.py "Ec2-ZStack".
		{"ds-identify Ec2-ZStack", dmi.Info{ChassisAssetTag: "123456.zstack.io"}, true},
		{"upper case (cloud-init lower-cases the tag)", dmi.Info{ChassisAssetTag: "123456.ZSTACK.IO"}, true},
		{"zstack.io alone", dmi.Info{ChassisAssetTag: "zstack.io"}, false},
		{"suffix not at the end", dmi.Info{ChassisAssetTag: "123456.zstack.io.example.com"}, false},
		{"OpenStack Nova", dmi.Info{SysVendor: "OpenStack Foundation", ProductName: "OpenStack Nova", ChassisAssetTag: "OpenStack Nova"}, false},
		{"plain QEMU", dmi.Info{SysVendor: "QEMU", ProductName: "Standard PC (i440FX + PIIX, 1996)"}, false},
		{"no DMI", dmi.Info{}, false},
	} {
		if got := Platform(tt.info); got != tt.want {
			t.Errorf("%s: Platform(%+v) = %v, want %v", tt.name, tt.info, got, tt.want)
		}
	}
}

func svc(base string) datasource.Service {
	return datasource.Service{Base: base, HTTP: &httpget.Getter{RequestTimeout: 300 * time.Millisecond, Backoff: time.Millisecond}}
}

func TestRead(t *testing.T) {
	ud := "#cloud-config\npassword: never-logged\n"
	s := &ec2test.Service{
		Version:  "2009-04-04",
		Versions: "1.0\n2007-01-19\n2009-04-04\nlatest\n",
		Tree: map[string]string{
			"instance-id":               "3c4b3d4ef1b44a2f9ee0b8d0f1a0c1d2",
			"local-hostname":            "vm-zstack-1",
			"public-keys/":              "0=zstack",
			"public-keys/0/openssh-key": "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIZStack key@zstack\n",
		},
		UserData: &ud,
	}
	d, err := Read(context.Background(), svc(ec2test.Serve(t, s)))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if d.InstanceID != "3c4b3d4ef1b44a2f9ee0b8d0f1a0c1d2" || d.LocalHostname != "vm-zstack-1" || string(d.UserData) != ud {
		t.Errorf("Read = %+v", d)
	}
	if len(d.PublicKeys) != 1 || !strings.HasPrefix(d.PublicKeys[0], "ssh-ed25519 ") {
		t.Errorf("PublicKeys = %q", d.PublicKeys)
	}
	if d.CloudName != "zstack" || d.Platform != "ec2" {
		t.Errorf("cloud %q platform %q, want zstack ec2", d.CloudName, d.Platform)
	}
	if n := s.Hits("PUT /latest/api/token"); n != 0 {
		t.Errorf("%d token PUTs: cloud-init asks ZStack for none", n)
	}
}

func TestReadErrors(t *testing.T) {
	// A port nothing listens on: ZStack without user-data.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()

	noID := &ec2test.Service{Version: "2009-04-04", Versions: "2009-04-04\n", Tree: map[string]string{"local-hostname": "h"}}
	for _, tt := range []struct {
		name, base string
		want       []string
		hint       bool
	}{
		{"no service", closed, []string{"zstack: ", closed}, true},
		{"404 everywhere", ec2test.Serve(t, &ec2test.Service{}), []string{"zstack: ", "HTTP 404"}, true},
		{"no instance-id", ec2test.Serve(t, noID), []string{"zstack: ", "instance-id", "missing"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := Read(context.Background(), svc(tt.base))
			if err == nil {
				t.Fatalf("Read = %+v, want an error", d)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if got := strings.Contains(err.Error(), "user-data set"); got != tt.hint {
				t.Errorf("error %q: user-data hint %v, want %v", err, got, tt.hint)
			}
		})
	}
}

func TestSource(t *testing.T) {
	if Source.Name != "zstack" || Source.Class != "Ec2" || Source.Metadata == nil || Source.Platform == nil || Source.ReadFS != nil {
		t.Errorf("Source = %+v", Source)
	}
}
