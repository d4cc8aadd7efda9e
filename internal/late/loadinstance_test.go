package late

import (
	"reflect"
	"testing"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/instance/cache"
)

// TestLoadInstanceMeta: the datasource's metadata the boot step cached
// (instance-data.json's ds.meta_data) comes back as Data.Meta, so that
// disk_setup finds EC2's block-device-mapping; secrets stay redacted, as
// the 0644 file has them. Metadata of another instance is not taken.
func TestLoadInstanceMeta(t *testing.T) {
	f := newFixture(t)
	bdm := map[string]any{"ami": "sda1", "ephemeral0": "sdb", "root": "/dev/sda1"}
	d := &instance.Data{Datasource: "ec2", DatasourceClass: "Ec2", InstanceID: "i-0abc", LocalHostname: "ip-10-0-0-5",
		Meta: map[string]any{"block-device-mapping": bdm, "instance-id": "i-0abc", "password": "s3cret"}}
	if err := cache.New(f.root).Store(d, cache.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	got, probs, err := loadInstance(f.root)
	if err != nil || len(probs) != 0 {
		t.Fatalf("loadInstance: %v, %q", err, probs)
	}
	if !reflect.DeepEqual(got.Meta["block-device-mapping"], bdm) || got.Meta["instance-id"] != "i-0abc" {
		t.Errorf("Meta %v, want the block-device-mapping %v and the instance-id", got.Meta, bdm)
	}
	if p := got.Meta["password"]; p == "s3cret" || p == nil {
		t.Errorf("Meta password %v, want it redacted", p)
	}

	// instance-data.json of an older instance: its metadata is not this
	// instance's.
	d.InstanceID = "i-0new"
	if err := cache.New(f.root).Store(d, cache.StoreOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.root.WriteFile("/var/lib/earlyinit/data/instance-id", []byte("i-0other\n"), 0o644, 0, 0); err != nil {
		t.Fatal(err)
	}
	got, _, err = loadInstance(f.root)
	if err != nil {
		t.Fatal(err)
	}
	if got.Meta != nil {
		t.Errorf("Meta %v from another instance's instance-data.json", got.Meta)
	}
}
