package nocloud

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/earlyinit/earlyinit/internal/datasource"
)

// statFS makes one file claim size bytes; reading it fails the test.
type statFS struct {
	fstest.MapFS
	t    *testing.T
	name string
	size int64
}

func (s statFS) Open(name string) (fs.File, error) {
	f, err := s.MapFS.Open(name)
	if err != nil || name != s.name {
		return f, err
	}
	return statFile{f, s}, nil
}

type statFile struct {
	fs.File
	s statFS
}

func (f statFile) Stat() (fs.FileInfo, error) {
	fi, err := f.File.Stat()
	return sizedInfo{fi, f.s.size}, err
}

func (f statFile) Read(p []byte) (int, error) {
	f.s.t.Errorf("%s was read though its size is over the limit", f.s.name)
	return 0, fs.ErrInvalid
}

type sizedInfo struct {
	fs.FileInfo
	size int64
}

func (i sizedInfo) Size() int64 { return i.size }

func TestSizeLimit(t *testing.T) {
	for _, tt := range []struct {
		name string
		size int64
	}{
		{"user-data", datasource.MaxFileSize + 1},
		{"vendor-data", 1 << 40},
		{"meta-data", MaxDocSize + 1},
		{"network-config", MaxDocSize + 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := statFS{MapFS: seed("instance-id: i-1\n", tt.name, "x"), t: t, name: tt.name, size: tt.size}
			_, err := Read(fsys)
			if err == nil || !strings.Contains(err.Error(), tt.name) || !strings.Contains(err.Error(), "limit") {
				t.Errorf("Read = %v, want a size error naming %s", err, tt.name)
			}
		})
	}
	// At the limit is fine.
	big := "instance-id: i-1\n#" + strings.Repeat("x", MaxDocSize-len("instance-id: i-1\n#"))
	if _, err := Read(seed(big)); err != nil {
		t.Errorf("Read(meta-data of exactly MaxDocSize) = %v", err)
	}
}
