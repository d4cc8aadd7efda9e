package imagecfg

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/earlyinit/earlyinit/internal/netcfg/render"
)

// LoadRoot reads the image's cloud.cfg.d but not the drop-in earlyinit
// writes there for an installed cloud-init.
func TestLoadRootHidesOwnDropIn(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{
		"etc/cloud/cloud.cfg.d/50-image.cfg": "preserve_hostname: true\n",
		render.CloudInitDropInPath[1:]:       "network: {config: disabled}\n",
	} {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	if c.Raw["preserve_hostname"] != true {
		t.Errorf("the image's drop-in was not read: %v", c.Raw)
	}
	if _, ok := c.Raw["network"]; ok || slices.ContainsFunc(c.Files, func(f string) bool { return filepath.Base(f) == filepath.Base(render.CloudInitDropInPath) }) {
		t.Errorf("earlyinit's own drop-in was read: %v, files %v", c.Raw, c.Files)
	}
}
