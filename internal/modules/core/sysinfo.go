package core

import "github.com/earlyinit/earlyinit/internal/ccfg"

// SystemInfo is system_info read as ccfg.SystemInfo, for module, which
// reads the given keys of it: nil when system_info is not given or is
// not a map (a warning then). A key of those Decode could not read is a
// warning naming it, and is left zero, so the distribution's default
// applies, as in a cloud-init whose system_info has no such setting; the
// other keys are read all the same.
func SystemInfo(e *Env, module string, keys ...string) *ccfg.SystemInfo {
	si, _, err := ccfg.Decode[*ccfg.SystemInfo](e.Cfg, "system_info")
	if err != nil {
		e.Logf("%s: %v: system_info ignored", module, err)
		return nil
	}
	if si != nil {
		for _, k := range keys {
			if err := si.Err(k); err != nil {
				e.Logf("%s: %v: the distribution's default is used", module, err)
			}
		}
	}
	return si
}

// DistroSetting is system_info's distribution setting key (as get(si), a
// field of ccfg.SystemInfo: of any kind, as 22.4's schema leaves them) as
// text, str() of its value; ok is false when it is not given (null), or
// when system_info is not given or not a map (SystemInfo), and the
// distribution's default then applies.
func DistroSetting(e *Env, module, key string, get func(*ccfg.SystemInfo) any) (_ string, ok bool) {
	si := SystemInfo(e, module, key)
	if si == nil {
		return "", false
	}
	v := get(si)
	if v == nil {
		return "", false
	}
	return ccfg.String(v), true
}
