package ccfg_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
)

// TestPhoneHomePost: post is "all", a string as a list of one, or a list
// of names; a value of another kind is the module's error, not Decode's.
func TestPhoneHomePost(t *testing.T) {
	for _, tt := range []struct {
		post any
		want []string
		err  string
	}{
		{post: "all", want: ccfg.PhoneHomeAll},
		{post: " fqdn", want: []string{" fqdn"}},
		{post: []any{" fqdn ", 5, "all"}, want: []string{"fqdn", "5", "all"}},
		{post: []any{}, want: []string{}},
		{post: nil},
		{post: 5, err: "phone_home.post: want a string or a list of strings, got a number"},
		{post: []any{"fqdn", nil}, err: "phone_home.post.1: want a string, got null"},
		{post: map[string]any{}, err: "phone_home.post: want a string or a list of strings, got a map"},
	} {
		ph, ok, err := ccfg.Decode[ccfg.PhoneHome](map[string]any{"phone_home": map[string]any{"post": tt.post}}, "phone_home")
		if !ok || err != nil {
			t.Errorf("%v: %v %v", tt.post, ok, err)
			continue
		}
		gotErr := ""
		if ph.Post.Err != nil {
			gotErr = ph.Post.Err.Error()
		}
		if !reflect.DeepEqual(ph.Post.Names, tt.want) || gotErr != tt.err {
			t.Errorf("%v: got %q %q, want %q %q", tt.post, ph.Post.Names, gotErr, tt.want, tt.err)
		}
	}
}

// triesOracle is cc_phone_home's reading of tries: int(), or 10 where
// int() raises.
const triesOracle = `
from cloudinit import util
out = []
for doc in json.load(sys.stdin):
    try:
        out.append(int(util.load_yaml(doc)["k"]))
    except (ValueError, TypeError):
        out.append(10)
json.dump(out, sys.stdout)
`

// TestPhoneHomeTriesAsCloudInit: phone_home.tries is int() of the value,
// 10 (with a warning) where int() raises.
func TestPhoneHomeTriesAsCloudInit(t *testing.T) {
	values := []string{"3", "'3'", "' 3 '", "2.7", "-1", "0", "1_000", "abc", "''", "[]", "{}", "~", "true", "'1_000'"}
	// Where the reading is ccfg.Int's, not int()'s (TestDecodeAsCloudInit).
	differences := map[string]string{"true": "a boolean is no integer", "'1_000'": "no underscores in a string of digits"}
	d := newDifferences(t, differences)
	oracleValues(t, triesOracle, values, func(v string, x any, _ bool, want int) {
		ph, _, err := ccfg.Decode[ccfg.PhoneHome](map[string]any{"phone_home": map[string]any{"tries": x}}, "phone_home")
		if err != nil {
			t.Errorf("%s: %v", v, err)
			return
		}
		got := 10
		if ph.Tries.Given && ph.Tries.Err == nil {
			got = ph.Tries.N
		}
		d.check(v, "", got == want, fmt.Sprint(got, " ", ph.Tries.Err), want)
	})
	d.done()
}

// TestPowerState: delay is shutdown's time argument, timeout float() of
// the value (TestPowerStateAsCloudInit holds both to cloud-init's
// load_power_state).
func TestPowerState(t *testing.T) {
	for _, tt := range []struct {
		delay any
		want  ccfg.PowerDelay
		err   string
	}{
		{delay: "now", want: "now"}, {delay: " now ", want: "now"}, {delay: nil, want: ""},
		{delay: 5, want: "+5"}, {delay: "+5", want: "+5"}, {delay: 1.9, want: "+1"}, {delay: true, want: "+1"},
		{delay: -1, err: `power_state.delay "-1": want "now" or +minutes`},
		{delay: "soon", err: `power_state.delay "soon": want "now" or +minutes`},
	} {
		ps, _, err := ccfg.Decode[ccfg.PowerState](map[string]any{"power_state": map[string]any{"mode": "reboot", "delay": tt.delay}}, "power_state")
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("delay %v: got %v, want the error %q", tt.delay, err, tt.err)
			}
			continue
		}
		if err != nil || ps.Delay != tt.want {
			t.Errorf("delay %v: got %q %v, want %q", tt.delay, ps.Delay, err, tt.want)
		}
	}
	for raw, want := range map[any]float64{30: 30, "2.5": 2.5, 0.5: 0.5} {
		ps, _, err := ccfg.Decode[ccfg.PowerState](map[string]any{"power_state": map[string]any{"timeout": raw}}, "power_state")
		if err != nil || ps.Timeout == nil || *ps.Timeout != want {
			t.Errorf("timeout %v: got %v %v, want %v", raw, ps.Timeout, err, want)
		}
	}
	if ps, _, err := ccfg.Decode[ccfg.PowerState](map[string]any{"power_state": map[string]any{"timeout": nil}}, "power_state"); err != nil || ps.Timeout != nil {
		t.Errorf("timeout null: got %v %v, want not given", ps.Timeout, err)
	}
	if s := ccfg.Schemas()["power_state"].Props["timeout"]; !reflect.DeepEqual(s.Types, []string{"integer"}) {
		t.Errorf("timeout's schema: %+v, want an integer, as 22.4's", s)
	}
}

