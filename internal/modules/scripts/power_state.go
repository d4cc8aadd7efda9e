package scripts

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

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
	req, err := parsePowerState(e.Cfg["power_state"])
	if err != nil || req == nil {
		return err
	}
	e.Power = req
	e.Logf("power_state: will run %s at the end", strings.Join(req.Argv, " "))
	return nil
}

// parsePowerState reads a power_state map; nil for none.
func parsePowerState(v any) (*core.PowerRequest, error) {
	if v == nil {
		return nil, nil
	}
	ps, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("power_state: want a map, got %s", core.Kind(v))
	}
	mode := core.CfgString(ps, "mode", "")
	opt, ok := shutdownOpt(mode)
	if !ok {
		return nil, fmt.Errorf("power_state.mode %q: want poweroff, reboot or halt", mode)
	}
	delay := "now"
	if d, ok := ps["delay"]; ok && d != nil {
		// shutdown_command's "+%d" % int(delay): a float is cut to
		// its integer, a boolean is 0 or 1. A negative delay is
		// refused (cloud-init passes "+-1" to shutdown).
		s := strings.TrimSpace(core.ScalarString(d))
		n, err := 0, error(nil)
		switch t := d.(type) {
		case float64:
			n = int(t)
		case bool:
			if t {
				n = 1
			}
		default:
			n, err = strconv.Atoi(strings.TrimPrefix(s, "+"))
		}
		if s != "now" {
			if err != nil || n < 0 {
				return nil, fmt.Errorf("power_state.delay %q: want \"now\" or +minutes", s)
			}
			delay = "+" + strconv.Itoa(n)
		}
	}
	argv := []string{"shutdown", opt, delay}
	if m := core.CfgString(ps, "message", ""); m != "" {
		argv = append(argv, m)
	}
	timeout := 30.0
	if t, ok := ps["timeout"]; ok && t != nil {
		f, err := strconv.ParseFloat(strings.TrimSpace(core.ScalarString(t)), 64)
		if err != nil || f < 0 {
			return nil, fmt.Errorf("power_state.timeout %v: want seconds", t)
		}
		timeout = f
	}
	cond := ps["condition"]
	switch cond.(type) {
	case nil, bool, string, []any:
	default:
		return nil, fmt.Errorf("power_state.condition: want a boolean, a string or a list, got %s", core.Kind(cond))
	}
	return &core.PowerRequest{Argv: argv, Condition: cond, Timeout: time.Duration(timeout * float64(time.Second))}, nil
}
