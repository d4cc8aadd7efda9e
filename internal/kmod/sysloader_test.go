package kmod

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeKernel records the module system calls and answers with its errors.
type fakeKernel struct {
	finitErr, initErr error
	finits            []string // "CONTENT flags=N"
	inits             []string // CONTENT
}

func (k *fakeKernel) FinitModule(fd int, params string, flags int) error {
	buf := make([]byte, 64)
	n, err := unix.Pread(fd, buf, 0)
	if err != nil {
		return err
	}
	if params != "" {
		return errors.New("unexpected parameters " + params)
	}
	k.finits = append(k.finits, string(buf[:n])+" flags="+map[int]string{0: "0", unix.MODULE_INIT_COMPRESSED_FILE: "compressed"}[flags])
	return k.finitErr
}

func (k *fakeKernel) InitModule(image []byte, params string) error {
	k.inits = append(k.inits, string(image))
	return k.initErr
}

func TestSysLoaderLoad(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"a.ko": "plain", "b.ko.xz": "xz data", "c.ko.zst": "zstd data", "d.ko.gz": "gzip data"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name, file        string
		finitErr, initErr error
		finits, inits     []string
		err               []string // substrings of the error; nil for none
	}{
		{name: "plain", file: "a.ko", finits: []string{"plain flags=0"}},
		{name: "xz given to the kernel", file: "b.ko.xz", finits: []string{"xz data flags=compressed"}},
		{name: "zstd given to the kernel", file: "c.ko.zst", finits: []string{"zstd data flags=compressed"}},
		{name: "gzip given to the kernel", file: "d.ko.gz", finits: []string{"gzip data flags=compressed"}},
		{name: "loaded meanwhile", file: "a.ko", finitErr: unix.EEXIST, finits: []string{"plain flags=0"}},
		{name: "compressed loaded meanwhile", file: "b.ko.xz", finitErr: unix.EEXIST, finits: []string{"xz data flags=compressed"}},
		{name: "no finit_module", file: "a.ko", finitErr: unix.ENOSYS, finits: []string{"plain flags=0"}, inits: []string{"plain"}},
		{name: "no finit_module, init_module fails", file: "a.ko", finitErr: unix.ENOSYS, initErr: unix.ENOEXEC,
			finits: []string{"plain flags=0"}, inits: []string{"plain"}, err: []string{"a.ko", unix.ENOEXEC.Error()}},
		{name: "kernel without CONFIG_MODULE_DECOMPRESS", file: "c.ko.zst", finitErr: unix.EOPNOTSUPP,
			finits: []string{"zstd data flags=compressed"}, err: []string{"c.ko.zst", "zstd", "CONFIG_MODULE_DECOMPRESS", "uncompressed"}},
		{name: "kernel before 5.17 or other format", file: "b.ko.xz", finitErr: unix.EINVAL,
			finits: []string{"xz data flags=compressed"}, err: []string{"b.ko.xz", "xz", "CONFIG_MODULE_DECOMPRESS"}},
		{name: "compressed, no finit_module: nothing to unpack with", file: "b.ko.xz", finitErr: unix.ENOSYS,
			finits: []string{"xz data flags=compressed"}, err: []string{"b.ko.xz", "CONFIG_MODULE_DECOMPRESS"}},
		{name: "bad module", file: "a.ko", finitErr: unix.ENOEXEC, finits: []string{"plain flags=0"}, err: []string{"a.ko", unix.ENOEXEC.Error()}},
		{name: "missing file", file: "e.ko", err: []string{"e.ko"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := &fakeKernel{finitErr: tt.finitErr, initErr: tt.initErr}
			err := SysLoader{Dir: dir, sys: k}.Load(tt.file)
			if tt.err == nil && err != nil {
				t.Errorf("Load(%s): %v", tt.file, err)
			}
			if tt.err != nil {
				if err == nil {
					t.Errorf("Load(%s) = nil, want an error", tt.file)
				} else {
					for _, s := range tt.err {
						if !strings.Contains(err.Error(), s) {
							t.Errorf("Load(%s) = %q, want it to contain %q", tt.file, err, s)
						}
					}
				}
			}
			if strings.Join(k.finits, "|") != strings.Join(tt.finits, "|") || strings.Join(k.inits, "|") != strings.Join(tt.inits, "|") {
				t.Errorf("finit_module calls %q, init_module calls %q; want %q, %q", k.finits, k.inits, tt.finits, tt.inits)
			}
		})
	}
}

func TestCompression(t *testing.T) {
	for file, want := range map[string]string{
		"kernel/fs/fat/vfat.ko": "", "kernel/fs/fat/vfat.ko.xz": "xz", "vfat.ko.zst": "zstd",
		"vfat.ko.gz": "gzip", "vfat.ko.bz2": "", "xz.ko": "", "vfat.xz": "",
	} {
		if got := Compression(file); got != want {
			t.Errorf("Compression(%q) = %q, want %q", file, got, want)
		}
	}
}

