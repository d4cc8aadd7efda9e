package core

import "github.com/earlyinit/earlyinit/internal/ccfg"

// SystemInfo is system_info read as ccfg.SystemInfo, for module; nil when
// it is not given, or when it cannot be read (not a map, or a key of it
// wrong): the warning names the key, and the distribution's defaults then
// apply, as they do for a cloud-init whose system_info has no setting.
func SystemInfo(e *Env, module string) *ccfg.SystemInfo {
	si, _, err := ccfg.Decode[*ccfg.SystemInfo](e.Cfg, "system_info")
	if err != nil {
		e.Logf("%s: %v: system_info ignored", module, err)
		return nil
	}
	return si
}

// DistroSetting is one of system_info's distribution settings (as
// get(si), a field of ccfg.SystemInfo: of any kind, as 22.4's schema
// leaves them) as text, str() of its value; ok is false when it is not
// given (null), or when system_info is not given or cannot be read
// (SystemInfo), and the distribution's default then applies.
func DistroSetting(e *Env, module string, get func(*ccfg.SystemInfo) any) (_ string, ok bool) {
	si := SystemInfo(e, module)
	if si == nil {
		return "", false
	}
	v := get(si)
	if v == nil {
		return "", false
	}
	return ccfg.String(v), true
}
