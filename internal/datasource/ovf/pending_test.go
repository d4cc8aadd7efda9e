package ovf

import (
	"github.com/earlyinit/earlyinit/internal/oracle"
	"testing"
	"testing/fstest"
	"time"
)

// TestPending: a customization may still come only where cloud-init's
// DataSourceOVF would wait for one (customization or raw data allowed,
// the deployPkg plugin found, no cust.cfg yet), for as long as
// get_max_wait_from_cfg says.
func TestPending(t *testing.T) {
	const plugin = "usr/lib/x86_64-linux-gnu/open-vm-tools/plugins/vmsvc/libdeployPkgPlugin.so"
	for _, tt := range []struct {
		name  string
		files map[string]string
		wait  time.Duration
		ok    bool
	}{
		{"raw data allowed by default", map[string]string{plugin: ""}, 15 * time.Second, true},
		{"customization allowed", map[string]string{plugin: "", "etc/cloud/cloud.cfg": "disable_vmware_customization: false\n"}, 15 * time.Second, true},
		{"both disabled", map[string]string{plugin: "", "etc/cloud/cloud.cfg": "datasource: {OVF: {allow_raw_data: false}}\n"}, 0, false},
		{"no plugin", map[string]string{"etc/cloud/cloud.cfg": "disable_vmware_customization: false\n"}, 0, false},
		{"already delivered", map[string]string{plugin: "", "run/vmware-imc/cust.cfg": "[NETWORK]\n"}, 0, false},
		{"max wait", map[string]string{plugin: "", "etc/cloud/cloud.cfg.d/9.cfg": "datasource: {OVF: {vmware_cust_file_max_wait: 40}}\n"}, 40 * time.Second, true},
		{"max wait as a string", map[string]string{plugin: "", "etc/cloud/cloud.cfg.d/9.cfg": "datasource: {OVF: {vmware_cust_file_max_wait: ' 7 '}}\n"}, 7 * time.Second, true},
		{"max wait float, int() truncates", map[string]string{plugin: "", "etc/cloud/cloud.cfg.d/9.cfg": "datasource: {OVF: {vmware_cust_file_max_wait: 2.9}}\n"}, 2 * time.Second, true},
		{"max wait negative: 15", map[string]string{plugin: "", "etc/cloud/cloud.cfg.d/9.cfg": "datasource: {OVF: {vmware_cust_file_max_wait: -3}}\n"}, 15 * time.Second, true},
		{"max wait not a number: 15", map[string]string{plugin: "", "etc/cloud/cloud.cfg.d/9.cfg": "datasource: {OVF: {vmware_cust_file_max_wait: soon}}\n"}, 15 * time.Second, true},
		{"max wait zero", map[string]string{plugin: "", "etc/cloud/cloud.cfg.d/9.cfg": "datasource: {OVF: {vmware_cust_file_max_wait: 0}}\n"}, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, data := range tt.files {
				fsys[name] = &fstest.MapFile{Data: []byte(data), Mode: 0o644}
			}
			wait, ok, err := Pending(fsys)
			if err != nil || ok != tt.ok || wait != tt.wait {
				t.Errorf("Pending = %v, %v, %v; want %v, %v", wait, ok, err, tt.wait, tt.ok)
			}
		})
	}
}

// TestCustWaitOracle: vmware_cust_file_max_wait read as cloud-init
// 22.4's get_max_wait_from_cfg reads it, on the same values.
func TestCustWaitOracle(t *testing.T) {
	values := []any{nil, 0, 7, 40, -3, 2.9, "7", " 7 ", "-2", "soon", "2.5", true, false}
	const script = `
from cloudinit.sources.DataSourceOVF import get_max_wait_from_cfg
out = []
for v in json.load(sys.stdin):
    cfg = {} if v is None else {"vmware_cust_file_max_wait": v}
    try:
        out.append(get_max_wait_from_cfg(cfg))
    except Exception as e:
        out.append(None)
print(json.dumps(out))
`
	var want []*int
	oracle.Run(t, script, values, &want)
	if len(want) != len(values) {
		t.Fatalf("%d answers for %d values", len(want), len(values))
	}
	for i, v := range values {
		ds := map[string]any{}
		if v != nil {
			ds["vmware_cust_file_max_wait"] = v
		}
		got := custWait(ds)
		if want[i] == nil {
			t.Errorf("%#v: cloud-init raises; earlyinit waits %v", v, got)
			continue
		}
		if got != time.Duration(*want[i])*time.Second {
			t.Errorf("%#v: earlyinit waits %v, cloud-init %ds", v, got, *want[i])
		}
	}
}
