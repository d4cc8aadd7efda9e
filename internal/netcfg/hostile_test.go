package netcfg

import (
	"strings"
	"testing"
	"time"
)

// TestParseHostileShapes feeds each parser input shaped to exhaust it (fault
// matrix: JSON or YAML nested 100,000 deep, a YAML alias bomb, 16 MiB of
// ENI): each must return an error or a config, without a panic or a stack
// overflow, within a few seconds.
func TestParseHostileShapes(t *testing.T) {
	deep := 100000
	for _, tt := range []struct {
		name, format, in, want string
	}{
		{"json nested", "network_data.json", `{"links":` + strings.Repeat("[", deep) + strings.Repeat("]", deep) + "}", "exceeded max depth"},
		{"yaml nested lists", "yaml", "network:\n  version: 2\n  ethernets: " + strings.Repeat("[", deep) + strings.Repeat("]", deep), "exceeded max depth"},
		{"yaml nested maps", "yaml", "version: 1\nconfig: " + strings.Repeat("{a: ", deep) + strings.Repeat("}", deep), "exceeded max depth"},
		{"yaml alias bomb", "yaml", aliasBomb(), "expands to more than 65536 nodes"},
		{"eni 16 MiB of stanzas", "eni", strings.Repeat("iface eth0 inet dhcp\n", 16<<20/21), "line 1025: more than 1024 iface stanzas"},
		{"eni 16 MiB of options", "eni", "iface eth0 inet dhcp\n" + strings.Repeat("  dns-search a\n", 16<<20/15), ""},
		{"eni 16 MiB of ignored lines", "eni", "iface eth0 inet dhcp\n" + strings.Repeat("  up x\n", 16<<20/7), ""},
		{"eni 16 MiB continued", "eni", "iface eth0 inet dhcp\n mtu 1 \\\n" + strings.Repeat("x \\\n", 4<<20), ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			c, err := Parse(tt.format, []byte(tt.in), nil)
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
			if tt.want != "" {
				checkErr(t, err, tt.want)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_ = c.Validate()
		})
	}
}
