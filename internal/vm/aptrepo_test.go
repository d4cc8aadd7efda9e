package vm

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netns"

	"github.com/earlyinit/earlyinit/internal/httpget/httpgettest"
	"github.com/earlyinit/earlyinit/internal/pgparmor"
)

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: `make deps` installs it", tool)
		}
	}
}

var testDeb = Deb{
	Name: "ei-unit-marker", Version: "1.0-1", Description: "earlyinit unit test package",
	Files: map[string]string{"/usr/share/ei-unit-marker/marker.txt": "from the test repository\n"},
}

// testRepo builds testDeb and a repository of it.
func testRepo(t *testing.T) (*aptRepo, string) {
	t.Helper()
	needTools(t, "dpkg-deb", "gpg", "gpgv")
	deb, err := BuildDeb(t.TempDir(), testDeb)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := NewAptRepo(filepath.Join(t.TempDir(), "repo"), deb)
	if err != nil {
		t.Fatal(err)
	}
	return repo, deb
}

func TestDebCheck(t *testing.T) {
	ok := testDeb
	for _, tc := range []struct {
		name string
		edit func(d *Deb)
		want string // "" for valid
	}{
		{"valid", func(d *Deb) {}, ""},
		{"upper-case name", func(d *Deb) { d.Name = "Marker" }, "package name"},
		{"option name", func(d *Deb) { d.Name = "-x" }, "package name"},
		{"version with blank", func(d *Deb) { d.Version = "1.0 2" }, "version"},
		{"version not a digit first", func(d *Deb) { d.Version = "v1" }, "version"},
		{"two-line description", func(d *Deb) { d.Description = "a\nb" }, "description"},
		{"arch", func(d *Deb) { d.Arch = "amd64;x" }, "architecture"},
		{"relative file", func(d *Deb) { d.Files = map[string]string{"etc/x": ""} }, "clean absolute path"},
		{"dot-dot file", func(d *Deb) { d.Files = map[string]string{"/usr/../../x": ""} }, "clean absolute path"},
		{"control file", func(d *Deb) { d.Files = map[string]string{"/DEBIAN/postinst": ""} }, "clean absolute path"},
		{"no files", func(d *Deb) { d.Files = nil }, "no files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := ok
			tc.edit(&d)
			err := d.check()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("check: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("check = %v, want an error about %s", err, tc.want)
			}
		})
	}
}

