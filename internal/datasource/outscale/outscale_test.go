package outscale

import (
	"context"
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
		// cloud-init's tests/unittests/test_ds_identify.py: "Ec2-Outscale"
		// and its two negatives.
		{"ds-identify Ec2-Outscale", dmi.Info{SysVendor: "3DS Outscale", ProductName: "3DS Outscale VM"}, true},
		{"ds-identify negative sysvendor", dmi.Info{SysVendor: "Not 3DS Outscale", ProductName: "3DS Outscale VM"}, false},
		{"ds-identify negative productname", dmi.Info{SysVendor: "3DS Outscale", ProductName: "Not 3DS Outscale VM"}, false},
		{"lower case (cloud-init lower-cases both)", dmi.Info{SysVendor: "3ds outscale", ProductName: "3ds outscale vm"}, true},
		{"vendor only", dmi.Info{SysVendor: "3DS Outscale"}, false},
		{"AWS", dmi.Info{SysVendor: "Amazon EC2", ProductName: "t3.micro"}, false},
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
	s := &ec2test.Service{
		Version:  "2016-09-02",
		Versions: "1.0\n2009-04-04\n2016-09-02\nlatest\n",
		Tree: map[string]string{
			"instance-id":                 "i-3bd2a1c8",
			"local-hostname":              "ip-10-9-8-7.eu-west-2.compute.internal",
			"placement/availability-zone": "eu-west-2a",
			"public-keys/":                "0=outscale-key",
			"public-keys/0/openssh-key":   "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQOutscale key\n",
			// Listed but missing (LP: #1988157): skipped.
			"tags/instance/":     "Name\nosc.fcu.repulse_server",
			"tags/instance/Name": "web",
		},
	}
	d, err := Read(context.Background(), svc(ec2test.Serve(t, s)))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if d.InstanceID != "i-3bd2a1c8" || d.AvailabilityZone != "eu-west-2a" || d.Region != "eu-west-2" || len(d.PublicKeys) != 1 {
		t.Errorf("Read = %+v", d)
	}
	if d.CloudName != "outscale" || d.Platform != "ec2" {
		t.Errorf("cloud %q platform %q, want outscale ec2", d.CloudName, d.Platform)
	}
	if n := s.Hits("PUT /latest/api/token"); n != 0 {
		t.Errorf("%d token PUTs: cloud-init asks Outscale for none", n)
	}
	if s.Hits("GET /2016-09-02/meta-data/tags/instance/osc.fcu.repulse_server") != 1 {
		t.Error("the listed tag was not asked for")
	}
}

func TestReadError(t *testing.T) {
	s := &ec2test.Service{Version: "2016-09-02", Versions: "2016-09-02\n", Tree: map[string]string{"instance-id": "i-1", "local-hostname": "h"},
		Status: map[string]int{"/2016-09-02/meta-data/local-hostname": 403}}
	_, err := Read(context.Background(), svc(ec2test.Serve(t, s)))
	if err == nil || !strings.HasPrefix(err.Error(), "outscale: ") || !strings.Contains(err.Error(), "/2016-09-02/meta-data/local-hostname: HTTP 403") {
		t.Errorf("Read error = %v, want outscale: and the URL with its 403", err)
	}
}
