package scripts

import (
	"fmt"
	"slices"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// powerDriver runs cloud-init 22.4's cc_power_state_change.load_power_state
// with its Debian distro on each document: the command (as strings), the
// condition's timeout, or the error's type.
const powerDriver = `
from cloudinit import helpers, util
from cloudinit.config import cc_power_state_change
from cloudinit.distros import debian
d = debian.Distro("debian", {}, helpers.Paths({}))
out = []
for doc in json.load(sys.stdin):
    try:
        args, timeout, cond = cc_power_state_change.load_power_state(util.load_yaml(doc), d)
        out.append({"argv": [str(a) for a in args], "timeout": timeout})
    except Exception as e:
        out.append({"error": type(e).__name__})
print(json.dumps(out))
`

// TestPowerStateAsCloudInit: the shutdown command power_state asks for,
// and its condition's timeout, are cloud-init's load_power_state's, and
// what it refuses is refused.
func TestPowerStateAsCloudInit(t *testing.T) {
	docs := []string{
		"power_state: {mode: poweroff}",
		"power_state: {mode: reboot, delay: now}",
		"power_state: {mode: halt, delay: 5}",
		"power_state: {mode: reboot, delay: '+5'}",
		"power_state: {mode: reboot, delay: '5'}",
		"power_state: {mode: reboot, delay: 1.5}",
		"power_state: {mode: reboot, delay: abc}",
		"power_state: {mode: reboot, message: Bye}",
		"power_state: {mode: reboot, message: ''}",
		"power_state: {mode: reboot, timeout: 10}",
		"power_state: {mode: reboot, timeout: '2.5'}",
		"power_state: {mode: reboot, timeout: abc}",
		"power_state: {mode: reboot, condition: false}",
		"power_state: {mode: reboot, condition: 'test -f /x'}",
		"power_state: {mode: reboot, condition: [test, -f, /x]}",
		"power_state: {mode: reboot, condition: 3}",
		"power_state: {mode: shutdown}",
		"power_state: {delay: 5}",
		"power_state: [reboot]",
		"power_state: {mode: reboot, delay: true}",
		"power_state: {mode: reboot, delay: -1}",
		"power_state: {mode: reboot, delay: '+0'}",
		"power_state: {mode: reboot, delay: 2.9}",
		"power_state: {mode: reboot, delay: false}",
		"power_state: {mode: halt, timeout: 0}",
		"power_state: {mode: halt, timeout: 2.5}",
		"power_state: {mode: halt, timeout: 1e3}",
		"power_state: {mode: halt, timeout: ' 7 '}",
		"power_state: {mode: halt, timeout: [1]}",
	}
	// A negative delay: cloud-init runs shutdown -r +-1, which fails;
	// earlyinit refuses it.
	negative := "power_state: {mode: reboot, delay: -1}"
	var want []struct {
		Argv    []string
		Timeout float64
		Error   string
	}
	oracle.Run(t, powerDriver, docs, &want)
	if len(want) != len(docs) {
		t.Fatalf("%d answers for %d documents", len(want), len(docs))
	}
	for i, doc := range docs {
		var req *core.PowerRequest
		ps, ok, err := ccfg.Decode[*ccfg.PowerState](coretest.NewEnv(t, doc).Cfg, "power_state")
		if err == nil && ok {
			req, err = powerRequest(ps)
		}
		w := want[i]
		if doc == negative {
			if err == nil || w.Error != "" || !slices.Equal(w.Argv, []string{"shutdown", "-r", "+-1"}) {
				t.Errorf("%s: the difference changed: earlyinit %v, cloud-init %+v", doc, err, w)
			}
			continue
		}
		switch {
		case w.Error != "":
			if err == nil {
				t.Errorf("%s: cloud-init refuses it (%s), earlyinit runs %q", doc, w.Error, req.Argv)
			}
		case err != nil:
			t.Errorf("%s: earlyinit: %v; cloud-init runs %q", doc, err, w.Argv)
		case !slices.Equal(req.Argv, w.Argv) || req.Timeout.Seconds() != w.Timeout:
			t.Errorf("%s: earlyinit %q timeout %v, cloud-init %q timeout %s", doc, req.Argv, req.Timeout.Seconds(), w.Argv, fmt.Sprint(w.Timeout))
		}
	}
}
