package ovf

import (
	"errors"
	"testing"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// A VMware VM with neither a guest customization (the image's default
// disable_vmware_customization: true) nor an OVF environment (no
// guestinfo.ovfEnv, no OVF ISO): cloud-init 22.4's DataSourceOVF finds
// nothing ("There was no OVF transports found": get_data is False), so the
// search goes on to None. earlyinit's ErrNoData is datasource.ErrAbsent:
// nothing there, not a rejected source (discover.TestLocalSource). The
// oracle's two transports are made to find nothing rather than probe this
// machine's devices; with one of them answering, get_data is True.
func TestNoDataIsAbsentAsCloudInit(t *testing.T) {
	var got []bool
	oracle.Run(t, `
import tempfile
from cloudinit import dmi, distros, helpers
from cloudinit.sources import DataSourceOVF as dso
env = '<?xml version="1.0"?><Environment xmlns="http://schemas.dmtf.org/ovf/environment/1" xmlns:oe="http://schemas.dmtf.org/ovf/environment/1"><PropertySection><Property oe:key="instance-id" oe:value="iid-ovf"/></PropertySection></Environment>'
dmi.read_dmi_data = lambda f: "VMware7,1" if f == "system-product-name" else None
dso.transport_iso9660 = lambda *a, **k: None
out = []
for guestinfo in json.load(sys.stdin):
    dso.transport_vmware_guestinfo = lambda *a, **k: (env if guestinfo else None)
    tmp = tempfile.mkdtemp()
    paths = helpers.Paths({"cloud_dir": tmp, "run_dir": tmp})
    ds = dso.DataSourceOVF({}, distros.fetch("debian")("debian", {}, paths), paths)
    out.append(bool(ds.get_data()))
print(json.dumps(out))
`, []bool{false, true}, &got)
	if len(got) != 2 || got[0] || !got[1] {
		t.Fatalf("cloud-init's DataSourceOVF found data: %v, want [false true] (nothing there, then guestinfo.ovfEnv)", got)
	}
	if !errors.Is(ErrNoData, datasource.ErrAbsent) {
		t.Errorf("ErrNoData is not datasource.ErrAbsent: a VMware VM with nothing would be a rejected source, never None")
	}
}