// TestAptRepo reads back what BuildDeb and NewAptRepo wrote: the .deb's
// fields and files (dpkg-deb), Packages's Filename, Size and SHA256 of the
// copy in the repository, Release's size and SHA256 of Packages, and
// InRelease verified by gpgv with the public key (and not with another
// repository's).
func TestAptRepo(t *testing.T) {
	repo, deb := testRepo(t)
	if filepath.Base(deb) != "ei-unit-marker_1.0-1_all.deb" {
		t.Errorf("deb file %s, want ei-unit-marker_1.0-1_all.deb", deb)
	}
	contents, err := exec.Command("dpkg-deb", "--contents", deb).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^-rw-r--r-- root/root\s+25 .* \./usr/share/ei-unit-marker/marker\.txt$`).Match(contents) {
		t.Errorf("dpkg-deb --contents: want marker.txt, 0644 root/root, 25 bytes:\n%s", contents)
	}

	b, err := os.ReadFile(filepath.Join(repo.Dir, "Packages"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := ControlStanzas(bytes.NewReader(b))
	if err != nil || len(st) != 1 {
		t.Fatalf("Packages: %d stanzas, %v:\n%s", len(st), err, b)
	}
	p := st[0]
	debBytes, err := os.ReadFile(filepath.Join(repo.Dir, "ei-unit-marker_1.0-1_all.deb"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(debBytes)
	for k, want := range map[string]string{
		"Package": "ei-unit-marker", "Version": "1.0-1", "Architecture": "all",
		"Description": "earlyinit unit test package",
		"Filename":    "./ei-unit-marker_1.0-1_all.deb",
		"Size":        strconv.Itoa(len(debBytes)),
		"SHA256":      hex.EncodeToString(sum[:]),
	} {
		if p[k] != want {
			t.Errorf("Packages: %s = %q, want %q", k, p[k], want)
		}
	}

	rel, err := os.ReadFile(filepath.Join(repo.Dir, "Release"))
	if err != nil {
		t.Fatal(err)
	}
	psum := sha256.Sum256(b)
	if want := fmt.Sprintf("SHA256:\n %x %d Packages\n", psum, len(b)); !strings.Contains(string(rel), want) {
		t.Errorf("Release lacks %q:\n%s", want, rel)
	}
	m := regexp.MustCompile(`(?m)^Date: (.*)$`).FindSubmatch(rel)
	if m == nil {
		t.Fatalf("Release has no Date:\n%s", rel)
	}
	if d, err := time.Parse(time.RFC1123, string(m[1])); err != nil || d.After(time.Now()) {
		t.Errorf("Release Date %q (%v): want an RFC 1123 date in the past", m[1], err)
	}

	// gpgv with the key, then with another repository's.
	signed := gpgv(t, repo.PublicKey, filepath.Join(repo.Dir, "InRelease"))
	if signed.err != nil {
		t.Fatalf("gpgv InRelease with the repository's key: %v\n%s", signed.err, signed.log)
	}
	if !bytes.Equal(signed.data, rel) {
		t.Errorf("InRelease signs %q, want Release %q", signed.data, rel)
	}
	other, _ := testRepo(t)
	if other.PublicKey == repo.PublicKey {
		t.Fatalf("two repositories share a key")
	}
	if r := gpgv(t, other.PublicKey, filepath.Join(repo.Dir, "InRelease")); r.err == nil {
		t.Errorf("gpgv verified InRelease with another key")
	}
}

type gpgvResult struct {
	data []byte
	log  string
	err  error
}

// gpgv verifies file with the armoured key, de-armoured as the apt module
// de-armours a source's key, and returns what was signed.
func gpgv(t *testing.T, key, file string) gpgvResult {
	t.Helper()
	bin, err := pgparmor.Dearmor(key)
	if err != nil {
		t.Fatalf("the public key does not de-armour: %v", err)
	}
	dir := t.TempDir()
	ring := filepath.Join(dir, "key.gpg")
	if err := os.WriteFile(ring, bin, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "signed")
	log, err := exec.Command("gpgv", "--keyring", ring, "--output", out, file).CombinedOutput()
	data, _ := os.ReadFile(out)
	return gpgvResult{data, string(log), err}
}

// TestAptRepoWithApt points this machine's apt-get, in directories of its
// own, at the repository served over HTTPS on 127.0.0.1 with a test CA's
// certificate: with the key as signed-by, update and download work (the
// certificate's IP address, the signature and the hashes all checked by
// apt itself) and the .deb is served once; with another key, update
// fails.
func TestAptRepoWithApt(t *testing.T) {
	needTools(t, "apt-get")
	repo, deb := testRepo(t)
	ca := httpgettest.NewCA(t, "earlyinit apt test CA")
	srv := httpgettest.Server(t, ca.Issue(t, httpgettest.Leaf{}), nil, repo.Handler())
	other, _ := testRepo(t)

	aptGet := func(t *testing.T, key string, args ...string) (string, error) {
		t.Helper()
		dir := t.TempDir()
		ring, err := pgparmor.Dearmor(key)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{
			"ca.pem":       string(ca.PEM),
			"key.gpg":      string(ring),
			"sources.list": "deb [signed-by=" + filepath.Join(dir, "key.gpg") + "] " + srv.URL + "/ ./\n",
		}
		if err := WriteTree(dir, files); err != nil {
			t.Fatal(err)
		}
		for _, d := range []string{"state/lists/partial", "cache/archives/partial", "parts", "out"} {
			if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		var out []byte
		for _, a := range [][]string{{"update"}, args} {
			if len(a) == 0 {
				continue
			}
			argv := []string{
				"-o", "Dir::Etc::SourceList=" + filepath.Join(dir, "sources.list"),
				"-o", "Dir::Etc::SourceParts=" + filepath.Join(dir, "parts"),
				"-o", "Dir::State=" + filepath.Join(dir, "state"),
				"-o", "Dir::Cache=" + filepath.Join(dir, "cache"),
				"-o", "Acquire::https::CaInfo=" + filepath.Join(dir, "ca.pem"),
				"-o", "Acquire::http::Proxy=DIRECT", "-o", "Acquire::https::Proxy=DIRECT",
				"-o", "APT::Sandbox::User=root", "-o", "Debug::NoLocking=1",
				"-o", "Acquire::Retries=0", "-q",
			}
			cmd := exec.Command("apt-get", append(argv, a...)...)
			cmd.Dir = filepath.Join(dir, "out")
			b, err := cmd.CombinedOutput()
			out = append(out, b...)
			if err != nil {
				return string(out), fmt.Errorf("apt-get %s: %w", a[0], err)
			}
			if regexp.MustCompile(`(?m)^[WE]: `).Match(b) {
				return string(out), fmt.Errorf("apt-get %s warned", a[0])
			}
		}
		if len(args) > 0 && args[0] == "download" {
			got, err := os.ReadFile(filepath.Join(dir, "out", filepath.Base(deb)))
			want, _ := os.ReadFile(deb)
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("apt-get download left %v (%d bytes), want the repository's .deb (%d bytes)", err, len(got), len(want))
			}
		}
		return string(out), nil
	}

	t.Run("signed", func(t *testing.T) {
		out, err := aptGet(t, repo.PublicKey, "download", "ei-unit-marker")
		if err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		if n := repo.Served("/" + filepath.Base(deb)); n != 1 {
			t.Errorf("the .deb was served %d times, want 1: %v", n, repo.Requests())
		}
		if n := repo.Served("/InRelease"); n != 1 {
			t.Errorf("InRelease was served %d times, want 1: %v", n, repo.Requests())
		}
	})
	t.Run("other-key", func(t *testing.T) {
		out, err := aptGet(t, other.PublicKey)
		if err == nil || !strings.Contains(out, "NO_PUBKEY") {
			t.Errorf("apt-get update with another key: %v, want a NO_PUBKEY failure:\n%s", err, out)
		}
	})
}

// TestServeTLS serves the repository over HTTPS inside a namespace, as
// the QEMU test does for its guest, and fetches InRelease from inside it
// with the test CA trusted; a client trusting another CA is refused.
func TestServeTLS(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (ip netns)")
	}
	needTools(t, "ip")
	repo, _ := testRepo(t)
	ns, err := NewNetNS(fmt.Sprintf("eiunittls%d", os.Getpid()%100000), false)
	if err != nil {
		t.Fatal(err)
	}
	defer ns.Close()
	ca := httpgettest.NewCA(t, "earlyinit netns CA")
	cert := ca.Issue(t, httpgettest.Leaf{IPs: []net.IP{net.ParseIP(RouterIP)}})
	if err := ns.ServeTLS(RouterIP+":443", cert, repo.Handler()); err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(repo.Dir, "InRelease"))
	if err != nil {
		t.Fatal(err)
	}
	get := func(roots *x509.CertPool) (string, error) {
		conn, err := dialIn(ns.Name, RouterIP+":443")
		if err != nil {
			return "", err
		}
		tr := &http.Transport{
			// The socket was made in the namespace: the client uses it
			// for its one request.
			DialContext:       func(context.Context, string, string) (net.Conn, error) { return conn, nil },
			TLSClientConfig:   &tls.Config{RootCAs: roots},
			DisableKeepAlives: true,
		}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get("https://" + RouterIP + "/InRelease")
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			return "", fmt.Errorf("status %s", resp.Status)
		}
		return string(b), err
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	got, err := get(roots)
	if err != nil || got != string(want) {
		t.Errorf("GET https://%s/InRelease in the namespace = %q, %v; want InRelease", RouterIP, got, err)
	}
	if n := repo.Served("/InRelease"); n != 1 {
		t.Errorf("InRelease served %d times, want 1: %v", n, repo.Requests())
	}
	others := x509.NewCertPool()
	others.AddCert(httpgettest.NewCA(t, "another CA").Cert)
	if _, err := get(others); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client trusting another CA: %v, want a certificate error", err)
	}
}

// dialIn connects to addr from inside the namespace name: a socket belongs
// to the namespace of the thread that made it.
func dialIn(name, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		// The thread stays in the namespace: it ends locked and the
		// runtime discards it.
		h, err := netns.GetFromName(name)
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer h.Close()
		if err := netns.Set(h); err != nil {
			ch <- result{nil, err}
			return
		}
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}