// TestNoDecompressors: the builds that run in the initramfs (tags initrd
// and initrd,nolate) link no module decompressor (u-root's kmodule brought
// xz, zstd and parallel gzip, each with tables built at start-up in every
// process: issue 18). The full build links klauspost's zstd package for
// one reason, `earlyinit setup own` compressing without the zstd tool
// (issue 31); it stays out of every other process's start-up: its
// packages' initialisation allocates under 16 KiB (GODEBUG=inittrace,
// bytes counted, not time).
func TestNoDecompressors(t *testing.T) {
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	run := func(args ...string) string {
		t.Helper()
		var stderr bytes.Buffer
		cmd := exec.Command(gobin, args...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", gobin, strings.Join(args, " "), err, stderr.String())
		}
		return string(out)
	}
	const pkg = "github.com/earlyinit/earlyinit/cmd/earlyinit"
	const zstdPkg = "github.com/klauspost/compress/zstd"
	for _, tags := range []string{"initrd", "initrd,nolate", ""} {
		deps := strings.Fields(run("list", "-deps", "-tags", tags, pkg))
		if len(deps) < 50 {
			t.Fatalf("tags %q: go list -deps listed %d packages: %q", tags, len(deps), deps)
		}
		for _, d := range deps {
			for _, bad := range []string{"github.com/u-root/u-root/pkg/kmodule", "github.com/ulikunitz/xz", zstdPkg, "github.com/klauspost/pgzip"} {
				if d == bad && (tags != "" || bad != zstdPkg) {
					t.Errorf("tags %q: earlyinit links %s", tags, d)
				}
			}
		}
	}

	bin := filepath.Join(t.TempDir(), "earlyinit")
	run("build", "-o", bin, pkg)
	cmd := exec.Command(bin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var trace bytes.Buffer
	cmd.Stderr = &trace
	if err := cmd.Run(); err != nil {
		t.Fatalf("earlyinit version: %v\n%s", err, trace.String())
	}
	// init github.com/klauspost/compress/zstd @14 ms, 0.037 ms clock, 0 bytes, 0 allocs
	seen, bytesInit := 0, 0
	for _, line := range strings.Split(trace.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 11 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/klauspost/") || f[8] != "bytes," {
			continue
		}
		n, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("inittrace line %q: %v", line, err)
		}
		seen++
		bytesInit += n
	}
	if seen == 0 {
		t.Fatalf("inittrace shows no klauspost package though the full build links %s:\n%s", zstdPkg, trace.String())
	}
	if bytesInit > 16<<10 {
		t.Errorf("klauspost's packages allocate %d bytes at every start of earlyinit, want at most 16 KiB:\n%s", bytesInit, trace.String())
	}
}

// TestSysLoaderGunzip: a gzip module the kernel cannot unpack (EINVAL:
// finit_module without MODULE_INIT_COMPRESSED_FILE, before Linux 5.17, or
// a kernel built to unpack another format; EOPNOTSUPP: without
// CONFIG_MODULE_DECOMPRESS; ENOSYS: no finit_module, before 3.8) is
// unpacked in Go and given to init_module; the kernel is asked first.
func TestSysLoaderGunzip(t *testing.T) {
	dir := t.TempDir()
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("ELF module image"))
	zw.Close()
	files := map[string][]byte{"m.ko.gz": gz.Bytes(), "bad.ko.gz": []byte("not gzip at all"), "big.ko.gz": nil}
	var big bytes.Buffer
	zw = gzip.NewWriter(&big)
	zw.Write(make([]byte, 4096))
	zw.Close()
	files["big.ko.gz"] = big.Bytes()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	defer func(n int64) { maxUnpacked = n }(maxUnpacked)
	maxUnpacked = 1024
	head := func(b []byte) string { return string(b[:min(len(b), 64)]) + " flags=compressed" }
	for _, tt := range []struct {
		name, file        string
		finitErr, initErr error
		inits             []string
		err               []string
	}{
		{name: "kernel unpacks it", file: "m.ko.gz"},
		{name: "before 5.17 (EINVAL)", file: "m.ko.gz", finitErr: unix.EINVAL, inits: []string{"ELF module image"}},
		{name: "no CONFIG_MODULE_DECOMPRESS (EOPNOTSUPP)", file: "m.ko.gz", finitErr: unix.EOPNOTSUPP, inits: []string{"ELF module image"}},
		{name: "no finit_module (ENOSYS)", file: "m.ko.gz", finitErr: unix.ENOSYS, inits: []string{"ELF module image"}},
		{name: "loaded meanwhile", file: "m.ko.gz", finitErr: unix.EINVAL, initErr: unix.EEXIST, inits: []string{"ELF module image"}},
		{name: "init_module refuses the image", file: "m.ko.gz", finitErr: unix.EINVAL, initErr: unix.ENOEXEC,
			inits: []string{"ELF module image"}, err: []string{"m.ko.gz", unix.ENOEXEC.Error()}},
		{name: "another error is not retried", file: "m.ko.gz", finitErr: unix.ENOEXEC, err: []string{"m.ko.gz", unix.ENOEXEC.Error()}},
		{name: "not gzip", file: "bad.ko.gz", finitErr: unix.EINVAL, err: []string{"bad.ko.gz", "gzip", unix.EINVAL.Error()}},
		{name: "past the bound", file: "big.ko.gz", finitErr: unix.EINVAL, err: []string{"big.ko.gz", "past 1024 bytes"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			k := &fakeKernel{finitErr: tt.finitErr, initErr: tt.initErr}
			err := SysLoader{Dir: dir, sys: k}.Load(tt.file)
			if tt.err == nil && err != nil {
				t.Errorf("Load(%s): %v", tt.file, err)
			}
			if tt.err != nil {
				if err == nil {
					t.Errorf("Load(%s) = nil, want an error", tt.file)
				}
				for _, s := range tt.err {
					if err != nil && !strings.Contains(err.Error(), s) {
						t.Errorf("Load(%s) = %q, want it to contain %q", tt.file, err, s)
					}
				}
			}
			if want := head(files[tt.file]); len(k.finits) != 1 || k.finits[0] != want {
				t.Errorf("finit_module calls %q, want one with the compressed file and the flag", k.finits)
			}
			if strings.Join(k.inits, "|") != strings.Join(tt.inits, "|") {
				t.Errorf("init_module calls %q, want %q", k.inits, tt.inits)
			}
		})
	}
}
