package disks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// MountComment marks the fstab entries earlyinit owns (cloud-init's
// "comment=cloudconfig"): they are rewritten on every run, others are
// never touched.
const MountComment = "comment=earlyinit"

// defaultMountFields is cloud-init's mount_default_fields with systemd,
// without its x-systemd.requires=cloud-init.service and _netdev.
var defaultMountFields = ccfg.MountFields{nil, nil, ptr("auto"), ptr("defaults,nofail"), ptr("0"), ptr("2")}

func ptr(s string) *string { return &s }

var shortDevRE = core.LazyRE{Expr: `^(x?[shv]d[a-z][0-9]*|sr[0-9]+|nvme[0-9]+n[0-9]+(p[0-9]+)?|vd[a-z]+[0-9]*)$`}

// sanitizeDev is the name part of cloud-init's sanitize_devname: a short
// kernel name gets /dev/; paths and LABEL=, UUID=, PARTUUID=... are kept.
func sanitizeDev(s string) string {
	if shortDevRE.Get().MatchString(s) {
		return "/dev/" + s
	}
	return s
}

// mountDevice is cloud-init's sanitize_devname for a mounts entry's
// device name: a ".N" suffix names partition N; device_aliases maps the
// rest; a metadata name (ephemeralN, swap, ami, root) is the datasource's
// device (device_name_to_device); a short kernel name gets /dev/
// (sanitizeDev). A device the kernel lists as a disk (/sys/block/NAME,
// links followed) is then its partition N, 1 when no ".N" was given, if
// the kernel lists that (DEVN, DEVpN or DEV-partN, the first that
// exists): "sdc" of a disk with a partition is /dev/sdc1, as with
// cloud-init. Anything else is kept as named (LABEL=, UUID=, a
// partition, a disk not there yet). dev is "" when the entry cannot be
// written, and why says why.
//
// Deliberately unlike cloud-init, which then keeps the name exactly as
// written: a short name gets /dev/ whether or not the disk is there (and
// nvme and vd names are short names too), a dotted short name ("vdb.2")
// is read as the partition, and a metadata name without a device, or a
// partition ".N" the disk does not have, skips the entry rather than
// writing a line nothing can mount (TestMountDeviceAsCloudInit).
func mountDevice(ctx context.Context, e *core.Env, name string, aliases map[string]string) (dev, why string) {
	if strings.Contains(name, ":") && !strings.HasPrefix(name, "/") {
		return name, "" // a network source
	}
	if name == "ephemeral" {
		name = "ephemeral0"
	}
	base, part := name, ""
	if i := strings.LastIndex(name, "."); i > 0 && i < len(name)-1 && strings.Trim(name[i+1:], "0123456789") == "" {
		base, part = name[:i], name[i+1:]
	}
	if a, ok := aliases[base]; ok && a != "" {
		base = a
	}
	if isMetaDevice(base) {
		if dev = datasourceDevice(ctx, e, base); dev == "" {
			return "", "needs a device the datasource does not map"
		}
		if !strings.HasPrefix(dev, "/") {
			dev = "/dev/" + dev
		}
	} else if dev = sanitizeDev(base); !strings.HasPrefix(dev, "/") {
		return dev, "" // LABEL=, UUID=...
	}
	n := part
	if n == "" {
		n = "1"
	}
	disk := blockName(e, dev)
	for _, suffix := range []string{n, "p" + n, "-part" + n} {
		if p := dev + suffix; e.Root.Exists(p) {
			if disk != "" && e.Root.Exists("/sys/block/"+disk+"/"+blockName(e, p)) {
				return p, ""
			}
			break
		}
	}
	if part != "" {
		return "", "has no partition " + part
	}
	return dev, ""
}

// isMetaDevice is cloud-init's is_meta_device_name: a name only the
// datasource's block-device mapping knows.
func isMetaDevice(name string) bool {
	switch name {
	case "ami", "root", "swap":
		return true
	}
	return strings.HasPrefix(name, "ephemeral") || strings.HasPrefix(name, "ebs")
}

