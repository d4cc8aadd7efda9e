package provision

import (
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/discover"
	"github.com/earlyinit/earlyinit/internal/modules/system"
	"github.com/earlyinit/earlyinit/internal/paths"
)

// ntpSys is the recorded config drive's machine whose temporary DHCP
// lease offered ntp (option 42).
type ntpSys struct {
	driveSys
	ntp []netip.Addr
}

func (s ntpSys) LeaseNTPServers() []netip.Addr { return s.ntp }

// TestRunWritesLeaseNTP: the lease's NTP servers land in the run
// directory, one a line, 0644, where the ntp module looks; without
// servers, or without a lease, there is no file.
func TestRunWritesLeaseNTP(t *testing.T) {
	if paths.DHCPNTPFile != system.LeaseNTPFile {
		t.Fatalf("paths.DHCPNTPFile %q is not what the ntp module reads (%q)", paths.DHCPNTPFile, system.LeaseNTPFile)
	}
	addrs := func(ss ...string) []netip.Addr {
		var out []netip.Addr
		for _, s := range ss {
			out = append(out, netip.MustParseAddr(s))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		sys  func(driveSys) discover.System
		want string // "" for no file
	}{
		{"two servers", func(d driveSys) discover.System { return ntpSys{d, addrs("10.0.0.2", "192.168.7.1")} }, "10.0.0.2\n192.168.7.1\n"},
		{"unusable addresses left out", func(d driveSys) discover.System {
			return ntpSys{d, append(addrs("0.0.0.0", "10.0.0.3"), netip.Addr{})}
		}, "10.0.0.3\n"},
		{"no servers offered", func(d driveSys) discover.System { return ntpSys{d, nil} }, ""},
		{"no lease at all", func(d driveSys) discover.System { return d }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &testLog{}
			env := testEnv(t, log)
			env.System = tc.sys(driveSys{driveDir})
			if res := Run(env); !res.Instance {
				t.Fatalf("no instance:\n%s", log.String())
			}
			file := filepath.Join(env.RunRoot, paths.DHCPNTPFile)
			b, err := os.ReadFile(file)
			if tc.want == "" {
				if !os.IsNotExist(err) {
					t.Errorf("%s: %q, %v; want no file", file, b, err)
				}
				return
			}
			if err != nil || string(b) != tc.want {
				t.Fatalf("%s: %q, %v; want %q\n%s", file, b, err, tc.want, log.String())
			}
			fi, err := os.Stat(file)
			if err != nil || fi.Mode() != 0o644 {
				t.Errorf("%s mode %v, %v; want 0644", file, fi.Mode(), err)
			}
			if !strings.Contains(log.String(), "of the DHCP lease in "+paths.DHCPNTPFile) {
				t.Errorf("log does not say where the servers went:\n%s", log.String())
			}
			// No temporary file is left beside it.
			ents, err := os.ReadDir(filepath.Dir(file))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range ents {
				if strings.Contains(e.Name(), "dhcp-ntp") && e.Name() != filepath.Base(file) {
					t.Errorf("left behind: %s (%v)", e.Name(), e.Type()&fs.ModeType)
				}
			}
		})
	}
}
