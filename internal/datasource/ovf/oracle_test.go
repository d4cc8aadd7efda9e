package ovf

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/earlyinit/earlyinit/internal/oracle"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// custCases are the cust.cfg files the oracle reads too: the recorded ones
// and, written here, the broken ones cloud-init's ConfigFile refuses.
func custCases(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("testdata/imc/*.cfg")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/imc/*.cfg: %v", err)
	}
	out := map[string]string{}
	for _, f := range files {
		out[filepath.Base(f)] = f
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"dup-section.cfg":    "[NETWORK]\nHOSTNAME = a\n[NETWORK]\nDOMAINNAME = b\n",
		"dup-option.cfg":     "[NETWORK]\nHOSTNAME = a\nHOSTNAME = b\n",
		"no-section.cfg":     "HOSTNAME = a\n[NETWORK]\n",
		"no-delimiter.cfg":   "[NETWORK]\nHOSTNAME\n",
		"bad-percent.cfg":    "[PASSWORD]\n-PASS = 50%off\n",
		"missing-interp.cfg": "[NETWORK]\nHOSTNAME = %(nothere)s\n",
		"empty-name.cfg":     "[NETWORK]\n= value\n",
		"header-junk.cfg":    "[NETWORK] trailing\nHOSTNAME = h\n[a]b]\nx = 1\n",
		"crlf.cfg":           "[NETWORK]\r\nHOSTNAME = crlf\r\nDOMAINNAME = example.org\r\n",
		"no-nics.cfg":        "[NETWORK]\nHOSTNAME = lonely\n",
		"nic-no-mac.cfg":     "[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nBOOTPROTO = dhcp\n",
		"two-primary.cfg":    "[NIC-CONFIG]\nNICS = NIC1,NIC2\n[NIC1]\nMACADDR = 00:50:56:00:00:01\nPRIMARY = yes\n[NIC2]\nMACADDR = 00:50:56:00:00:02\nPRIMARY = true\n",
		"dns-gap.cfg":        "[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:00:00:01\n[DNS]\nNAMESERVER|1 = 192.0.2.1\nNAMESERVER|3 = 192.0.2.3\n",
		"bad-yesno.cfg":      "[PASSWORD]\nRESET = maybe\n[MISC]\nPOST-GC-STATUS = sure\nDEFAULT-RUN-POST-CUST-SCRIPT = Yes\n",
		"prefix-mask.cfg":    "[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:00:00:01\nBOOTPROTO = static\nIPADDR = 10.0.0.5\nNETMASK = 24\n",
		"default-only.cfg":   "[DEFAULT]\nONBOOT = yes\n[NIC-CONFIG]\nNICS = NIC1\n[NIC1]\nMACADDR = 00:50:56:00:00:09\nBOOTPROTO = dhcp\n",
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		out[name] = p
	}
	return out
}

// oracleAnswer is one value or the name of the exception cloud-init
// raised for it.
type oracleAnswer struct {
	V     any    `json:"v"`
	Error string `json:"error"`
}

const custOracle = `
from cloudinit.sources.helpers.vmware.imc.config_file import ConfigFile
from cloudinit.sources.helpers.vmware.imc.config import Config
from cloudinit.sources.DataSourceOVF import get_network_config_from_conf, read_vmware_imc
def attempt(f):
    try:
        return {"v": f()}
    except Exception as e:
        return {"error": type(e).__name__}
out = {}
for name, path in json.load(sys.stdin).items():
    try:
        cf = ConfigFile(path)
    except Exception as e:
        out[name] = {"parse": type(e).__name__}
        continue
    c = Config(cf)
    r = {"keys": dict(cf)}
    for a in ("host_name", "domain_name", "timezone", "admin_password", "name_servers",
              "dns_suffixes", "reset_password", "marker_id", "custom_script_name",
              "post_gc_status", "default_run_post_script", "meta_data_name", "user_data_name"):
        r[a] = attempt(lambda: getattr(c, a))
    r["network"] = attempt(lambda: get_network_config_from_conf(c, False))
    r["md"] = attempt(lambda: read_vmware_imc(c)[0])
    r["cfg"] = attempt(lambda: read_vmware_imc(c)[2])
    out[name] = r
print(json.dumps(out))
`

// TestCustConfigOracle: cust.cfg files read by ParseCustConfig and the
// accessors, and turned into network configuration, against cloud-init
// 22.4's ConfigFile, Config and get_network_config_from_conf on the same
// files (NICs named by their sections, cloud-init's use_system_devices
// off): the same keys and values, the same accessors' answers, the same
// network configuration version 1, and an error wherever cloud-init
// raises.
func TestCustConfigOracle(t *testing.T) {
	cases := custCases(t)
	var raw map[string]map[string]json.RawMessage
	oracle.Run(t, custOracle, cases, &raw)
	for name, path := range cases {
		t.Run(name, func(t *testing.T) {
			r, ok := raw[name]
			if !ok {
				t.Fatalf("the oracle did not answer for %s", name)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := ParseCustConfig(name, b)
			if p, ok := r["parse"]; ok {
				if err == nil {
					t.Fatalf("cloud-init refuses it (%s), ParseCustConfig read %v", p, cfg.Keys())
				}
				t.Logf("refused as cloud-init refuses it (%s): %v", p, err)
				return
			}
			if err != nil {
				t.Fatalf("ParseCustConfig: %v", err)
			}
			var keys map[string]string
			mustJSON(t, r["keys"], &keys)
			if !reflect.DeepEqual(map[string]string(cfg), keys) {
				t.Errorf("keys:\n got %v\nwant %v", map[string]string(cfg), keys)
			}
			opt := func(key string) func() (any, error) {
				return func() (any, error) {
					if v, ok := cfg.get(key); ok {
						return v, nil
					}
					return nil, nil
				}
			}
			wrap := func(f func() (bool, error)) func() (any, error) {
				return func() (any, error) { return f() }
			}
			list := func(f func() ([]string, error)) func() (any, error) {
				return func() (any, error) {
					l, err := f()
					if err != nil {
						return nil, err
					}
					return strAny(l), nil
				}
			}
			for _, a := range []struct {
				name string
				got  func() (any, error)
			}{
				{"host_name", opt(keyHostname)},
				{"domain_name", opt(keyDomain)},
				{"timezone", opt(keyTimezone)},
				{"admin_password", opt(keyPassword)},
				{"marker_id", opt(keyMarker)},
				{"custom_script_name", opt(keyCustomScript)},
				{"meta_data_name", opt(keyMetadata)},
				{"user_data_name", opt(keyUserdata)},
				{"name_servers", list(cfg.NameServers)},
				{"dns_suffixes", list(cfg.DNSSuffixes)},
				{"reset_password", wrap(cfg.ResetPassword)},
				{"post_gc_status", wrap(cfg.PostGCStatus)},
				{"default_run_post_script", wrap(cfg.DefaultRunPostScript)},
				{"network", func() (any, error) {
					nics, err := cfg.NICs()
					if err != nil {
						return nil, err
					}
					names := map[string]string{}
					for _, n := range nics {
						names[n.MAC] = n.Name
					}
					nc, err := cfg.NetworkConfig(names)
					if err != nil {
						return nil, err
					}
					return jsonRound(t, nc), nil
				}},
				{"md", func() (any, error) {
					md := map[string]any{"instance-id": imcInstanceID}
					if h := cfg.HostName(); h != "" {
						if d := cfg.DomainName(); d != "" {
							h += "." + d
						}
						md["local-hostname"] = h
					}
					return md, nil
				}},
				{"cfg", func() (any, error) {
					m := map[string]any{}
					if tz := cfg.Timezone(); tz != "" {
						m["timezone"] = tz
					}
					return m, nil
				}},
			} {
				var w oracleAnswer
				mustJSON(t, r[a.name], &w)
				got, err := a.got()
				switch {
				case w.Error != "" && err == nil:
					t.Errorf("%s: cloud-init raises %s, got %v", a.name, w.Error, got)
				case w.Error == "" && err != nil:
					t.Errorf("%s: %v, cloud-init gives %v", a.name, err, w.V)
				case w.Error == "" && !reflect.DeepEqual(jsonRound(t, got), jsonRound(t, w.V)):
					t.Errorf("%s:\n got %s\nwant %s", a.name, mustMarshal(t, got), mustMarshal(t, w.V))
				}
			}
		})
	}
}

func mustJSON(t *testing.T, b json.RawMessage, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("oracle answer %s: %v", b, err)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// jsonRound is v as JSON decodes it (numbers as float64).
func jsonRound(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal([]byte(mustMarshal(t, v)), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

const envOracle = `
import base64
from cloudinit.sources.DataSourceOVF import read_ovf_environment
out = {}
for name, doc in json.load(sys.stdin).items():
    try:
        md, ud, cfg = read_ovf_environment(doc, True)
    except Exception as e:
        out[name] = {"error": type(e).__name__}
        continue
    out[name] = {"md": md, "cfg": cfg,
                 "ud": None if ud is None else base64.b64encode(ud).decode()}
print(json.dumps(out))
`

// envCases are the ovf-env.xml documents of testdata/ovfenv and broken
// ones.
func envCases(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("testdata/ovfenv/*.xml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/ovfenv/*.xml: %v", err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = string(b)
	}
	const ns = `xmlns:oe="http://schemas.dmtf.org/ovf/environment/1"`
	for name, doc := range map[string]string{
		"not-environment": `<Other ` + ns + `><PropertySection/></Other>`,
		"no-section":      `<Environment ` + ns + `><PlatformSection/></Environment>`,
		"empty":           `<Environment ` + ns + `/>`,
		"no-value":        `<Environment ` + ns + `><PropertySection><Property oe:key="hostname"/></PropertySection></Environment>`,
		"unprefixed-attr": `<Environment ` + ns + `><PropertySection><Property key="hostname" value="x"/></PropertySection></Environment>`,
		"broken-xml":      `<Environment ` + ns + `><PropertySection>`,
		"b64-userdata-padding": `<Environment ` + ns + `><PropertySection>` +
			`<Property oe:key="user-data" oe:value="aGVsbG8=  =garbage"/>` +
			`<Property oe:key="instance-id" oe:value=""/>` +
			`</PropertySection></Environment>`,
		"network-no-network-key": `<Environment ` + ns + `><PropertySection>` +
			`<Property oe:key="network-config" oe:value="` + base64.StdEncoding.EncodeToString([]byte("version: 2\n")) + `"/>` +
			`</PropertySection></Environment>`,
	} {
		out[name] = doc
	}
	return out
}

// TestEnvOracle: ovf-env.xml documents read by ReadEnv against cloud-init
// 22.4's read_ovf_environment(contents, read_network=True): the same
// meta-data (instance-id, local-hostname from hostname, public-keys,
// seedfrom, network-config's network), user-data bytes and password, and
// an error wherever cloud-init raises.
func TestEnvOracle(t *testing.T) {
	cases := envCases(t)
	var want map[string]struct {
		Error string         `json:"error"`
		MD    map[string]any `json:"md"`
		CFG   map[string]any `json:"cfg"`
		UD    *string        `json:"ud"`
	}
	oracle.Run(t, envOracle, cases, &want)
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			w := want[name]
			e, err := ReadEnv([]byte(cases[name]), true)
			if w.Error != "" {
				if err == nil {
					t.Fatalf("cloud-init raises %s, ReadEnv read %+v", w.Error, e)
				}
				t.Logf("refused as cloud-init refuses it (%s): %v", w.Error, err)
				return
			}
			if err != nil {
				t.Fatalf("ReadEnv: %v", err)
			}
			if got := jsonRound(t, e.Meta); !reflect.DeepEqual(got, jsonRound(t, w.MD)) {
				t.Errorf("meta-data:\n got %s\nwant %s", mustMarshal(t, got), mustMarshal(t, w.MD))
			}
			var gotUD *string
			if e.UserData != nil {
				s := base64.StdEncoding.EncodeToString(e.UserData)
				gotUD = &s
			}
			if !reflect.DeepEqual(gotUD, w.UD) {
				t.Errorf("user-data: got %v, want %v", deref(gotUD), deref(w.UD))
			}
			pw, ok := w.CFG["password"]
			if ok != e.HasPassword || (ok && pw != e.Password) {
				t.Errorf("password: got set=%v, cloud-init's cfg has it: %v (values not shown)", e.HasPassword, ok)
			}
			if nc, _ := w.MD["network-config"].(map[string]any); nc != nil {
				got, err := userdata.LoadYAML(e.Network)
				if err != nil {
					t.Fatalf("network: %v", err)
				}
				if !reflect.DeepEqual(jsonRound(t, got), jsonRound(t, nc)) {
					t.Errorf("network:\n got %s\nwant %s", mustMarshal(t, got), mustMarshal(t, nc))
				}
			} else if e.Network != nil {
				t.Errorf("network: got %s, cloud-init has none", e.Network)
			}
		})
	}
}

func deref(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

// TestPyBase64Oracle: pyB64Decode against Python's base64.b64decode.
func TestPyBase64Oracle(t *testing.T) {
	in := []string{
		"", "aGVsbG8=", "aGVsbG8", "aGVsbA==", "aGVsbA", "aGVs\nbG8=", "a", "ab", "abc", "abcd",
		"ab=c", "ab==cd", "a=b=c=d", "#cloud-config\nruncmd: []\n", "aGVsbG8=  =garbage",
		"c2VjcmV0Cg==", "c2VjcmV0Cg", "!!!!", "ab\x00cd", "=abc", "abc=d", "héllo", "aGk=aGk=",
	}
	var want []struct {
		V     *string `json:"v"`
		Error string  `json:"error"`
	}
	oracle.Run(t, `
import base64
out = []
for s in json.load(sys.stdin):
    try:
        out.append({"v": base64.b64encode(base64.b64decode(s)).decode()})
    except Exception as e:
        out.append({"error": type(e).__name__})
print(json.dumps(out))
`, in, &want)
	for i, s := range in {
		got, err := pyB64Decode(s)
		switch {
		case want[i].Error != "" && err == nil:
			t.Errorf("%q: Python raises %s, got %q", s, want[i].Error, got)
		case want[i].Error == "" && err != nil:
			t.Errorf("%q: %v, Python decodes it", s, err)
		case want[i].Error == "" && base64.StdEncoding.EncodeToString(got) != *want[i].V:
			t.Errorf("%q: got %q, Python %s", s, got, *want[i].V)
		}
	}
}
