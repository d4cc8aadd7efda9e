package system

import (
	"fmt"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// TestResolvConfNotAMap: with manage_resolv_conf, a resolv_conf that is
// missing, null or not a map writes nothing, with a warning naming its
// kind; one that cannot be read below is an error.
func TestResolvConfNotAMap(t *testing.T) {
	for _, tc := range []struct{ cfg, err, log string }{
		{"manage_resolv_conf: true", "<nil>", "resolv_conf is null: nothing written"},
		{"manage_resolv_conf: true\nresolv_conf: ~", "<nil>", "resolv_conf is null: nothing written"},
		{"manage_resolv_conf: true\nresolv_conf: [a]", "<nil>", "resolv_conf is a list: nothing written"},
		{"manage_resolv_conf: true\nresolv_conf: x", "<nil>", "resolv_conf is a string: nothing written"},
		{"manage_resolv_conf: true\nresolv_conf: {domain: [a]}", "resolv_conf.domain: want a string, got a list", ""},
	} {
		te := coretest.NewEnv(t, tc.cfg)
		err := te.RunFunc(ResolvConf)
		if fmt.Sprint(err) != tc.err || !strings.Contains(te.LogBuf.String(), tc.log) || te.Root.Exists("/etc/resolv.conf") {
			t.Errorf("%s: error %v, log %q; want %s, %q, no file", tc.cfg, err, te.LogBuf.String(), tc.err, tc.log)
		}
	}
}