// blockName is the kernel's name of device path p: the base name of the
// path its links lead to in the root (os.path.realpath's, at most 16
// links), "" when that is not a /dev path.
func blockName(e *core.Env, p string) string {
	for range 16 {
		t, err := e.Root.Readlink(p)
		if err != nil {
			break
		}
		if !path.IsAbs(t) {
			t = path.Join(path.Dir(p), t)
		}
		p = path.Clean(t)
	}
	if !strings.HasPrefix(p, "/dev/") {
		return ""
	}
	return path.Base(p)
}

// Mounts is cc_mounts: each mounts entry [dev, dir, type, opts, freq,
// passno] is completed from mount_default_fields, made "nofail" (a missing
// disk must not stop the boot), tagged MountComment and written to
// /etc/fstab, replacing earlyinit's entries of an earlier run; a device
// already in fstab by another entry is left to it; an entry whose mount
// point is null is dropped. Mount points are created. swap makes a swap
// file (setupSwap) and adds its line, [file, none, swap, sw, 0, 0]. As
// cloud-init, `swapon -a` runs when there is a swap line, and `mount -a`
// when the fstab changed (through Exec; a failure is logged, not fatal,
// since nofail entries may legitimately be absent).
func Mounts(ctx context.Context, e *core.Env) error {
	defs, err := mountDefaults(e)
	if err != nil {
		return err
	}
	swap, _, err := ccfg.Decode[*ccfg.Swap](e.Cfg, "swap")
	if err != nil {
		return err
	}
	sc, err := parseSwap(swap)
	if err != nil {
		return err
	}
	old, err := e.Root.ReadFile("/etc/fstab")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	kept, devs := fstabOthers(old)
	raw, _, err := ccfg.Decode[[]ccfg.MountEntry](e.Cfg, "mounts")
	if err != nil {
		return err
	}
	aliases, err := mountAliases(e)
	if err != nil {
		return err
	}
	entries, err := mountEntries(ctx, e, raw, defs, devs, aliases)
	if err != nil {
		return err
	}
	var swapErr error
	if sc != nil {
		file, err := setupSwap(ctx, e, sc)
		swapErr = err
		if file != "" {
			entries = append(entries, []string{file, "none", "swap", "sw," + MountComment, "0", "0"})
		}
	}
	needSwap := false
	var lines []string
	for _, s := range entries {
		lines = append(lines, strings.Join(s, "\t"))
		needSwap = needSwap || s[2] == "swap"
		if strings.HasPrefix(s[1], "/") && s[2] != "swap" {
			if err := e.Root.MkdirAll(s[1], 0o755, 0, 0); err != nil {
				return err
			}
		}
	}
	all := append(kept, lines...)
	content := strings.Join(all, "\n")
	if content != "" {
		content += "\n"
	}
	changed := content != string(old)
	if changed {
		if err := e.KeepWrite("/etc/fstab", []byte(content)); err != nil {
			return errors.Join(err, swapErr)
		}
	}
	if needSwap {
		if _, err := e.Run(ctx, core.Cmd{Name: "swapon", Args: []string{"-a"}, Output: e.Out()}); err != nil {
			e.Logf("mounts: %v", err)
		}
	}
	if changed && len(lines) > 0 {
		if _, err := e.Run(ctx, core.Cmd{Name: "mount", Args: []string{"-a"}, Output: e.Out()}); err != nil {
			e.Logf("mounts: %v", err)
		}
	}
	return swapErr
}

// mountAliases is device_aliases for mounts: each value's str() ("" for
// null); a map or a list is an error.
func mountAliases(e *core.Env) (map[string]string, error) {
	da, _, err := ccfg.Decode[ccfg.DeviceAliases](e.Cfg, "device_aliases")
	if err != nil {
		return nil, err
	}
	aliases := make(map[string]string, len(da))
	for k, a := range da {
		if a.Collection {
			return nil, fmt.Errorf("device_aliases.%s: want a string, got %s", k, a.Kind)
		}
		aliases[k] = a.Device
	}
	return aliases, nil
}

