package blockdev

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// need fails the test when tool is missing: the tests use real mkfs
// tools and blkid as the oracle, and `make deps` installs them.
func need(t testing.TB, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			// Debian keeps mkfs in /sbin, which a user PATH may lack.
			if _, err2 := os.Stat(filepath.Join("/usr/sbin", tool)); err2 == nil {
				continue
			}
			t.Fatalf("%s not found (%v): run make deps", tool, err)
		}
	}
}

// run runs a command, failing the test with its output on error.
func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	need(t, name)
	path, err := exec.LookPath(name)
	if err != nil {
		path = filepath.Join("/usr/sbin", name)
	}
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "MTOOLS_SKIP_CHECK=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runIn is run with stdin.
func runIn(t testing.TB, stdin, name string, args ...string) {
	t.Helper()
	need(t, name)
	path, err := exec.LookPath(name)
	if err != nil {
		path = filepath.Join("/usr/sbin", name)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// blkid returns `blkid -p -o export file` as a map (KEY -> value).
func blkid(t testing.TB, file string) map[string]string {
	t.Helper()
	need(t, "blkid")
	path, err := exec.LookPath("blkid")
	if err != nil {
		path = "/usr/sbin/blkid"
	}
	out, err := exec.Command(path, "-p", "-o", "export", file).Output()
	// Exit status 2 means nothing was found: an empty map.
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 2 {
		return map[string]string{}
	}
	if err != nil {
		t.Fatalf("blkid -p -o export %s: %v", file, err)
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok {
			m[k] = unescapeExport(v)
		}
	}
	return m
}

// unescapeExport undoes blkid -o export's quoting: "M-" sets a byte's
// high bit, "^X" is a control character, a backslash quotes for the shell.
func unescapeExport(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		var hi byte
		if strings.HasPrefix(s[i:], "M-") && i+2 < len(s) {
			hi = 0x80
			i += 2
		}
		c := s[i]
		switch {
		case c == '^' && i+1 < len(s):
			i++
			c = s[i] ^ 0x40
		case c == '\\' && i+1 < len(s):
			i++
			c = s[i]
		}
		b.WriteByte(hi | c)
	}
	return b.String()
}

// readHead reads the first n bytes of a file (mkfs.xfs images are 300 MB).
func readHead(t testing.TB, p string, n int) []byte {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := io.ReadFull(f, b); err != nil {
		t.Fatalf("read %d bytes of %s: %v", n, p, err)
	}
	return b
}

// sparse creates an empty file of size bytes in dir.
func sparse(t testing.TB, dir, name string, size int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

// probeFile probes a whole file.
func probeFile(t testing.TB, p string) (FS, error) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	return Probe(f, st.Size())
}

// checkBlkid compares a probe of file with blkid's answer.
func checkBlkid(t *testing.T, file string) FS {
	t.Helper()
	want := blkid(t, file)
	got, err := probeFile(t, file)
	if err != nil {
		t.Fatalf("Probe(%s): %v (blkid says %v)", filepath.Base(file), err, want)
	}
	if got.Type != want["TYPE"] || got.Label != want["LABEL"] || got.UUID != want["UUID"] {
		t.Errorf("Probe(%s) = %+v, blkid says TYPE=%q LABEL=%q UUID=%q", filepath.Base(file), got, want["TYPE"], want["LABEL"], want["UUID"])
	}
	return got
}
