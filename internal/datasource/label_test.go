package datasource

import "testing"

// TestLabelNearMiss: wrong-label drives (fault matrix) are told apart from
// unrelated ones, so the boot can say why a near-config-2 drive was not read.
func TestLabelNearMiss(t *testing.T) {
	cfg := []string{"config-2", "CONFIG-2"}
	for _, tt := range []struct {
		label, want string
		ok          bool
	}{
		{"config-2", "", false}, // accepted as is
		{"CONFIG-2", "", false},
		{"Config-2", "config-2", true},
		{"CONFIG_2", "config-2", true},
		{"config-2 ", "config-2", true},
		{"config-3", "", false},
		{"config2", "", false},
		{"root", "", false},
		{"", "", false},
		{"  ", "", false},
	} {
		got, ok := LabelNearMiss(tt.label, cfg)
		if got != tt.want || ok != tt.ok {
			t.Errorf("LabelNearMiss(%q) = %q, %v; want %q, %v", tt.label, got, ok, tt.want, tt.ok)
		}
	}
	if got, ok := LabelNearMiss("CiData", []string{"cidata", "CIDATA"}); !ok || got != "cidata" {
		t.Errorf("LabelNearMiss(CiData) = %q, %v", got, ok)
	}
}
