package discover

import (
	"io/fs"

	"github.com/earlyinit/earlyinit/internal/blockdev"
	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// The config drives: listed once, polled for a while, read in turn.

// drives reads the first of src's drives among devs that reads cleanly.
func (f *finder) drives(src datasource.Source, devs []blockdev.Device) *instance.Data {
	for _, dev := range devs {
		if !src.Drive(dev.FS.Type, dev.FS.Label) {
			continue
		}
		d, err := f.sys.ReadDrive(dev, src.ReadFS)
		if err != nil {
			f.log.Errorf("datasource %s: drive %s rejected: %v", src.Name, dev, err)
			f.rejected++
			continue
		}
		d.Subplatform = "config-disk (" + dev.Path + ")"
		return f.finish(d, src)
	}
	return nil
}

// drivesListed is the block devices, listed the first time it is called.
func (f *finder) drivesListed() []blockdev.Device {
	if !f.listed {
		f.devs = f.listDrives(f.order, f.explicit)
		f.listed = true
	}
	return f.devs
}

// provisioningDrive reads the first of src's provisioning drives that
// holds its ProvisioningFile, and returns it (still mounted until the
// handoff), or nil when there is none.
func (f *finder) provisioningDrive(src datasource.Source) fs.FS {
	for _, dev := range f.drivesListed() {
		if !src.ProvisioningDrive(dev.FS.Type, dev.FS.Label) {
			continue
		}
		var drive fs.FS
		_, err := f.sys.ReadDrive(dev, func(fsys fs.FS) (*instance.Data, error) {
			if _, err := fs.Stat(fsys, src.ProvisioningFile); err != nil {
				return nil, err
			}
			drive = fsys
			return &instance.Data{}, nil
		})
		if err != nil {
			f.log.Printf("datasource %s: %s: no %s (%v)", src.Name, dev, src.ProvisioningFile, err)
			continue
		}
		f.log.Printf("datasource %s: provisioning media %s", src.Name, dev)
		return drive
	}
	return nil
}

// listDrives lists block devices, polling a while for a drive of one of
// the sources in order: up to DriveGrace, or earlyinit.timeout when
// earlyinit.ds= named the sources explicitly.
func (f *finder) listDrives(order []datasource.Source, explicit bool) []blockdev.Device {
	wait := min(DriveGrace, f.timeout)
	if explicit {
		wait = f.timeout
	}
	devs := f.sys.Drives(wait, func(d blockdev.Device) bool {
		for _, src := range order {
			if src.Drive(d.FS.Type, d.FS.Label) || (src.Metadata != nil && src.ProvisioningDrive != nil && src.ProvisioningDrive(d.FS.Type, d.FS.Label)) {
				return true
			}
		}
		return false
	})
	nearMisses(f.log, order, devs)
	return devs
}

// nearMisses logs each drive whose label is almost one a wanted source
// accepts ("Config-2", "CIDATA_"): it is not read, and the line says why.
func nearMisses(log Log, order []datasource.Source, devs []blockdev.Device) {
	for _, d := range devs {
		if d.FS.Type != "iso9660" && d.FS.Type != "vfat" {
			continue
		}
		for _, src := range order {
			if src.Drive(d.FS.Type, d.FS.Label) {
				break
			}
			if want, ok := datasource.LabelNearMiss(d.FS.Label, src.Labels); ok {
				log.Errorf("%s: label %q is not %q: not read as a %s drive (labels must match exactly)", d.Path, d.FS.Label, want, src.Name)
				break
			}
		}
	}
}
