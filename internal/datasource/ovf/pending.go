package ovf

import (
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/imagecfg"
)

// defaultCustWait is cloud-init's default datasource.OVF
// vmware_cust_file_max_wait: how long DataSourceOVF waits for VMware
// Tools to deliver cust.cfg.
const defaultCustWait = 15 * time.Second

// Pending reports whether a VMware guest customization may still come to
// the root fsys, and for how long to wait for it: the image allows one
// (disable_vmware_customization false, or datasource.OVF.allow_raw_data,
// true by default, as metadata reads them), VMware Tools' deployPkg plugin
// is in the root, and no cust.cfg is there yet. VMware Tools deliver the
// package once vmtoolsd runs in the installed system, after the
// initramfs: cloud-init's local stage waits for it (DataSourceOVF,
// wait_for_imc_cfg_file), and so must the boot stage.
func Pending(fsys fs.FS) (time.Duration, bool, error) {
	img, err := imagecfg.Load(fsys)
	if err != nil {
		return 0, false, err
	}
	ds := img.Datasource("OVF")
	if cfgBool(img.Raw, "disable_vmware_customization", true) && !cfgBool(ds, "allow_raw_data", true) {
		return 0, false, nil
	}
	c := &Customization{FS: fsys}
	if c.findPlugin() == "" {
		return 0, false, nil
	}
	if _, ok := HasCustomization(fsys); ok {
		return 0, false, nil
	}
	return custWait(ds), true, nil
}

// custWait is vmware_cust_file_max_wait as cloud-init's
// get_max_wait_from_cfg reads it: int() of the value (an integer, or a
// string of one), 15 s when it is missing, not one, or negative.
func custWait(ds map[string]any) time.Duration {
	v, ok := ds["vmware_cust_file_max_wait"]
	if !ok {
		return defaultCustWait
	}
	var n int
	switch t := v.(type) {
	case int:
		n = t
	case float64: // int() truncates
		n = int(t)
	case bool: // int(True) is 1
		if t {
			n = 1
		}
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil {
			return defaultCustWait
		}
		n = i
	default:
		return defaultCustWait
	}
	if n < 0 {
		return defaultCustWait
	}
	return time.Duration(n) * time.Second
}

// HasCustomization reports whether cust.cfg is in the root fsys, and
// where.
func HasCustomization(fsys fs.FS) (string, bool) {
	for _, d := range IMCDirs {
		if fi, err := fs.Stat(fsys, d+"/cust.cfg"); err == nil && fi.Mode().IsRegular() {
			return "/" + d + "/cust.cfg", true
		}
	}
	return "", false
}
