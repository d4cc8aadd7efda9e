package scripts

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// writeFilesDriver runs cloud-init 22.4's own cc_write_files.handle on
// each config, in a directory of its own standing for "/" (absolute paths
// are moved under it; it is the working directory, for relative ones). It
// prints, per config, the files written (content in base64, permission
// bits) and whether the module failed.
const writeFilesDriver = `
import base64, os, stat, tempfile
from cloudinit.config import cc_write_files
class Distro:
    default_owner = "root:root"
class Cloud:
    distro = Distro()
out = []
for cfg in json.load(sys.stdin):
    root = tempfile.mkdtemp()
    os.chdir(root)
    for f in cfg.get("write_files") or []:
        p = f.get("path")
        if isinstance(p, str) and p.startswith("/"):
            f["path"] = root + p
    failed = False
    try:
        cc_write_files.handle("write_files", cfg, Cloud(), logging.getLogger(), [])
    except Exception:
        failed = True
    files = {}
    for d, _, names in os.walk(root):
        for n in names:
            full = os.path.join(d, n)
            with open(full, "rb") as fh:
                data = fh.read()
            files["/" + os.path.relpath(full, root)] = {"content": base64.b64encode(data).decode(), "mode": stat.S_IMODE(os.stat(full).st_mode)}
    out.append({"files": files, "failed": failed})
print(json.dumps(out))
`

// writeFilesOutcome is what a run of write_files leaves: the files (their
// content, base64, and permission bits) and whether the module failed.
type writeFilesOutcome struct {
	Files map[string]struct {
		Content string
		Mode    int
	}
	Failed bool
}

// writeFilesDifferences are the cases where earlyinit's write_files
// deliberately does not do what cloud-init 22.4's does, and why
// (docs/cloud-config.md lists them).
var writeFilesDifferences = map[string]string{
	"permissions not octal": "cloud-init writes the file with 0644 and logs a warning (decode_perms); earlyinit refuses the entry with an error: a mistyped mode must not widen a file meant to be private",
	"unknown encoding":      "cloud-init writes the encoded text as it is, with a warning; earlyinit refuses the entry: base64 text where a binary was meant helps nobody",
	"no path":               "cloud-init skips the entry with a warning and the module succeeds; earlyinit skips it too but fails the module, naming the entry, so that the status shows it",
	"integer content":       "cloud-init's write_file cannot encode an integer and the module fails, writing nothing further; earlyinit writes it as YAML read it (42), the text the user wrote",
	"unknown owner":         "cloud-init writes the file, then fails on the owner it cannot find, leaving the file root's; earlyinit refuses the entry before writing anything",
}

// TestWriteFilesAsCloudInit: the files write_files leaves, and whether it
// fails, are cloud-init 22.4's (cc_write_files.handle run on the same
// config), but for writeFilesDifferences.
func TestWriteFilesAsCloudInit(t *testing.T) {
	gz := base64.StdEncoding.EncodeToString(gzipBytes(t, []byte("gzipped\n")))
	cases := []struct{ name, cfg string }{
		{"plain", "write_files: [{path: /etc/a.txt, content: \"hello\\n\"}]"},
		{"no content", "write_files: [{path: /etc/empty}]"},
		{"permissions string", "write_files: [{path: /etc/a, content: x, permissions: '0600'}]"},
		{"permissions 0o string", "write_files: [{path: /etc/a, content: x, permissions: '0o750'}]"},
		{"permissions spaces", "write_files: [{path: /etc/a, content: x, permissions: ' 640 '}]"},
		{"permissions octal integer", "write_files: [{path: /etc/a, content: x, permissions: 0600}]"},
		{"permissions decimal integer", "write_files: [{path: /etc/a, content: x, permissions: 420}]"},
		{"permissions not octal", "write_files: [{path: /etc/a, content: x, permissions: rwxr-xr-x}]"},
		{"b64", "write_files: [{path: /etc/b, encoding: b64, content: " + base64.StdEncoding.EncodeToString([]byte("bin\x00ary")) + "}]"},
		{"B64 spaced", "write_files: [{path: /etc/b, encoding: ' B64 ', content: \"aGVs\\nbG8=\\n\"}]"},
		{"gz+b64", "write_files: [{path: /etc/g, encoding: gz+b64, content: " + gz + "}]"},
		{"gzip+base64", "write_files: [{path: /etc/g, encoding: gzip+base64, content: " + gz + "}]"},
		{"text/plain", "write_files: [{path: /etc/t, encoding: text/plain, content: abc}]"},
		{"unknown encoding", "write_files: [{path: /etc/t, encoding: zip, content: abc}]"},
		{"append", "write_files: [{path: /etc/ap, content: \"one\\n\"}, {path: /etc/ap, content: \"two\\n\", append: true, permissions: '0640'}]"},
		{"overwrite", "write_files: [{path: /etc/ow, content: first}, {path: /etc/ow, content: second}]"},
		{"relative path", "write_files: [{path: etc/rel.txt, content: r}]"},
		{"nested directories", "write_files: [{path: /a/b/c/d.txt, content: d}]"},
		{"dot dot", "write_files: [{path: /etc/../x.txt, content: d}]"},
		{"deferred", "write_files: [{path: /etc/later, content: l, defer: true}, {path: /etc/now, content: n}]"},
		{"no path", "write_files: [{content: lost}, {path: /etc/kept, content: k}]"},
		{"integer content", "write_files: [{path: /etc/n, content: 42}]"},
		{"unknown owner", "write_files: [{path: /etc/o, content: o, owner: 'nosuchuser:nosuchgroup'}]"},
		{"root owner", "write_files: [{path: /etc/o, content: o, owner: 'root:root'}]"},
	}
	var in []map[string]any
	for _, c := range cases {
		in = append(in, coretest.NewEnv(t, c.cfg).Cfg)
	}
	var want []writeFilesOutcome
	oracle.Run(t, writeFilesDriver, in, &want)
	if len(want) != len(cases) {
		t.Fatalf("%d answers for %d cases", len(want), len(cases))
	}
	used := map[string]bool{}
	for i, c := range cases {
		te := coretest.NewEnv(t, c.cfg)
		err := te.RunFunc(WriteFiles)
		got := writeFilesOutcome{Files: map[string]struct {
			Content string
			Mode    int
		}{}, Failed: err != nil}
		base := map[string]bool{"/etc/passwd": true, "/etc/group": true, "/usr/sbin/useradd": true, "/usr/bin/passwd": true}
		filepath.WalkDir(te.Dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel := "/" + strings.TrimPrefix(p, te.Dir+"/")
			if base[rel] {
				return nil
			}
			b, err := os.ReadFile(p)
			fi, serr := os.Stat(p)
			if err != nil || serr != nil {
				t.Fatalf("%s: %v %v", rel, err, serr)
			}
			got.Files[rel] = struct {
				Content string
				Mode    int
			}{base64.StdEncoding.EncodeToString(b), int(fi.Mode().Perm())}
			return nil
		})
		same := reflect.DeepEqual(got, want[i])
		if why, ok := writeFilesDifferences[c.name]; ok {
			used[c.name] = true
			if same {
				t.Errorf("%s: earlyinit does as cloud-init now; drop the difference (%s)", c.name, why)
			}
			continue
		}
		if !same {
			t.Errorf("%s: %s\nearlyinit: %+v (error %v)\ncloud-init: %+v", c.name, c.cfg, got, err, want[i])
		}
	}
	for name := range writeFilesDifferences {
		if !used[name] {
			t.Errorf("difference %q has no case", name)
		}
	}
}

func gzipBytes(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
