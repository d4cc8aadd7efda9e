package growpart

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// needTool skips a test when a partitioning tool is not installed
// (scripts/deps.sh installs them).
func needTool(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s is not installed: %v", name, err)
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// growFile grows partition num of the disk image in file, grown to size
// bytes first, as Grow does on a disk.
func growFile(t *testing.T, file string, size int64, num int) *Change {
	t.Helper()
	if err := os.Truncate(file, size); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(file, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := Grow(Disk{Name: file, RW: f, SectorSize: 512, Size: size}, num)
	if err != nil {
		t.Fatalf("Grow: %v", err)
	}
	return c
}

// TestSgdiskVerifies: sgdisk -v finds no problem in a GPT grown by Grow,
// made by sgdisk itself or by writeGPT, and sfdisk agrees on the sizes.
func TestSgdiskVerifies(t *testing.T) {
	needTool(t, "sgdisk")
	needTool(t, "sfdisk")
	for _, tt := range []struct {
		name string
		make func(t *testing.T, file string)
		size int64
		num  int
		want int64 // the partition's size after, in sectors
	}{
		{"sgdisk's table, grown disk", func(t *testing.T, file string) {
			run(t, "sgdisk", "-n", "1:2048:+32M", file)
		}, 128 * mib, 1, 262110 - 2048 + 1},
		{"sgdisk's table, odd disk size", func(t *testing.T, file string) {
			run(t, "sgdisk", "-n", "1:2048:+16M", "-n", "2:0:+8M", file)
		}, 100*mib + 12345, 2, 204790 - (2048 + 32768) + 1},
		{"writeGPT's table, grown disk", func(t *testing.T, file string) {
			f, err := os.OpenFile(file, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			writeGPT(t, f, 512, 64*mib, gptPart{first: 2048, last: 67583})
		}, 128 * mib, 1, 262110 - 2048 + 1},
		{"writeGPT's table, backup in place", func(t *testing.T, file string) {
			f, err := os.OpenFile(file, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			writeGPT(t, f, 512, 64*mib, gptPart{first: 2048, last: 67583})
		}, 64 * mib, 1, 131038 - 2048 + 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "disk.img")
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(file, 64*mib); err != nil {
				t.Fatal(err)
			}
			tt.make(t, file)
			if out := run(t, "sgdisk", "-v", file); !strings.Contains(out, "No problems found") {
				t.Fatalf("the image before growing does not verify:\n%s", out)
			}
			c := growFile(t, file, tt.size, tt.num)
			if !c.Grown() || c.NewSize != tt.want {
				t.Fatalf("Grow = %v, want %d sectors", c, tt.want)
			}
			if out := run(t, "sgdisk", "-v", file); !strings.Contains(out, "No problems found") {
				t.Fatalf("sgdisk -v after Grow:\n%s", out)
			}
			dump := run(t, "sfdisk", "--dump", file)
			if want := fmt.Sprintf("size=%12d", tt.want); !strings.Contains(dump, want) {
				t.Errorf("sfdisk --dump has no %q:\n%s", want, dump)
			}
		})
	}
}

// TestSfdiskVerifies: sfdisk -V finds no error in an MBR grown by Grow,
// and sees the size growpart would give.
func TestSfdiskVerifies(t *testing.T) {
	needTool(t, "sfdisk")
	file := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(file, 64*mib); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sfdisk", "-q", file)
	cmd.Stdin = strings.NewReader("start=2048, size=65536, type=83\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("sfdisk: %v\n%s", err, out)
	}
	c := growFile(t, file, 128*mib, 1)
	if want := 262144 - 33 - 2048; c.NewSize != int64(want) {
		t.Fatalf("Grow = %v, want %d sectors", c, want)
	}
	if out := run(t, "sfdisk", "-V", file); !strings.Contains(out, "No errors detected") {
		t.Fatalf("sfdisk -V:\n%s", out)
	}
	if dump := run(t, "sfdisk", "--dump", file); !strings.Contains(dump, "start=        2048, size=      260063, type=83") {
		t.Errorf("sfdisk --dump:\n%s", dump)
	}
}
