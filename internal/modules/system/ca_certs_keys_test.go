package system

import (
	"fmt"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// TestCACertsKeys: ca_certs wins over the deprecated ca-certs when both
// are given, even null (an error: a map is wanted); ca-certs alone is
// read, with a warning.
func TestCACertsKeys(t *testing.T) {
	for _, tc := range []struct{ cfg, err, log string }{
		{"ca_certs: ~\nca-certs: {remove_defaults: false}", "ca_certs: want a map, got null", "both ca_certs and the deprecated ca-certs are set"},
		{"ca-certs: ~", "ca-certs: want a map, got null", "the key ca-certs is deprecated"},
		{"ca-certs: [a]", "ca-certs: want a map, got a list", "the key ca-certs is deprecated"},
		{"ca_certs: [a]\nca-certs: ~", "ca_certs: want a map, got a list", "both ca_certs"},
		{"timezone: UTC", "<nil>", ""},
	} {
		te := coretest.NewEnv(t, tc.cfg)
		err := te.RunFunc(CACerts)
		if fmt.Sprint(err) != tc.err || !strings.Contains(te.LogBuf.String(), tc.log) || tc.log == "" && te.LogBuf.Len() > 0 {
			t.Errorf("%s: error %v, log %q; want %s, %q", tc.cfg, err, te.LogBuf.String(), tc.err, tc.log)
		}
	}
}
