package configdrive

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// writeTree writes files (name, content pairs) under a new temporary
// directory and returns it.
func writeTree(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i := 0; i+1 < len(files); i += 2 {
		p := filepath.Join(dir, files[i])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// readWithin runs Read on DriveFS(dir) and fails the test if it takes more
// than limit (os.DirFS blocks forever on a FIFO).
func readWithin(t *testing.T, dir string, limit time.Duration) (*instance.Data, error, time.Duration) {
	t.Helper()
	type result struct {
		d   *instance.Data
		err error
	}
	done := make(chan result, 1)
	t0 := time.Now()
	go func() {
		d, err := Read(datasource.DriveFS(dir, datasource.MaxDriveTotal))
		done <- result{d, err}
	}()
	select {
	case r := <-done:
		return r.d, r.err, time.Since(t0)
	case <-time.After(limit):
		t.Fatalf("Read of %s still running after %s", dir, limit)
		return nil, nil, 0
	}
}

// TestDriveFSUnchanged: the fixture drive reads the same through DriveFS as
// through os.DirFS.
func TestDriveFSUnchanged(t *testing.T) {
	want, err := Read(os.DirFS("testdata/config-2"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(datasource.DriveFS("testdata/config-2", datasource.MaxDriveTotal))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("DriveFS read\n  %+v\nos.DirFS read\n  %+v", got, want)
	}
}

// TestHostileDrive: FIFOs, device nodes and symlinks on a config drive
// reject it with an error naming the file, at once; a link is never
// followed out of the drive.
func TestHostileDrive(t *testing.T) {
	const md = `{"uuid": "i-1", "files": [{"path": "/etc/x", "content_path": "/content/0000"}]}`
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string
	}{
		{"meta_data.json a FIFO", func(t *testing.T, dir string) {
			replace(t, dir, "openstack/latest/meta_data.json", func(p string) error { return unix.Mkfifo(p, 0o644) })
		}, "openstack/latest/meta_data.json: is a FIFO"},
		{"user_data a FIFO", func(t *testing.T, dir string) {
			replace(t, dir, "openstack/latest/user_data", func(p string) error { return unix.Mkfifo(p, 0o644) })
		}, "openstack/latest/user_data: is a FIFO"},
		{"content a char device", func(t *testing.T, dir string) {
			replace(t, dir, "openstack/content/0000", func(p string) error {
				return unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(1, 5))) // /dev/zero
			})
		}, "openstack/content/0000: is a character device"},
		{"user_data a link to /etc/passwd", func(t *testing.T, dir string) {
			replace(t, dir, "openstack/latest/user_data", func(p string) error { return os.Symlink("/etc/passwd", p) })
		}, "openstack/latest/user_data: is a symbolic link"},
		{"content a link out of the drive", func(t *testing.T, dir string) {
			replace(t, dir, "openstack/content/0000", func(p string) error { return os.Symlink("../../../outside", p) })
		}, "openstack/content/0000: is a symbolic link"},
		{"version directory a link", func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "openstack/latest"), filepath.Join(dir, "real")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink("../real", filepath.Join(dir, "openstack/latest")); err != nil {
				t.Fatal(err)
			}
		}, "openstack/latest: is a symbolic link"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, "openstack/latest/meta_data.json", md, "openstack/latest/user_data", "#cloud-config\n",
				"openstack/content/0000", "x")
			tt.setup(t, dir)
			d, err, _ := readWithin(t, dir, 5*time.Second)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Read = %+v, %v; want an error containing %q", d, err, tt.want)
			}
		})
	}
}

func replace(t *testing.T, dir, name string, mk func(string) error) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := mk(p); err != nil {
		t.Fatalf("make %s (the tests run as root): %v", name, err)
	}
}

// TestManyFilesEntries: 200 "files" entries naming a 16 MiB content file
// (3.2 GiB in all through os.DirFS) stop at the 64 MiB drive total with an
// error naming the entry, quickly and with bounded memory.
func TestManyFilesEntries(t *testing.T) {
	var entries []string
	for i := range 200 {
		entries = append(entries, fmt.Sprintf(`{"path": "/etc/f%d", "content_path": "/content/0000"}`, i))
	}
	md := `{"uuid": "i-1", "files": [` + strings.Join(entries, ",") + `]}`
	dir := writeTree(t, "openstack/latest/meta_data.json", md)
	p := filepath.Join(dir, "openstack/content/0000")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(datasource.MaxFileSize); err != nil { // sparse
		t.Fatal(err)
	}
	f.Close()
	_, err, took := readWithin(t, dir, 20*time.Second)
	want := `"files" element 3: file /etc/f3: read openstack/content/0000: over the 67108864 byte limit for everything read from the drive`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Read = %v, want an error containing %q", err, want)
	}
	t.Logf("200 entries of 16 MiB rejected after %s", took)
}

// TestEmptyMetaData: an empty meta_data.json rejects the drive with an
// error naming the file.
func TestEmptyMetaData(t *testing.T) {
	dir := writeTree(t, "openstack/latest/meta_data.json", "")
	_, err, _ := readWithin(t, dir, 5*time.Second)
	want := "parse openstack/latest/meta_data.json: invalid JSON at byte 0 (line 1:1): unexpected end of JSON input"
	if err == nil || err.Error() != want {
		t.Fatalf("Read = %v, want %q", err, want)
	}
}

// TestDeepJSON: meta_data.json or network_data.json nested 100,000 deep is
// refused by encoding/json's depth limit with an error naming the file,
// without a stack overflow, in bounded time.
func TestDeepJSON(t *testing.T) {
	const depth = 100000
	deepList := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	deepObj := strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	for _, tt := range []struct {
		name, file string
		files      []string
	}{
		{"meta_data.json list", "openstack/latest/meta_data.json", []string{"openstack/latest/meta_data.json", deepList}},
		{"meta_data.json object", "openstack/latest/meta_data.json", []string{"openstack/latest/meta_data.json", deepObj}},
		{"meta in meta_data.json", "openstack/latest/meta_data.json", []string{"openstack/latest/meta_data.json", `{"uuid": "i-1", "meta": ` + deepObj + `}`}},
		{"network_data.json", "openstack/latest/network_data.json", []string{"openstack/latest/meta_data.json", `{"uuid": "i-1"}`, "openstack/latest/network_data.json", deepList}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeTree(t, tt.files...)
			_, err, took := readWithin(t, dir, 10*time.Second)
			if err == nil || !strings.Contains(err.Error(), "parse "+tt.file) || !strings.Contains(err.Error(), "exceeded max depth") {
				t.Fatalf("Read = %v, want a depth error naming %s", err, tt.file)
			}
			t.Logf("%s: %v after %s", tt.name, err, took)
		})
	}
}
