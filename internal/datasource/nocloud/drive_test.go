package nocloud

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/datasource"
)

// TestDriveFSUnchanged: the fixture seed reads the same through DriveFS as
// through os.DirFS.
func TestDriveFSUnchanged(t *testing.T) {
	want, err := Read(os.DirFS("testdata/cidata"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(datasource.DriveFS("testdata/cidata", datasource.MaxDriveTotal))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DriveFS read\n  %+v\nos.DirFS read\n  %+v", got, want)
	}
}

// TestHostileSeed: a FIFO, a device node or a symlink in a cidata drive or
// seed directory rejects it with an error naming the file, at once.
func TestHostileSeed(t *testing.T) {
	for _, tt := range []struct {
		file string
		mk   func(string) error
		want string
	}{
		{"meta-data", func(p string) error { return unix.Mkfifo(p, 0o644) }, "meta-data: is a FIFO"},
		{"user-data", func(p string) error { return unix.Mkfifo(p, 0o644) }, "user-data: is a FIFO"},
		{"vendor-data", func(p string) error { return unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))) }, "vendor-data: is a character device"},
		{"user-data", func(p string) error { return os.Symlink("/etc/shadow", p) }, "user-data: is a symbolic link"},
		{"network-config", func(p string) error { return os.Symlink("../outside", p) }, "network-config: is a symbolic link"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "meta-data"), []byte("instance-id: i-1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, tt.file)
			os.Remove(p)
			if err := tt.mk(p); err != nil {
				t.Fatalf("make %s (the tests run as root): %v", tt.file, err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := Read(datasource.DriveFS(dir, datasource.MaxDriveTotal))
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("Read = %v, want an error containing %q", err, tt.want)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Read still blocked after 5s")
			}
		})
	}
}
