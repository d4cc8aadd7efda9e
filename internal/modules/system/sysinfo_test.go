package system

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// TestDistroSetting: core.DistroSetting: a distribution setting of system_info is str() of
// its value; not given, null, or in a system_info that is not a map, it
// is not set (the distribution's default), the last with a warning; a
// wrong other key of system_info does not matter.
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
		// default_user reads as cloud-init's normalize_users_groups does,
		// a name of any kind included: it does not stop the setting.
		{"system_info: {rsyslog_svcname: x, default_user: {name: [a]}}", "x", true, ""},
		// Each setting is read on its own, as cloud-init's get_option.
		{"system_info: {rsyslog_svcname: x, package_mirrors: 5}", "x", true, ""},
		{"system_info: {rsyslog_svcname: x, apt_get_wrapper: 5}", "x", true, ""},
	} {
		te := coretest.NewEnv(t, tc.cfg)
		got, ok := core.DistroSetting(te.Env, "rsyslog", "rsyslog_svcname", func(si *ccfg.SystemInfo) any { return si.RsyslogSvcname })
		if got != tc.want || ok != tc.ok || strings.TrimSpace(te.LogBuf.String()) != tc.log {
			t.Errorf("%s: %q %v, log %q; want %q %v, %q", tc.cfg, got, ok, te.LogBuf.String(), tc.want, tc.ok, tc.log)
		}
	}
}
