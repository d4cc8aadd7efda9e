package main

import (
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The figures are read from what the guest printed: these are its formats
// (systemd 252, cloud-init 22.4.2).

func TestParseUnits(t *testing.T) {
	in := `Id=cloud-init-local.service
InactiveExitTimestampMonotonic=4120345
ActiveEnterTimestampMonotonic=9870001

Id=cloud-init.service
InactiveExitTimestampMonotonic=10000000
ActiveEnterTimestampMonotonic=31500000

Id=earlyinit-boot.service
InactiveExitTimestampMonotonic=0
ActiveEnterTimestampMonotonic=0

Id=ssh.service
InactiveExitTimestampMonotonic=32000000
ActiveEnterTimestampMonotonic=33250000
`
	got := parseUnits(in)
	want := map[string]span{
		"cloud-init-local.service": {4.120345, 9.870001},
		"cloud-init.service":       {10, 31.5},
		"ssh.service":              {32, 33.25},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	p := &provisioned{units: got}
	if toProv, all := p.shares(true); toProv != 5.749656+21.5 || all != toProv {
		t.Errorf("cloud-init shares %v %v", toProv, all)
	}
	p = &provisioned{units: map[string]span{"earlyinit-boot.service": {3, 4.5}, "earlyinit-final.service": {20, 21}}, initramfs: 0.5}
	if toProv, all := p.shares(false); toProv != 2 || all != 3 {
		t.Errorf("earlyinit shares %v %v", toProv, all)
	}
}

const ciShow = `-- Boot Record 01 --
The total time elapsed since completing an event is printed after the "@" character.
The time the event takes is printed after the "+" character.

Starting stage: init-local
|` + "`" + `->no cache found @00.00500s +00.00100s
|` + "`" + `->found local data from DataSourceNoCloud @00.21900s +00.49200s
Finished stage: (init-local) 00.79400 seconds

Starting stage: init-network
|` + "`" + `->config-users-groups ran successfully @03.40000s +01.20000s
|` + "`" + `->config-ssh ran successfully @04.60000s +12.30000s
Finished stage: (init-network) 15.10000 seconds

Starting stage: modules-config
Finished stage: (modules-config) 01.00000 seconds

Starting stage: modules-final
|` + "`" + `->config-scripts-user ran successfully @40.00000s +00.30000s
Finished stage: (modules-final) 00.30600 seconds

Total Time: 17.20000 seconds

1 boot records analyzed
`

const ciBlame = `-- Boot Record 01 --
     12.30000s (init-network/config-ssh)
     01.20000s (init-network/config-users-groups)
     00.49200s (init-local/search-NoCloud)

1 boot records analyzed
`

func TestParseCloudInitAnalyze(t *testing.T) {
	stages, total := parseCloudInitShow(ciShow)
	want := []stageTime{{"init-local", 0.794}, {"init-network", 15.1}, {"modules-config", 1}, {"modules-final", 0.306}}
	if !reflect.DeepEqual(stages, want) || total != 17.2 {
		t.Errorf("show: %v %v", stages, total)
	}
	// Two boot records: the last is this boot's.
	stages, total = parseCloudInitShow(strings.Replace(ciShow, "Total Time: 17.2", "Total Time: 99.2", 1) + "\n" + ciShow)
	if len(stages) != 4 || total != 17.2 {
		t.Errorf("two records: %v %v", stages, total)
	}
	blame := parseCloudInitBlame(ciBlame)
	if blame["init-network/config-ssh"] != 12.3 || blame["init-local/search-NoCloud"] != 0.492 || len(blame) != 3 {
		t.Errorf("blame %v", blame)
	}
}

func TestEarlyinitVariants(t *testing.T) {
	vs, err := earlyinitVariants([]string{"build/initramfs.img", "after=/tmp/a.img"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 2 || vs[0].name != "B earlyinit" || vs[0].initrd != "build/initramfs.img" || vs[1].name != "C earlyinit after" || vs[1].initrd != "/tmp/a.img" || !vs[1].disabled {
		t.Errorf("%+v %+v", vs[0], vs[1])
	}
	for _, bad := range []string{"", "x=", "a b=/x"} {
		if _, err := earlyinitVariants([]string{bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestProbeScripts: the guest's scripts are complete and valid sh, and the
// probe's listening test finds port 22 listening, not connected.
func TestProbeScripts(t *testing.T) {
	files, wants := probeFiles()
	if !reflect.DeepEqual(wants, []string{"bench-provisioned.service"}) {
		t.Errorf("wants %q", wants)
	}
	for _, f := range []string{"usr/local/sbin/bench-provisioned", "usr/local/sbin/bench-analyze"} {
		s := files[f]
		for _, placeholder := range []string{"KEY", "AWK", "POLL", "MAX", "LOG", "UNITS"} {
			if strings.Contains(s, placeholder) {
				t.Errorf("%s: %s left:\n%s", f, placeholder, s)
			}
		}
		if b, err := exec.Command("sh", "-n", "-c", s).CombinedOutput(); err != nil {
			t.Errorf("%s: sh -n: %v %s", f, err, b)
		}
	}
	if !strings.Contains(files["usr/local/sbin/bench-provisioned"], "key='"+aliceKey+"'") {
		t.Error("probe lacks alice's key")
	}
	const header = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	for _, tc := range []struct {
		lines string
		want  bool
	}{
		{"   0: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 12345 1\n", true},
		// sshd on IPv6 only.
		{"   0: 00000000000000000000000000000000:0016 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1\n", true},
		// A connection to someone's port 22, and a listener on 2222 (08AE).
		{"   0: 3200000A:C350 0100000A:0016 01 00000000:00000000 00:00000000 00000000     0        0 1 1\n   1: 00000000:08AE 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1\n", false},
		{"", false},
	} {
		cmd := exec.Command("awk", listenAwk)
		cmd.Stdin = strings.NewReader(header + tc.lines)
		if err := cmd.Run(); (err == nil) != tc.want {
			t.Errorf("listening %v for\n%s", err == nil, tc.lines)
		}
	}
}

// TestHostAccounting: the CPU time this process burns shows in its own
// count and in the host's.
func TestHostAccounting(t *testing.T) {
	own0, ok := procTicks(os.Getpid())
	host0 := hostBusyTicks()
	if !ok || host0 == 0 {
		t.Fatalf("procTicks %v, hostBusyTicks %d", ok, host0)
	}
	for t0 := time.Now(); time.Since(t0) < 300*time.Millisecond; {
	}
	own1, _ := procTicks(os.Getpid())
	host1 := hostBusyTicks()
	if own1-own0 < 10 || host1-host0 < own1-own0-5 {
		t.Errorf("burnt 0.3 s: own %d ticks, host %d", own1-own0, host1-host0)
	}
	if pid := findQEMU("/nonexistent/run.img"); pid != 0 {
		t.Errorf("findQEMU found %d", pid)
	}
}
