package paths

import (
	"path"
	"strings"
	"testing"
)

// TestPaths: every path is absolute and clean, and lives under the
// directory its doc comment says (what is under RunDir moves with /run at
// switch_root; what is under CacheDir goes on `earlyinit clean`).
func TestPaths(t *testing.T) {
	for _, tt := range []struct {
		name, path, under string
	}{
		{"RunDir", RunDir, "/run"},
		{"LateBinary", LateBinary, RunDir},
		{"InstalledBinary", InstalledBinary, "/usr/bin"},
		{"InitrdBinary", InitrdBinary, "/usr/lib/earlyinit"},
		{"RunDisabledFile", RunDisabledFile, RunDir},
		{"InitramfsLogFile", InitramfsLogFile, RunDir},
		{"BootRecordFile", BootRecordFile, RunDir},
		{"DHCPNTPFile", DHCPNTPFile, RunDir},
		{"DisabledFile", DisabledFile, "/etc"},
		{"CacheDir", CacheDir, "/var/lib"},
		{"InstancesDir", InstancesDir, CacheDir},
		{"InstanceLink", InstanceLink, CacheDir},
		{"DataDir", DataDir, CacheDir},
		{"CloudRunDir", CloudRunDir, "/run"},
		{"CloudDir", CloudDir, "/var/lib"},
		{"CloudInstancesDir", CloudInstancesDir, CloudDir},
		{"CloudInstanceLink", CloudInstanceLink, CloudDir},
		{"CloudDataDir", CloudDataDir, CloudDir},
		{"CloudSemDir", CloudSemDir, CloudDir},
	} {
		if !path.IsAbs(tt.path) || path.Clean(tt.path) != tt.path {
			t.Errorf("%s = %q: not absolute and clean", tt.name, tt.path)
		}
		if !strings.HasPrefix(tt.path, tt.under+"/") {
			t.Errorf("%s = %q: not under %s", tt.name, tt.path, tt.under)
		}
	}
}