// TestWriteFiles: an entry that cannot be read is its own error, the
// others read; a write_files that is not a list is Decode's error.
func TestWriteFiles(t *testing.T) {
	files, ok, err := ccfg.Decode[ccfg.WriteFiles](map[string]any{"write_files": []any{
		map[string]any{"path": "/a"}, "x", map[string]any{"path": "/b", "append": []any{}}, nil, map[string]any{"path": "/c", "defer": true},
	}}, "write_files")
	if !ok || err != nil || len(files) != 5 {
		t.Fatalf("got %d entries %v %v", len(files), ok, err)
	}
	var got []string
	for _, f := range files {
		if f.Err != nil {
			got = append(got, f.Err.Error())
		} else {
			got = append(got, fmt.Sprint(f.Path, " ", f.Owner, " ", f.Defer))
		}
	}
	want := []string{"/a root:root false", "write_files.1: want a map, got a string", "/b root:root false", "write_files.3: want a map, got null", "/c root:root true"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if _, _, err := ccfg.Decode[ccfg.WriteFiles](map[string]any{"write_files": "x"}, "write_files"); err == nil || err.Error() != "write_files: want a list, got a string" {
		t.Errorf("a string: %v", err)
	}
}

// TestVendorData: a vendor_data that is not a map has no prefix, as
// util.get_cfg_by_path reads it; disabled_handlers never fails the
// reading (TestVendorScriptsAsCloudInit holds the prefix to
// cc_scripts_vendor's).
func TestVendorData(t *testing.T) {
	for _, tt := range []struct {
		vd       any
		prefix   []string
		handlers []string
		err      string
	}{
		{vd: []any{"a"}},
		{vd: "prefix"},
		{vd: map[string]any{"prefix": "/usr/bin/env"}, prefix: []string{"/usr/bin/env"}},
		{vd: map[string]any{"prefix": ""}, prefix: []string{""}},
		{vd: map[string]any{"prefix": []any{"env", 1, " X=1 "}}, prefix: []string{"env", "1", " X=1 "}},
		{vd: map[string]any{"prefix": []any{}}},
		{vd: map[string]any{"prefix": nil, "disabled_handlers": map[string]any{"a": "b"}}},
		{vd: map[string]any{"disabled_handlers": "text/x-shellscript"}, handlers: []string{"text/x-shellscript"}},
		{vd: map[string]any{"disabled_handlers": []any{"text/cloud-config", 5, nil}}, handlers: []string{"text/cloud-config"}},
		{vd: map[string]any{"prefix": []any{"", "x"}}, err: "vendor_data.prefix: the command is empty"},
		{vd: map[string]any{"prefix": 7}, err: "vendor_data.prefix: want a string or a list, got a number"},
		{vd: map[string]any{"prefix": []any{"env", []any{}}}, err: "vendor_data.prefix.1: want a string, got a list"},
	} {
		vd, ok, err := ccfg.Decode[*ccfg.VendorData](map[string]any{"vendor_data": tt.vd}, "vendor_data")
		if tt.err != "" {
			if err == nil || err.Error() != tt.err {
				t.Errorf("%v: got %v, want the error %q", tt.vd, err, tt.err)
			}
			continue
		}
		if !ok || err != nil || vd == nil || fmt.Sprintf("%q", vd.Prefix) != fmt.Sprintf("%q", tt.prefix) || fmt.Sprintf("%q", vd.DisabledHandlers) != fmt.Sprintf("%q", tt.handlers) {
			t.Errorf("%v: got %+v %v %v, want prefix %q handlers %q", tt.vd, vd, ok, err, tt.prefix, tt.handlers)
		}
	}
}

// etcHostsOracle is cc_update_etc_hosts' reading of manage_etc_hosts:
// "template", "localhost" or "" (nothing done).
const etcHostsOracle = `
from cloudinit import util
out = []
for doc in json.load(sys.stdin):
    m = util.get_cfg_option_str(util.load_yaml(doc), "k", False)
    if util.translate_bool(m, addons=["template"]):
        out.append("template")
    elif m == "localhost":
        out.append("localhost")
    else:
        out.append("")
json.dump(out, sys.stdout)
`

// TestEtcHostsAsCloudInit: manage_etc_hosts does what cloud-init's
// cc_update_etc_hosts does with it, but where earlyinit refuses a value
// cloud-init ignores, or reads y as true.
func TestEtcHostsAsCloudInit(t *testing.T) {
	values := []string{"true", "false", "'true'", "'yes'", "'on'", "'1'", "' True '", "'template'", "'localhost'",
		"'false'", "'no'", "'off'", "'0'", "~", "'y'", "'n'", "'maybe'", "''", "1", "[]", "'Localhost'"}
	differences := map[string]string{
		"'y'":         "y is true",
		"'maybe'":     "refused: neither true, false nor localhost",
		"''":          "refused: neither true, false nor localhost",
		"'Localhost'": "refused: neither true, false nor localhost",
		"1":           "refused: a number",
		"[]":          "refused: a list",
	}
	d := newDifferences(t, differences)
	oracleValues(t, etcHostsOracle, values, func(v string, x any, _ bool, want string) {
		m, _, err := ccfg.Decode[ccfg.EtcHosts](map[string]any{"manage_etc_hosts": x}, "manage_etc_hosts")
		d.check(v, "", err == nil && string(m) == want, fmt.Sprintf("%q %v", m, err), want)
	})
	d.done()
}

// localeOracle is cc_locale's reading of locale: its str()
// (get_cfg_option_str), null for off (util.is_false).
const localeOracle = `
from cloudinit import util
out = []
for doc in json.load(sys.stdin):
    l = util.get_cfg_option_str(util.load_yaml(doc), "k")
    out.append(None if util.is_false(l) else l)
json.dump(out, sys.stdout)
`

// TestLocaleAsCloudInit: locale is read as a string (str() of a scalar),
// and what util.is_false takes does nothing ("locale: false").
func TestLocaleAsCloudInit(t *testing.T) {
	values := []string{"false", "true", "off", "'no'", "' FALSE '", "0", "1", "0.0", "en_US.UTF-8", "' C '", "n", "~", "[]"}
	differences := map[string]string{
		"n":  "n is false",
		"~":  "null is the key not given: nothing done",
		"[]": "refused: a list",
	}
	d := newDifferences(t, differences)
	oracleValues(t, localeOracle, values, func(v string, x any, _ bool, want *string) {
		l, ok, err := ccfg.Decode[string](map[string]any{"locale": x}, "locale")
		var got *string
		if ok && !ccfg.IsFalse(l) {
			got = &l
		}
		agree := err == nil && (got != nil) == (want != nil) && (got == nil || *got == *want)
		d.check(v, "", agree, fmt.Sprint(got, " ", err), want)
	})
	d.done()
}

// TestRsyslog: the legacy list of configs is read as configs, Legacy
// set; a config is a string or {content, filename}; remotes are strings;
// the reload command is nil for auto, sh -c for a string, an argv.
func TestRsyslog(t *testing.T) {
	decode := func(raw any) (*ccfg.Rsyslog, error) {
		rc, _, err := ccfg.Decode[*ccfg.Rsyslog](map[string]any{"rsyslog": raw}, "rsyslog")
		return rc, err
	}
	rc, err := decode([]any{"a", map[string]any{"content": "b", "filename": 5}, map[string]any{"filename": "c"}})
	if err != nil || !rc.Legacy || rc.ConfigDir != "/etc/rsyslog.d" || len(rc.Configs) != 3 ||
		rc.Configs[0].Content != "a" || rc.Configs[0].Filename != nil ||
		rc.Configs[1].Content != "b" || rc.Configs[1].Filename == nil || *rc.Configs[1].Filename != "5" || !rc.Configs[2].NoContent {
		t.Errorf("legacy: %+v %v", rc, err)
	}
	rc, err = decode(map[string]any{"remotes": map[string]any{"a": "1.2.3.4", "b": nil}, "service_reload_command": "auto"})
	if err != nil || rc.Legacy || rc.Remotes["a"] != "1.2.3.4" || rc.Remotes["b"] != "" || rc.ServiceReloadCommand != nil {
		t.Errorf("map: %+v %v", rc, err)
	}
	for raw, want := range map[string][]string{"echo hi": {"sh", "-c", "echo hi"}} {
		rc, err := decode(map[string]any{"service_reload_command": raw})
		if err != nil || !reflect.DeepEqual([]string(rc.ServiceReloadCommand), want) {
			t.Errorf("reload %q: %q %v", raw, rc.ServiceReloadCommand, err)
		}
	}
	for _, tt := range []struct {
		raw any
		err string
	}{
		{map[string]any{"configs": []any{map[string]any{"content": nil}}}, "rsyslog.configs.0.content: want a string, got null"},
		{map[string]any{"configs": []any{5}}, "rsyslog.configs.0: want a string or a map, got a number"},
		{map[string]any{"remotes": map[string]any{"a": 5}}, "rsyslog.remotes.a: want a string, got a number"},
		{map[string]any{"service_reload_command": []any{}}, "rsyslog.service_reload_command: empty"},
		{map[string]any{"service_reload_command": []any{"a", 5}}, "rsyslog.service_reload_command.1: want a string, got a number"},
		{map[string]any{"service_reload_command": 5}, "rsyslog.service_reload_command: want a string or a list, got a number"},
		{"x", "rsyslog: want a map, got a string"},
	} {
		if _, err := decode(tt.raw); err == nil || err.Error() != tt.err {
			t.Errorf("%v: got %v, want %q", tt.raw, err, tt.err)
		}
	}
}
