package vm

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Deb is a package BuildDeb makes: its control fields and its files.
type Deb struct {
	Name, Version string
	// Arch is the package's architecture; "" is "all".
	Arch        string
	Description string
	// Files are the package's files, absolute path in the root ->
	// content; each is 0644, its directories 0755, all root's.
	Files map[string]string
}

func (d Deb) arch() string {
	if d.Arch == "" {
		return "all"
	}
	return d.Arch
}

// FileName is the .deb's name, NAME_VERSION_ARCH.deb.
func (d Deb) FileName() string {
	return d.Name + "_" + d.Version + "_" + d.arch() + ".deb"
}

var (
	debNameRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9+.-]+$`) })
	debVersionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[0-9][A-Za-z0-9.+~-]*$`) })
	debArchRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9-]+$`) })
)

// check refuses what would not make a valid control file or would put a
// file outside the package's tree.
func (d Deb) check() error {
	if !debNameRE().MatchString(d.Name) {
		return fmt.Errorf("package name %q: want lower-case letters, digits and +.- (Debian policy 5.6.1)", d.Name)
	}
	if !debVersionRE().MatchString(d.Version) {
		return fmt.Errorf("package %s: version %q: want a digit then letters, digits and .+~-", d.Name, d.Version)
	}
	if !debArchRE().MatchString(d.arch()) {
		return fmt.Errorf("package %s: architecture %q: want lower-case letters, digits and -", d.Name, d.arch())
	}
	if d.Description == "" || strings.ContainsAny(d.Description, "\n\r") {
		return fmt.Errorf("package %s: description %q: want one non-empty line", d.Name, d.Description)
	}
	if len(d.Files) == 0 {
		return fmt.Errorf("package %s: no files", d.Name)
	}
	for p := range d.Files {
		if !strings.HasPrefix(p, "/") || path.Clean(p) != p || p == "/" || strings.HasPrefix(p, "/DEBIAN") || strings.ContainsAny(p, "\n\r\x00") {
			return fmt.Errorf("package %s: file %q: want a clean absolute path (not under /DEBIAN)", d.Name, p)
		}
	}
	return nil
}

// BuildDeb builds d with dpkg-deb (files owned by root, gzip) into dir
// and returns the .deb's path.
func BuildDeb(dir string, d Deb) (string, error) {
	if err := d.check(); err != nil {
		return "", fmt.Errorf("build deb: %w", err)
	}
	if _, err := exec.LookPath("dpkg-deb"); err != nil {
		return "", fmt.Errorf("build deb %s: dpkg-deb missing (apt-get install dpkg): %w", d.Name, err)
	}
	tree, err := os.MkdirTemp(dir, "deb-tree-")
	if err != nil {
		return "", fmt.Errorf("build deb %s: %w", d.Name, err)
	}
	defer os.RemoveAll(tree)
	control := fmt.Sprintf("Package: %s\nVersion: %s\nArchitecture: %s\nMaintainer: earlyinit tests <tests@earlyinit.test>\nSection: misc\nPriority: optional\nDescription: %s\n",
		d.Name, d.Version, d.arch(), d.Description)
	files := map[string]string{"DEBIAN/control": control}
	for p, c := range d.Files {
		files[strings.TrimPrefix(p, "/")] = c
	}
	if err := WriteTree(tree, files); err != nil {
		return "", fmt.Errorf("build deb %s: %w", d.Name, err)
	}
	// dpkg-deb wants DEBIAN 0755 (<= 0775) whatever the umask made.
	if err := filepath.WalkDir(tree, func(p string, e os.DirEntry, err error) error {
		if err != nil || !e.IsDir() {
			return err
		}
		return os.Chmod(p, 0o755)
	}); err != nil {
		return "", fmt.Errorf("build deb %s: %w", d.Name, err)
	}
	out := filepath.Join(dir, d.FileName())
	if err := run("dpkg-deb", "--root-owner-group", "-Zgzip", "--build", tree, out); err != nil {
		return "", fmt.Errorf("build deb %s: %w", d.Name, err)
	}
	return out, nil
}

// aptRepo is a flat apt repository ("deb [signed-by=KEY] URI ./") in Dir:
// the .debs, Packages (each package's control fields with Filename, Size
// and SHA256, as apt-ftparchive writes them), Release (Packages's size and
// SHA256) and InRelease, Release clear-signed with a throwaway OpenPGP key
// made for the repository; its public key, armoured, is PublicKey (the apt
// module's key:). Handler serves it and counts what it served.
type aptRepo struct {
	Dir string
	// PublicKey is the armoured public key InRelease verifies with.
	PublicKey string

	mu   sync.Mutex
	hits []repoRequest
}

// repoRequest is one request Handler answered.
type repoRequest struct {
	Method, Path string
	Status       int
}

// NewAptRepo makes the repository in dir (created if missing) with the
// .deb files debs, copied in. It needs dpkg-deb (the control fields) and
// gpg (the key and the signature); gpg works in a home of its own, removed
// afterwards with its agent stopped.
func NewAptRepo(dir string, debs ...string) (*aptRepo, error) {
	if len(debs) == 0 {
		return nil, errors.New("apt repository: no packages")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("apt repository %s: %w", dir, err)
	}
	names := map[string]bool{}
	var packages bytes.Buffer
	for _, deb := range debs {
		name := filepath.Base(deb)
		if !strings.HasSuffix(name, ".deb") || names[name] {
			return nil, fmt.Errorf("apt repository %s: %s: want .deb files of distinct names", dir, deb)
		}
		names[name] = true
		b, err := os.ReadFile(deb)
		if err != nil {
			return nil, fmt.Errorf("apt repository %s: %w", dir, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, fmt.Errorf("apt repository %s: %w", dir, err)
		}
		control, err := exec.Command("dpkg-deb", "--field", deb).Output()
		if err != nil {
			return nil, fmt.Errorf("apt repository %s: dpkg-deb --field %s (apt-get install dpkg): %w", dir, deb, err)
		}
		sum := sha256.Sum256(b)
		if packages.Len() > 0 {
			packages.WriteString("\n")
		}
		fmt.Fprintf(&packages, "%s\nFilename: ./%s\nSize: %d\nSHA256: %s\n", strings.TrimRight(string(control), "\n"), name, len(b), hex.EncodeToString(sum[:]))
	}
	if err := os.WriteFile(filepath.Join(dir, "Packages"), packages.Bytes(), 0o644); err != nil {
		return nil, fmt.Errorf("apt repository %s: %w", dir, err)
	}
	sum := sha256.Sum256(packages.Bytes())
	// An hour ago: apt refuses a Release dated in its future, and a
	// guest's clock may lag the host's a little.
	date := time.Now().UTC().Add(-time.Hour).Format(time.RFC1123)
	release := fmt.Sprintf("Origin: earlyinit-test\nLabel: earlyinit-test\nDate: %s\nDescription: earlyinit test repository\nSHA256:\n %s %d Packages\n",
		date, hex.EncodeToString(sum[:]), packages.Len())
	if err := os.WriteFile(filepath.Join(dir, "Release"), []byte(release), 0o644); err != nil {
		return nil, fmt.Errorf("apt repository %s: %w", dir, err)
	}
	key, err := signRelease(dir)
	if err != nil {
		return nil, fmt.Errorf("apt repository %s: %w", dir, err)
	}
	return &aptRepo{Dir: dir, PublicKey: key}, nil
}

// signRelease makes a throwaway signing key in a temporary gpg home,
// clear-signs dir/Release into dir/InRelease and returns the armoured
// public key.
func signRelease(dir string) (string, error) {
	if _, err := exec.LookPath("gpg"); err != nil {
		return "", fmt.Errorf("gpg missing (make deps installs gnupg): %w", err)
	}
	// Short: gpg-agent's socket lives there and a socket path has at most
	// 107 bytes.
	home, err := os.MkdirTemp("", "aptrepo-gpg-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(home)
	defer exec.Command("gpgconf", "--homedir", home, "--kill", "all").Run()
	gpg := func(args ...string) ([]byte, error) {
		cmd := exec.Command("gpg", append([]string{"--homedir", home, "--batch", "--no-tty", "--pinentry-mode", "loopback", "--passphrase", ""}, args...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("gpg %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return out, nil
	}
	const uid = "earlyinit test repository <repo@earlyinit.test>"
	if _, err := gpg("--quick-gen-key", uid, "ed25519", "sign", "2d"); err != nil {
		return "", err
	}
	if _, err := gpg("--digest-algo", "SHA256", "--clearsign", "--output", filepath.Join(dir, "InRelease"), filepath.Join(dir, "Release")); err != nil {
		return "", err
	}
	key, err := gpg("--armor", "--export", uid)
	if err != nil {
		return "", err
	}
	if !bytes.Contains(key, []byte("-----BEGIN PGP PUBLIC KEY BLOCK-----")) {
		return "", fmt.Errorf("gpg --armor --export gave no public key: %q", key)
	}
	return string(key), nil
}

// Handler serves the repository's files (a request's path cleaned, so
// ./InRelease is InRelease) and records each request.
func (r *aptRepo) Handler() http.Handler {
	files := http.FileServer(http.Dir(r.Dir))
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p := path.Clean("/" + req.URL.Path)
		req.URL.Path = p
		rec := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		files.ServeHTTP(rec, req)
		r.mu.Lock()
		r.hits = append(r.hits, repoRequest{Method: req.Method, Path: p, Status: rec.status})
		r.mu.Unlock()
	})
}

// Served counts the GET requests for path ("/NAME.deb") answered with the
// file (200, or 206 for a part).
func (r *aptRepo) Served(p string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, h := range r.hits {
		if h.Method == http.MethodGet && h.Path == p && (h.Status == http.StatusOK || h.Status == http.StatusPartialContent) {
			n++
		}
	}
	return n
}

// Requests returns every request answered so far, in order.
func (r *aptRepo) Requests() []repoRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]repoRequest(nil), r.hits...)
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wrote {
		s.status, s.wrote = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// ControlStanzas reads a Packages or status file (RFC 822-style stanzas
// separated by blank lines; continuation lines joined to their field with
// a newline) into one map per stanza.
func ControlStanzas(r io.Reader) ([]map[string]string, error) {
	var out []map[string]string
	cur := map[string]string{}
	last := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			if len(cur) > 0 {
				out = append(out, cur)
				cur, last = map[string]string{}, ""
			}
		case line[0] == ' ' || line[0] == '\t':
			if last == "" {
				return nil, fmt.Errorf("continuation line without a field: %q", line)
			}
			cur[last] += "\n" + strings.TrimSpace(line)
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				return nil, fmt.Errorf("not a field: %q", line)
			}
			last = k
			cur[k] = strings.TrimSpace(v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out, nil
}
