// Package none is cloud-init's DataSourceNone: the instance a machine is
// when no datasource is found, so that the image's own configuration (its
// default user, its module lists) still applies. It has no user-data, no
// keys and no network configuration (the fallback one applies), and the
// fixed instance id cloud-init gives it.
//
// It is not one of the sources discovery walks: discovery falls back to it
// when the walk finds nothing, as cloud-init does with None last in its
// datasource_list (internal/discover says when).
package none

import (
	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// InstanceID is the instance id cloud-init's DataSourceNone reports.
const InstanceID = "iid-datasource-none"

// Source names the None datasource as the others are named: in the logs,
// instance-data's "datasource" and cloud-init's datasource_list ("None").
// It has no way to be read: Data is the instance.
var Source = datasource.Source{Name: "none", Class: "None"}

// Data is the None instance: cloud-init's DataSourceNone with no
// datasource.None settings (empty meta-data and user-data), its
// subplatform "config", its cloud name and platform "none".
func Data() *instance.Data {
	return &instance.Data{
		Datasource:      Source.Name,
		DatasourceClass: Source.Class,
		CloudName:       "none",
		Platform:        "none",
		Subplatform:     "config",
		InstanceID:      InstanceID,
		Meta:            map[string]any{},
	}
}
