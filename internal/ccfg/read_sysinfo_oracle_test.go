package ccfg_test

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/oracle"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// sysinfoOracle reads each document (a cloud-config) as cloud-init 22.4's
// code does for the readings ccfg keeps beside Decode's:
//   - wrapper: whether Debian's distro wraps apt-get, with the wrapper's
//     command installed (subp.which mocked): _get_wrapper_prefix of
//     wcfg.get("enabled", "auto") over get_option("apt_get_wrapper");
//     None where that raises (a wrapper that is not a map: earlyinit
//     warns and keeps the default, see core.SystemInfo);
//   - svc: Distro.get_option("rsyslog_svcname"), which reads that key
//     alone, whatever another key of system_info holds;
//   - blacklist: util.get_cfg_option_list of ssh_key_console_blacklist
//     with its default, ["ssh-dss"] (None for no list);
//   - import: cc_ssh_import_id.is_key_in_nested_dict(cfg, "ssh_import_id").
const sysinfoOracle = `
from unittest import mock
from cloudinit import util
from cloudinit.distros import debian
from cloudinit.config import cc_ssh_import_id
out = []
for doc in json.load(sys.stdin):
    cfg = util.load_yaml(doc) or {}
    si = cfg.get("system_info", {}) or {}
    wcfg = si.get("apt_get_wrapper", debian.APT_GET_WRAPPER)
    wrapper = None  # the distro raises: a wrapper that is not a map
    if isinstance(wcfg, dict):
        with mock.patch.object(debian.subp, "which", return_value="/usr/bin/eatmydata"):
            wrapper = debian._get_wrapper_prefix(wcfg.get("command", "eatmydata"), wcfg.get("enabled", "auto")) != []
    svc = si.get("rsyslog_svcname")
    out.append({"wrapper": wrapper, "svc": None if svc is None else str(svc),
                "blacklist": util.get_cfg_option_list(cfg, "ssh_key_console_blacklist", ["ssh-dss"]),
                "import": cc_ssh_import_id.is_key_in_nested_dict(cfg, "ssh_import_id")})
json.dump(out, sys.stdout)
`

// TestSystemInfoAndNullsAsCloudInit holds three readings that Decode alone
// does not give to cloud-init's code: AptGetWrapper's enabled (not given
// is "auto", null is None: no wrapper), SystemInfo's keys each read on
// their own (SystemInfo.Err), and a null told from a key not given
// (ccfg.GivenNull: get_cfg_option_list's [] for null, where a key not
// given is its default; is_key_in_nested_dict finding a null).
func TestSystemInfoAndNullsAsCloudInit(t *testing.T) {
	docs := []string{
		"{}",
		"system_info: {apt_get_wrapper: {}}",
		"system_info: {apt_get_wrapper: {enabled: ~}}",
		"system_info: {apt_get_wrapper: {enabled: true}}",
		"system_info: {apt_get_wrapper: {enabled: false}}",
		"system_info: {apt_get_wrapper: {enabled: AUTO}}",
		"system_info: {apt_get_wrapper: {enabled: 'no'}}",
		"system_info: {rsyslog_svcname: syslog-ng, apt_get_wrapper: 5, package_mirrors: 1}",
		"system_info: {rsyslog_svcname: 5, default_user: {name: [a]}}",
		"ssh_key_console_blacklist: ~",
		"ssh_key_console_blacklist: [ssh-rsa]",
		"ssh_import_id: ~",
		"ssh_import_id: [gh:x]",
	}
	var want []struct {
		Wrapper   *bool    `json:"wrapper"`
		Svc       *string  `json:"svc"`
		Blacklist []string `json:"blacklist"`
		Import    bool     `json:"import"`
	}
	oracle.Run(t, sysinfoOracle, docs, &want)
	for i, doc := range docs {
		raw, err := userdata.LoadYAML([]byte(doc))
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		cfg := raw.(map[string]any)
		si, _, err := ccfg.Decode[*ccfg.SystemInfo](cfg, "system_info")
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if si == nil {
			si = &ccfg.SystemInfo{}
		}
		// The package manager's test (core/pkgmgr.go), the wrapper's
		// command installed: not given, the wrapper is on ("auto").
		enabled := any("auto")
		if si.AptGetWrapper != nil && si.Err("apt_get_wrapper") == nil {
			enabled = si.AptGetWrapper.Enabled
		}
		wrapper := ccfg.IsTrue(enabled) || strings.EqualFold(ccfg.String(enabled), "auto")
		if want[i].Wrapper == nil {
			if si.Err("apt_get_wrapper") == nil {
				t.Errorf("%s: cloud-init raises on apt_get_wrapper, earlyinit read it without an error", doc)
			}
		} else if wrapper != *want[i].Wrapper {
			t.Errorf("%s: wrapper %v, cloud-init %v", doc, wrapper, *want[i].Wrapper)
		}
		var svc *string
		if si.RsyslogSvcname != nil {
			s := ccfg.String(si.RsyslogSvcname)
			svc = &s
		}
		if (svc == nil) != (want[i].Svc == nil) || svc != nil && *svc != *want[i].Svc {
			t.Errorf("%s: rsyslog_svcname %v, cloud-init %v", doc, svc, want[i].Svc)
		}
		bl, given, err := ccfg.Decode[[]string](cfg, "ssh_key_console_blacklist")
		switch {
		case err != nil:
			t.Errorf("%s: %v", doc, err)
		case !given && !ccfg.GivenNull(cfg, "ssh_key_console_blacklist"):
			bl = []string{"ssh-dss"}
		case !given:
			bl = []string{}
		}
		if strings.Join(bl, ",") != strings.Join(want[i].Blacklist, ",") || (bl == nil) != (want[i].Blacklist == nil) {
			t.Errorf("%s: blacklist %q, cloud-init %q", doc, bl, want[i].Blacklist)
		}
		_, given, _ = ccfg.Decode[*ccfg.PyValue](cfg, "ssh_import_id")
		if imp := given || ccfg.GivenNull(cfg, "ssh_import_id"); imp != want[i].Import {
			t.Errorf("%s: ssh_import_id found %v, cloud-init %v", doc, imp, want[i].Import)
		}
	}
}
