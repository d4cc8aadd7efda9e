package late

import (
	"strings"
	"testing"
)

// TestFinalUnitEnvironment: the final stage, the one that fetches
// (#include, phone_home, ssh_import_id), reads /etc/environment, where an
// image or user-data's write_files puts http_proxy and no_proxy; a missing
// file is no error ("-"). The boot stage, before the network, does not.
func TestFinalUnitEnvironment(t *testing.T) {
	files, _ := Units("/usr/bin/earlyinit")
	boot, final := string(files[0].Data), string(files[1].Data)
	const want = "\nEnvironmentFile=-/etc/environment\n"
	_, service, _ := strings.Cut(final, "\n[Service]\n")
	if !strings.Contains("\n"+service, want) {
		t.Errorf("final unit's [Service] lacks %q:\n%s", strings.TrimSpace(want), final)
	}
	if strings.Contains(boot, "EnvironmentFile") {
		t.Errorf("boot unit reads an environment file:\n%s", boot)
	}
}
