// Package opennebula reads an OpenNebula context disk (an ISO9660 drive
// labelled CONTEXT, or cloud-init's seed directory) into the instance
// model, as cloud-init's DataSourceOpenNebula does: context.sh's variables
// are the metadata; SSH_KEY or SSH_PUBLIC_KEY the keys; SET_HOSTNAME,
// HOSTNAME, PUBLIC_IP, IP_PUBLIC or ETH0_IP the host name; USER_DATA or
// USERDATA the user-data (base64 when USERDATA_ENCODING says so); the
// ETHx_* variables the network configuration (network config v2).
//
// context.sh is parsed (ParseContext), never run.
//
// The instance id is cloud-init's: always "iid-dsopennebula", as context.sh
// has no instance-id variable.
//
// Differences from cloud-init: context.sh is not run, so it may hold only
// variable assignments (see ParseContext); the network configuration
// covers the NICs context.sh describes (ETHx_MAC, or ETHx_IP* for a NIC
// named ethx), where cloud-init also gives every other NIC of the system
// an address made from its MAC; a bad ETHx_MTU, ETHx_MASK or ETHx_ROUTES
// entry, or USER_DATA that is not the base64 it says, is an error naming
// the variable (cloud-init fails on some and skips others with a warning).
package opennebula

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// ContextFile is the file read from the drive.
const ContextFile = "context.sh"

// DefaultInstanceID is cloud-init's instance id for OpenNebula.
const DefaultInstanceID = "iid-dsopennebula"

// errNoContext is returned (wrapped) when the drive has no context.sh: it
// is not a context disk, as opposed to a broken one.
var errNoContext = errors.New("not an OpenNebula context disk")

// Read reads a context disk whose root is fsys. Subplatform is left for the
// caller, which knows where fsys is.
func Read(fsys fs.FS) (*instance.Data, error) {
	b, err := datasource.ReadFile(fsys, ContextFile, datasource.MaxFileSize)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("no %s: %w", ContextFile, errNoContext)
	}
	if err != nil {
		return nil, err
	}
	ctx, err := ParseContext(string(b))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ContextFile, err)
	}
	d, err := fromContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ContextFile, err)
	}
	return d, nil
}

// fromContext fills the instance model from context.sh's variables.
func fromContext(ctx map[string]string) (*instance.Data, error) {
	if strings.EqualFold(ctx["DSMODE"], "disabled") {
		return nil, errors.New("DSMODE=disabled: the context disk turns the datasource off")
	}
	d := &instance.Data{
		Datasource:      "opennebula",
		DatasourceClass: "OpenNebula",
		CloudName:       "opennebula",
		Platform:        "opennebula",
		InstanceID:      DefaultInstanceID,
	}
	meta := map[string]any{}
	for k, v := range ctx {
		meta[k] = v
	}
	for _, k := range []string{"SSH_KEY", "SSH_PUBLIC_KEY"} {
		v, ok := ctx[k]
		if !ok {
			continue
		}
		keys := []any{}
		for _, line := range strings.Split(v, "\n") {
			if line != "" && !strings.HasPrefix(line, "#") {
				d.PublicKeys = append(d.PublicKeys, line)
				keys = append(keys, line)
			}
		}
		meta["public-keys"] = keys
		break
	}
	for _, k := range []string{"SET_HOSTNAME", "HOSTNAME", "PUBLIC_IP", "IP_PUBLIC", "ETH0_IP"} {
		if v, ok := ctx[k]; ok {
			d.LocalHostname = v
			meta["local-hostname"] = v
			break
		}
	}
	for _, k := range []string{"USER_DATA", "USERDATA"} {
		v, ok := ctx[k]
		if !ok {
			continue
		}
		enc, ok := ctx["USERDATA_ENCODING"]
		if !ok {
			enc = ctx["USER_DATA_ENCODING"]
		}
		if enc == "base64" {
			ud, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v), ""))
			if err != nil {
				return nil, fmt.Errorf("%s: USERDATA_ENCODING is base64, but it is not: %v", k, err)
			}
			d.UserData = ud
		} else {
			d.UserData = []byte(v)
		}
		break
	}
	nc, err := Network(ctx)
	if err != nil {
		return nil, err
	}
	if nc != nil {
		if d.Network, err = nc.JSON(); err != nil {
			return nil, err
		}
		d.NetworkFormat = instance.NetworkYAML
	}
	meta["instance-id"] = d.InstanceID
	d.Meta = meta
	return d, nil
}
