package system

import (
	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// distroSetting is one of system_info's distribution settings (as
// get(si), a field of ccfg.SystemInfo: of any kind, as 22.4's schema
// leaves them) as text, str() of its value; ok is false when it is not
// given (null), or when system_info is not given or cannot be read as
// ccfg.SystemInfo (not a map, or a key of it wrong: the warning names it),
// and the distribution's default then applies.
func distroSetting(e *core.Env, module string, get func(*ccfg.SystemInfo) any) (_ string, ok bool) {
	si, _, err := ccfg.Decode[*ccfg.SystemInfo](e.Cfg, "system_info")
	if err != nil {
		e.Logf("%s: %v: system_info ignored", module, err)
		return "", false
	}
	if si == nil {
		return "", false
	}
	v := get(si)
	if v == nil {
		return "", false
	}
	return ccfg.String(v), true
}
