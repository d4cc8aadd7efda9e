package scripts

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// shutdownOpt is cloud-init's shutdown_options_map: shutdown's option
// for mode, and whether mode is one.
func shutdownOpt(mode string) (string, bool) {
	switch mode {
	case "halt":
		return "-H", true
	case "poweroff":
		return "-P", true
	case "reboot":
		return "-r", true
	}
	return "", false
}

// PowerState is cc_power_state_change: it only decides. The command,
// shutdown -P|-r|-H now|+MINUTES [message] as cloud-init's
// distro.shutdown_command, goes into e.Power; the runner runs it after
// everything else, when the condition (true by default; false; a command,
// a string for sh -c or a list as argv, exit 0 meaning go) holds, the
// condition bounded by timeout seconds (default 30).
func PowerState(_ context.Context, e *core.Env) error {
	ps, ok, err := ccfg.Decode[*ccfg.PowerState](e.Cfg, "power_state")
	if err != nil || !ok {
		return err
	}
	req, err := powerRequest(ps)
	if err != nil {
		return err
	}
	e.Power = req
	e.Logf("power_state: will run %s at the end", strings.Join(req.Argv, " "))
	return nil
}

// powerRequest is the request power_state ps makes.
func powerRequest(ps *ccfg.PowerState) (*core.PowerRequest, error) {
	opt, ok := shutdownOpt(ps.Mode)
	if !ok {
		return nil, fmt.Errorf("power_state.mode %q: want poweroff, reboot or halt", ps.Mode)
	}
	delay := string(ps.Delay)
	if delay == "" {
		delay = "now"
	}
	argv := []string{"shutdown", opt, delay}
	if ps.Message != "" {
		argv = append(argv, ps.Message)
	}
	timeout := 30.0
	if ps.Timeout != nil {
		if *ps.Timeout < 0 {
			return nil, fmt.Errorf("power_state.timeout %v: want seconds", *ps.Timeout)
		}
		timeout = *ps.Timeout
	}
	// A command (a string for sh -c, or an argv) or a boolean, which the
	// runner reads.
	switch ps.Condition.(type) {
	case nil, bool, string, []any:
	default:
		return nil, fmt.Errorf("power_state.condition: want a boolean, a string or a list, got %s", core.Kind(ps.Condition))
	}
	return &core.PowerRequest{Argv: argv, Condition: ps.Condition, Timeout: time.Duration(timeout * float64(time.Second))}, nil
}
