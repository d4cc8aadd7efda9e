// Package dmi reads the machine's SMBIOS/DMI identification as the kernel
// exports it in /sys/class/dmi/id: the strings by which a platform is
// recognised before any datasource is probed (cloud-init's ds-identify
// reads the same files).
package dmi

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// Dir is where the kernel exports the DMI strings.
const Dir = "/sys/class/dmi/id"

// maxField caps each file read: SMBIOS strings are at most 255 bytes
// (64 KiB for the serial on some firmware).
const maxField = 64 << 10

// Info is the DMI strings a platform is recognised by. Each is as the
// kernel gives it, without the trailing newline and surrounding blanks; a
// missing file is "".
type Info struct {
	SysVendor       string // sys_vendor
	ProductName     string // product_name
	ProductVersion  string // product_version
	ProductSerial   string // product_serial (root-only in sysfs)
	ProductUUID     string // product_uuid (root-only)
	ChassisAssetTag string // chassis_asset_tag
	ChassisVendor   string // chassis_vendor
	BoardVendor     string // board_vendor
	BoardName       string // board_name
	BIOSVendor      string // bios_vendor
	BIOSVersion     string // bios_version
}

// fields maps file names to Info's fields.
func (i *Info) fields() map[string]*string {
	return map[string]*string{
		"sys_vendor":        &i.SysVendor,
		"product_name":      &i.ProductName,
		"product_version":   &i.ProductVersion,
		"product_serial":    &i.ProductSerial,
		"product_uuid":      &i.ProductUUID,
		"chassis_asset_tag": &i.ChassisAssetTag,
		"chassis_vendor":    &i.ChassisVendor,
		"board_vendor":      &i.BoardVendor,
		"board_name":        &i.BoardName,
		"bios_vendor":       &i.BIOSVendor,
		"bios_version":      &i.BIOSVersion,
	}
}

// Read reads Info from fsys, a view of Dir (os.DirFS(dmi.Dir)). Missing
// files are empty fields (a machine without DMI, ARM boards); any other
// read error is returned with what could be read.
func Read(fsys fs.FS) (Info, error) {
	var i Info
	var errs []error
	for name, p := range i.fields() {
		s, err := readField(fsys, name)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("dmi %s: %w", name, err))
			}
			continue
		}
		*p = s
	}
	return i, errors.Join(errs...)
}

func readField(fsys fs.FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxField))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// String is the non-empty fields as key="value" pairs in a fixed order,
// for the one log line that says why sources were chosen. The serial and
// UUID are left out: they identify one machine, and a serial may carry a
// NoCloud seed with a URL.
func (i Info) String() string {
	var b strings.Builder
	for _, kv := range []struct{ k, v string }{
		{"sys_vendor", i.SysVendor}, {"product_name", i.ProductName}, {"product_version", i.ProductVersion},
		{"chassis_asset_tag", i.ChassisAssetTag}, {"chassis_vendor", i.ChassisVendor},
		{"board_vendor", i.BoardVendor}, {"board_name", i.BoardName}, {"bios_vendor", i.BIOSVendor},
	} {
		if kv.v == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%q", kv.k, kv.v)
	}
	if b.Len() == 0 {
		return "no DMI strings"
	}
	return b.String()
}
