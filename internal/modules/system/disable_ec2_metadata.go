package system

import (
	"context"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// ec2MetadataAddr is the EC2 metadata service's address, which
// disable_ec2_metadata makes unreachable.
const ec2MetadataAddr = "169.254.169.254"

// DisableEC2Metadata is cc_disable_ec2_metadata, at every boot (a route
// does not outlive one): with disable_ec2_metadata true, the root's ip
// adds a prohibit route to 169.254.169.254 (ip route add prohibit
// 169.254.169.254); without ip but with ifconfig, as in cloud-init, net-tools'
// route adds a reject route (route add -host 169.254.169.254 reject).
// Neither is an error naming both. A route already there (the final stage
// run again in the same boot) is not an error.
func DisableEC2Metadata(ctx context.Context, e *core.Env) error {
	if disable, _, err := ccfg.Decode[bool](e.Cfg, "disable_ec2_metadata"); !disable || err != nil {
		return err
	}
	_, hasIP := e.Tool("ip")
	_, hasIfconfig := e.Tool("ifconfig")
	var c core.Cmd
	switch {
	case hasIP:
		c = core.Cmd{Name: "ip", Args: []string{"route", "add", "prohibit", ec2MetadataAddr}}
	case hasIfconfig:
		c = core.Cmd{Name: "route", Args: []string{"add", "-host", ec2MetadataAddr, "reject"}}
	default:
		return fmt.Errorf("disable_ec2_metadata: neither ip nor ifconfig (and route) in the root: the route to %s is not blocked", ec2MetadataAddr)
	}
	out, err := e.Run(ctx, c)
	e.Out().Write(out)
	if err != nil {
		if strings.Contains(string(out), "File exists") || strings.Contains(err.Error(), "File exists") {
			e.Logf("disable_ec2_metadata: the route to %s is blocked already", ec2MetadataAddr)
			return nil
		}
		return fmt.Errorf("disable_ec2_metadata: %w", err)
	}
	e.Logf("disable_ec2_metadata: the route to %s is blocked", ec2MetadataAddr)
	return nil
}
