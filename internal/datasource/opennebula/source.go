package opennebula

import "github.com/earlyinit/earlyinit/internal/datasource"

// Source is OpenNebula's context disk, found by its label as ds-identify
// finds it (CONTEXT; CDROM on older OpenNebula), or cloud-init's seed
// directory. It has no DMI rule: OpenNebula's VMs are plain KVM ones.
var Source = datasource.Source{
	Name:     "opennebula",
	Class:    "OpenNebula",
	Labels:   []string{"CONTEXT", "CDROM"},
	SeedDirs: []string{"/var/lib/cloud/seed/opennebula"},
	ReadFS:   Read,
}
