package disks

import (
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// TestFSSetupCmdFormat: fs_setup's cmd is Python's cmd % {"label",
// "filesystem", "device"}: "%%" and a width are Python's, and what
// Python's % raises on (a missing name, a lone "%", %d of a string) fails
// that entry, named by index and key with the reason but not the whole
// command; the next entry still runs. The errors are Python 3.11's for
// the same template and mapping.
func TestFSSetupCmdFormat(t *testing.T) {
	const entry = "  - label: data\n    filesystem: ext4\n    device: /dev/vdb\n    partition: none\n    cmd: %q\n"
	const good = "  - label: logs\n    filesystem: xfs\n    device: /dev/vdb\n    partition: none\n    cmd: \"mkfs.%(filesystem)s %(device)s\"\n"
	calls := []string{"lsblk --pairs --output NAME,TYPE,FSTYPE,LABEL,PARTTYPE /dev/vdb --nodeps", "blkid -c /dev/null -p -o export /dev/vdb"}
	for _, tt := range []struct{ cmd, run, err string }{
		{"echo 100%% %(label)-6s| %(device)s", "sh -c echo 100% data  | /dev/vdb", ""},
		{"mkfs -L %(lable)s --key=s3cret %(device)s", "", "fs_setup.0: cmd: no value for %(lable)"},
		{"mkfs -L %(label)s 50% --key=s3cret", "", "fs_setup.0: cmd: TypeError: not enough arguments for format string"},
		{"mkfs -L %(label)s --key=s3cret %", "", "fs_setup.0: cmd: ValueError: incomplete format"},
		{"mkfs -L %(label)d --key=s3cret", "", "fs_setup.0: cmd: TypeError: %d format: a real number is required, not str"},
		{"mkfs -L %(label) --key=s3cret", "", "fs_setup.0: cmd: ValueError: unsupported format character 'k' (0x6b) at index 19"},
		{"mkfs %s --key=s3cret", "", "fs_setup.0: cmd: Unsupported: %s without a name formats the whole mapping"},
	} {
		t.Run(tt.cmd, func(t *testing.T) {
			te := coretest.DistroEnv(t, "debian", "fs_setup:\n"+strings.Replace(entry, "%q", `"`+tt.cmd+`"`, 1)+good, "/dev/vdb")
			fakeDisks{}.install(te)
			withDevices(te).fixed["/dev/vdb"] = 10 << 30
			err := te.RunFunc(DiskSetup)
			want := append([]string{}, calls...)
			if tt.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, tt.run)
			} else {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err %v, want %q", err, tt.err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Errorf("the error shows the command: %v", err)
				}
			}
			te.WantCalls(append(append(want, calls...), "sh -c mkfs.xfs /dev/vdb")...)
		})
	}
}
