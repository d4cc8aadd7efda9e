package none

import "testing"

// TestData: the None instance is cloud-init's: its instance id, no
// user-data, keys, host name or network configuration; each call a fresh
// value, so a caller's changes do not leak into the next boot step.
func TestData(t *testing.T) {
	d := Data()
	if d.InstanceID != "iid-datasource-none" || d.Datasource != "none" || d.DatasourceClass != "None" || d.Subplatform != "config" {
		t.Errorf("Data() = %+v", d)
	}
	if d.UserData != nil || d.VendorData != nil || d.PublicKeys != nil || d.LocalHostname != "" || d.Network != nil {
		t.Errorf("Data() carries instance data: %+v", d)
	}
	d.Meta["x"] = 1
	d.InstanceID = "changed"
	if e := Data(); e.InstanceID != InstanceID || len(e.Meta) != 0 {
		t.Errorf("Data() shares state between calls: %+v", e)
	}
}
