package configdrive

import "github.com/earlyinit/earlyinit/internal/datasource"

// Source is the OpenStack config drive: a "config-2" ISO9660 or vfat
// filesystem, or cloud-init's seed directory in the real root.
var Source = datasource.Source{
	Name:     "configdrive",
	Class:    "ConfigDrive",
	Labels:   []string{"config-2", "CONFIG-2"},
	SeedDirs: []string{"/var/lib/cloud/seed/config_drive"},
	ReadFS:   Read,
}
