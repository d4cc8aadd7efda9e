package system

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// TestDistroSetting: a distribution setting of system_info is str() of
// its value; not given, null, or in a system_info that cannot be read, it
// is not set (the distribution's default), the last with a warning.
func TestDistroSetting(t *testing.T) {
	for _, tc := range []struct {
		cfg, want string
		ok        bool
		log       string
	}{
		{"system_info: {rsyslog_svcname: syslog-ng}", "syslog-ng", true, ""},
		{"system_info: {rsyslog_svcname: 5}", "5", true, ""},
		{"system_info: {rsyslog_svcname: ~}", "", false, ""},
		{"system_info: {distro: debian}", "", false, ""},
		{"timezone: UTC", "", false, ""},
		{"system_info: ~", "", false, ""},
		{"system_info: [a]", "", false, "rsyslog: system_info: want a map, got a list: system_info ignored"},
		{"system_info: {rsyslog_svcname: x, default_user: {name: [a]}}", "", false, "rsyslog: system_info.default_user.name: want a string, got a list: system_info ignored"},
	} {
		te := coretest.NewEnv(t, tc.cfg)
		got, ok := distroSetting(te.Env, "rsyslog", func(si *ccfg.SystemInfo) any { return si.RsyslogSvcname })
		if got != tc.want || ok != tc.ok || strings.TrimSpace(te.LogBuf.String()) != tc.log {
			t.Errorf("%s: %q %v, log %q; want %q %v, %q", tc.cfg, got, ok, te.LogBuf.String(), tc.want, tc.ok, tc.log)
		}
	}
}
