package nocloud

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/oracle"
)

// nocloudOracle runs cloud-init's DataSourceNoCloud._get_data on a
// machine with the given kernel command line and DMI system serial and
// nothing else (no seed directory, no drive), and reports whether it
// claims the instance, with its instance-id, local-hostname and seed.
const nocloudOracle = `
from unittest import mock
from cloudinit import dmi, helpers, util
from cloudinit.sources import DataSourceNoCloud as NC
out = []
for c in json.load(sys.stdin):
    with mock.patch.object(util, "get_cmdline", return_value=c["cmdline"]), \
         mock.patch.object(dmi, "read_dmi_data", return_value=c["serial"]), \
         mock.patch.object(util, "find_devs_with", return_value=[]):
        paths = helpers.Paths({"cloud_dir": "/nonexistent", "run_dir": "/nonexistent"})
        ds = NC.DataSourceNoCloud(sys_cfg={}, distro=None, paths=paths)
        ds.seed_dirs = []
        ok = ds._get_data()
        md = ds.metadata or {}
        out.append({"ok": bool(ok), "iid": md.get("instance-id"), "host": md.get("local-hostname"), "seed": ds.seed})
json.dump(out, sys.stdout)
`

// TestCmdlineAloneMatchesCloudInit: ds=nocloud (or nocloud-net) on the
// kernel command line or in the DMI serial, with no seed and nothing
// else, is a NoCloud instance in cloud-init: instance-id i= or
// "nocloud", local-hostname h=, found by "cmdline" or "dmi". Alone and
// Apply give the same.
func TestCmdlineAloneMatchesCloudInit(t *testing.T) {
	type tc struct {
		Cmdline string `json:"cmdline"`
		Serial  string `json:"serial"`
	}
	cases := []tc{
		{"root=/dev/vda1 ds=nocloud;i=iid-1;h=host1", ""},
		{"ds=nocloud", ""},
		{"ds=nocloud-net;h=nethost", ""},
		{"ds=nocloud;i=iid-2;", ""},
		{"ro", "ds=nocloud;i=iid-serial;h=serialhost"},
		{"root=/dev/vda1", ""},
	}
	var want []struct {
		OK   bool    `json:"ok"`
		IID  *string `json:"iid"`
		Host *string `json:"host"`
		Seed *string `json:"seed"`
	}
	oracle.Run(t, nocloudOracle, cases, &want)
	for i, c := range cases {
		words := c.Cmdline
		from := "cmdline"
		if c.Serial != "" {
			words, from = c.Serial, "dmi"
		}
		var hint Cmdline
		found := false
		for _, w := range strings.Fields(words) {
			if v, ok := strings.CutPrefix(w, "ds="); ok {
				h, isNC, err := ParseCmdline(v)
				if err != nil {
					t.Fatal(err)
				}
				hint, found = h, isNC
			}
		}
		if found != want[i].OK {
			t.Errorf("%+v: found %v, cloud-init %v", c, found, want[i].OK)
			continue
		}
		if !found {
			continue
		}
		d := hint.alone()
		hint.Apply(d)
		host := d.LocalHostname
		if d.InstanceID != deref(want[i].IID) || host != deref(want[i].Host) || deref(want[i].Seed) != from {
			t.Errorf("%+v: instance %q host %q from %q; cloud-init %q %q %q", c, d.InstanceID, host, from, deref(want[i].IID), deref(want[i].Host), deref(want[i].Seed))
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
