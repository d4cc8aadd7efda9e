package provision

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/earlyinit/earlyinit/internal/discover"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// leaseNTPSource is a System that knows the NTP servers (DHCP option 42)
// of the temporary lease it took to reach a metadata service
// (discover.Linux).
type leaseNTPSource interface {
	LeaseNTPServers() []netip.Addr
}

// writeLeaseNTP records the lease's NTP servers in paths.DHCPNTPFile under
// the run root, one address a line, 0644, written atomically, for the ntp
// module's ntp_use_dhcp_config. Nothing is written without servers: no
// lease (only a metadata service needs one), or none offered.
func writeLeaseNTP(env Env, sys discover.System) error {
	src, ok := sys.(leaseNTPSource)
	if !ok {
		return nil
	}
	var b strings.Builder
	n := 0
	for _, a := range src.LeaseNTPServers() {
		// The lease's addresses are IPv4 from option 42; the check
		// keeps anything else (a zone, an invalid address) out of the
		// file.
		if !a.IsValid() || a.Zone() != "" || a.IsUnspecified() {
			continue
		}
		b.WriteString(a.String() + "\n")
		n++
	}
	if n == 0 {
		return nil
	}
	run, err := rootfs.Open(env.runRoot())
	if err != nil {
		return fmt.Errorf("DHCP NTP servers: %w", err)
	}
	if err := run.WriteFile(paths.DHCPNTPFile, []byte(b.String()), 0o644, 0, 0); err != nil {
		return fmt.Errorf("DHCP NTP servers: %w", err)
	}
	env.Log.Printf("ntp: %d NTP server(s) of the DHCP lease in %s", n, paths.DHCPNTPFile)
	return nil
}
