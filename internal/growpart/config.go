package growpart

import (
	"fmt"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// DisabledFile is the file that turns cc_growpart (and
// cloud-initramfs-tools' growroot) off, unless ignore_growroot_disabled.
const DisabledFile = "/etc/growroot-disabled"

// Config is what the cloud-config says about growing partitions:
// cc_growpart's growpart: {mode, devices, ignore_growroot_disabled} and
// cc_resizefs's resize_rootfs, with cloud-init 22.4's defaults. The
// initramfs grows the root ("/"); the late stage's growpart module the
// other devices entries, once their filesystems are mounted.
type Config struct {
	Grow           bool     // mode is auto or growpart, not off
	Devices        []string // what to grow: mount points ("/" the root) or /dev paths
	IgnoreDisabled bool     // ignore /etc/growroot-disabled
	Resize         bool     // resize_rootfs: true or noblock

	// Warnings are one line each for a value that is not valid (the
	// default is used) or deprecated; Notes say why nothing is grown.
	Warnings, Notes []string
}

// ParseConfig reads cfg, the merged cloud-config (nil for none), as
// cloud-init 22.4's cc_growpart and cc_resizefs do. A value of the wrong
// type or an unknown word is one warning naming the key and the value's
// type, and the default is used, with one exception that keeps a user's
// "no" a no: growpart itself set to false or off (not a map) turns
// growpart off, as cloud-init, which skips a growpart that is not a map.
func ParseConfig(cfg map[string]any) Config {
	gc := Config{Grow: true, Devices: []string{"/"}, Resize: true}
	gp := gc.growpartMap(cfg)
	if v, ok := gp["mode"]; ok {
		gc.parseMode(v)
	}

	if v, ok := gp["ignore_growroot_disabled"]; ok {
		switch {
		case scalar.IsTrue(v):
			gc.IgnoreDisabled = true
		case scalar.IsFalse(v):
		default:
			gc.warn("growpart.ignore_growroot_disabled: want a boolean, got %s; false is used", scalar.YAMLNoun(v))
		}
	}

	if v, ok := gp["devices"]; ok {
		gc.parseDevices(v)
	}

	if v, ok := cfg["resize_rootfs"]; ok {
		switch {
		case v == "noblock" || scalar.IsTrue(v):
			// noblock: cloud-init backgrounds the resize; an online
			// resize in the initramfs is quick, so it is the same.
		case scalar.IsFalse(v):
			gc.Resize = false
		default:
			gc.warn("resize_rootfs: want true, false or noblock, got %s; true is used", scalar.YAMLNoun(v))
		}
	}
	return gc
}

// warn adds a warning.
func (gc *Config) warn(format string, args ...any) {
	gc.Warnings = append(gc.Warnings, fmt.Sprintf(format, args...))
}

// growpartMap is cfg's growpart map, nil when it is missing or not a map
// (a false one turns growing off).
func (gc *Config) growpartMap(cfg map[string]any) map[string]any {
	var gp map[string]any
	switch v, ok := cfg["growpart"]; {
	case !ok:
	case isMap(v):
		gp = v.(map[string]any)
	case scalar.IsFalse(v):
		gc.warn("growpart: want a map, got %s: read as {mode: off}", scalar.YAMLNoun(v))
		gc.Grow = false
		gc.Notes = append(gc.Notes, "growpart: disabled (growpart is off)")
	default:
		gc.warn("growpart: want a map, got %s: the defaults are used ({mode: auto, devices: [/]})", scalar.YAMLNoun(v))
	}
	return gp
}

// parseMode reads growpart.mode v.
func (gc *Config) parseMode(v any) {
	s, isStr := v.(string)
	switch {
	case isStr && (s == "auto" || s == "growpart"):
	case scalar.IsFalse(v):
		if s != "off" {
			gc.warn("growpart.mode: %v is deprecated, use off", v)
		}
		gc.Grow = false
		gc.Notes = append(gc.Notes, "growpart: disabled (growpart.mode is off)")
	case isStr && s == "gpart":
		gc.warn("growpart.mode: gpart is FreeBSD's resizer: not supported; auto is used")
	default:
		gc.warn("growpart.mode: want auto, growpart or off, got %s; auto is used", scalar.YAMLNoun(v))
	}
}

// parseDevices reads growpart.devices v; an empty list turns growing off.
func (gc *Config) parseDevices(v any) {
	// util.get_cfg_option_list: null is an empty list, a string a
	// list of one.
	switch v := v.(type) {
	case nil:
		gc.Devices = nil
	case string:
		gc.Devices = []string{v}
	case []any:
		gc.Devices = nil
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				gc.warn("growpart.devices[%d]: want a string, got %s; skipped", i, scalar.YAMLNoun(e))
				continue
			}
			gc.Devices = append(gc.Devices, s)
		}
	default:
		gc.warn("growpart.devices: want a list of mount points, got %s; [/] is used", scalar.YAMLNoun(v))
	}
	if gc.Grow && len(gc.Devices) == 0 {
		gc.Grow = false
		gc.Notes = append(gc.Notes, "growpart: empty device list")
	}
}

func isMap(v any) bool { _, ok := v.(map[string]any); return ok }
