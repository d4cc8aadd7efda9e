package vmware

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// A VMware VM whose guestinfo has no metadata, user-data or vendor-data:
// cloud-init 22.4's DataSourceVMware finds nothing (get_data is False, so
// the search goes on to the next source and None), its vmware-rpctool
// answering every key as the real tool does for a key never set. earlyinit's
// Read says the same with ErrNoData, which is datasource.ErrAbsent: not a
// rejected source (discover.TestLocalSource: None follows).
func TestNoGuestinfoIsAbsentAsCloudInit(t *testing.T) {
	tool := filepath.Join(t.TempDir(), "vmware-rpctool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho 'No value found' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	var found bool
	oracle.Run(t, `
import tempfile
from cloudinit import dmi, distros, helpers
from cloudinit.sources import DataSourceVMware as dsv
a = json.load(sys.stdin)
dmi.read_dmi_data = lambda f: "VMware7,1" if f == "system-product-name" else None
tmp = tempfile.mkdtemp()
paths = helpers.Paths({"cloud_dir": tmp, "run_dir": tmp})
ds = dsv.DataSourceVMware({}, distros.fetch("debian")("debian", {}, paths), paths)
ds.vmware_rpctool = a["tool"]
print(json.dumps(bool(ds.get_data())))
`, map[string]string{"tool": tool}, &found)
	if found {
		t.Fatalf("cloud-init's DataSourceVMware found data in an empty guestinfo: the premise of this test is wrong")
	}
	_, err := (&Reader{GuestInfo: &keys{m: map[string]string{}}}).Read(context.Background())
	if !errors.Is(err, ErrNoData) || !errors.Is(err, datasource.ErrAbsent) {
		t.Errorf("Read on an empty guestinfo = %v, want ErrNoData, which is datasource.ErrAbsent", err)
	}
}