// mountDefaults is mount_default_fields, or defaultMountFields without it.
func mountDefaults(e *core.Env) (ccfg.MountFields, error) {
	d, ok, err := ccfg.Decode[ccfg.MountFields](e.Cfg, "mount_default_fields")
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return defaultMountFields, nil
	case len(d) != 6:
		return nil, fmt.Errorf("mount_default_fields: want a list of 6 fields")
	}
	return d, nil
}

// fstabOthers is the lines of fstab that are not earlyinit's (or
// cloud-init's), leading blank lines dropped, and the devices they name.
func fstabOthers(fstab []byte) (kept []string, devs map[string]bool) {
	devs = map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(string(fstab), "\n"), "\n") {
		if strings.Contains(line, MountComment) || strings.Contains(line, "comment=cloudconfig") {
			continue
		}
		if f := strings.Fields(line); len(f) > 0 && !strings.HasPrefix(f[0], "#") {
			devs[f[0]] = true
		}
		if line != "" || len(kept) > 0 {
			kept = append(kept, line)
		}
	}
	return kept, devs
}

// mountEntries turns the mounts entries into fstab fields, in order: each
// completed from defs, skipped (with a log line) when its device cannot be
// named or is in devs, and dropping its device's earlier entries when its
// mount point is null.
func mountEntries(ctx context.Context, e *core.Env, raw []ccfg.MountEntry, defs ccfg.MountFields, devs map[string]bool, aliases map[string]string) ([][]string, error) {
	var entries [][]string
	for i, it := range raw {
		if it.NotList != "" {
			e.Logf("mounts.%d: not a list (%s): skipped", i, it.NotList)
			continue
		}
		l := it.Fields
		if len(l) == 0 || l[0] == nil {
			continue
		}
		f := withDefaults(l, defs)
		dev, why := mountDevice(ctx, e, *f[0], aliases)
		if dev == "" {
			e.Logf("mounts.%d: %s %s: skipped", i, *f[0], why)
			continue
		}
		if devs[dev] {
			e.Logf("mounts.%d: %s is already in /etc/fstab: skipped", i, dev)
			continue
		}
		if f[1] == nil {
			// A null mount point removes the device (cloud-init drops the
			// entry and any earlier one for it).
			out := entries[:0]
			for _, x := range entries {
				if x[0] != dev {
					out = append(out, x)
				}
			}
			entries = out
			continue
		}
		s, err := fstabFields(i, f, dev)
		if err != nil {
			return nil, err
		}
		entries = append(entries, s)
	}
	return entries, nil
}

// withDefaults is entry l's six fields, those it lacks or has null taken
// from defs.
func withDefaults(l, defs ccfg.MountFields) ccfg.MountFields {
	f := make(ccfg.MountFields, 6)
	copy(f, l)
	for j := range f {
		if j >= len(l) || f[j] == nil {
			f[j] = defs[j]
		}
	}
	return f
}

// fstabFields is mounts entry i, completed to f, as fstab's six fields:
// dev first, "nofail" and MountComment added to the options.
func fstabFields(i int, f ccfg.MountFields, dev string) ([]string, error) {
	s := make([]string, 6)
	for j, x := range f {
		if x == nil {
			return nil, fmt.Errorf("mounts.%d: field %d is empty and has no default", i, j)
		}
		s[j] = *x
		if s[j] == "" || strings.ContainsAny(s[j], " \t\n#") {
			return nil, fmt.Errorf("mounts.%d: field %d %q: empty or has blanks", i, j, s[j])
		}
	}
	s[0] = dev
	if !hasOpt(s[3], "nofail") {
		s[3] += ",nofail"
	}
	s[3] += "," + MountComment
	return s, nil
}

func hasOpt(opts, o string) bool {
	for _, x := range strings.Split(opts, ",") {
		if x == o {
			return true
		}
	}
	return false
}
