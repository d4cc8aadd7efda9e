package imagecfg

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

// writeTree writes files (path in the root -> content; a content of
// "<dir>" makes a directory) under a new temporary directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if content == "<dir>" {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// cloudInitPython finds a python3 that can import cloudinit, "" if none.
func cloudInitPython() string {
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import cloudinit.util").Run() == nil {
			return py
		}
	}
	return ""
}

// oracleScript merges as cloud-init 22.4 would: read_conf_with_confd of
// earlyinit.cfg over read_conf_with_confd of cloud.cfg (mergemanydict:
// the first wins), printed as JSON, one line for each root given.
const oracleScript = `
import json, logging, sys
logging.disable(logging.CRITICAL)
from cloudinit import util
for root in sys.argv[1:]:
    early = util.read_conf_with_confd(root + "/etc/earlyinit/earlyinit.cfg")
    cloud = util.read_conf_with_confd(root + "/etc/cloud/cloud.cfg")
    print(json.dumps(util.mergemanydict([early, cloud]), sort_keys=True))
`

// normJSON turns v into what encoding/json gives back for it, for
// comparing with the oracle's output.
func normJSON(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestLoadAgainstCloudInit: the merge of the image's files is the one
// cloud-init's own read_conf_with_confd and mergemanydict give on the same
// tree (the installed cloud-init is the oracle), and the warnings name
// each file skipped.
func TestLoadAgainstCloudInit(t *testing.T) {
	var dirs, names []string
	var got []map[string]any
	for _, tt := range []struct {
		name      string
		files     map[string]string
		wantFiles []string
		warns     []string
	}{{
		name:      "cloud.cfg alone",
		files:     map[string]string{"etc/cloud/cloud.cfg": "users: [default]\ndisable_root: true\nssh_pwauth: no\nmode: 0644\n"},
		wantFiles: []string{"/etc/cloud/cloud.cfg"},
	}, {
		name: "dicts merge key by key, the .d file wins",
		files: map[string]string{
			"etc/cloud/cloud.cfg": `system_info:
  distro: rhel
  default_user: {name: cloud-user, groups: [adm, systemd-journal], shell: /bin/bash}
  paths: {cloud_dir: /var/lib/cloud/}
`,
			"etc/cloud/cloud.cfg.d/90-user.cfg": "system_info:\n  default_user: {name: rocky, gecos: Rocky}\n",
		},
		wantFiles: []string{"/etc/cloud/cloud.cfg", "/etc/cloud/cloud.cfg.d/90-user.cfg"},
	}, {
		name: "a list is replaced whole, not appended",
		files: map[string]string{
			"etc/cloud/cloud.cfg":               "cloud_init_modules: [bootcmd, write_files, mounts, ssh]\nssh_genkeytypes: [rsa, ecdsa, ed25519]\n",
			"etc/cloud/cloud.cfg.d/50-mods.cfg": "cloud_init_modules: [ssh]\n",
		},
		wantFiles: []string{"/etc/cloud/cloud.cfg", "/etc/cloud/cloud.cfg.d/50-mods.cfg"},
	}, {
		name: "the later .d file wins, in lexical order",
		files: map[string]string{
			"etc/cloud/cloud.cfg":               "ssh_pwauth: true\n",
			"etc/cloud/cloud.cfg.d/99-last.cfg": "ssh_pwauth: false\nmanage_etc_hosts: localhost\n",
			"etc/cloud/cloud.cfg.d/10-a.cfg":    "ssh_pwauth: true\nmanage_etc_hosts: true\npreserve_hostname: true\n",
			"etc/cloud/cloud.cfg.d/9-b.cfg":     "disable_root: false\n",
		},
		wantFiles: []string{"/etc/cloud/cloud.cfg", "/etc/cloud/cloud.cfg.d/10-a.cfg", "/etc/cloud/cloud.cfg.d/9-b.cfg", "/etc/cloud/cloud.cfg.d/99-last.cfg"},
	}, {
		name: "a file that does not parse is skipped, the rest used",
		files: map[string]string{
			"etc/cloud/cloud.cfg":              "disable_root: true\n",
			"etc/cloud/cloud.cfg.d/20-bad.cfg": "ssh_pwauth: true\n  bad: [\n",
			"etc/cloud/cloud.cfg.d/30-ok.cfg":  "ssh_pwauth: false\n",
		},
		wantFiles: []string{"/etc/cloud/cloud.cfg", "/etc/cloud/cloud.cfg.d/30-ok.cfg"},
		warns:     []string{"/etc/cloud/cloud.cfg.d/20-bad.cfg: line 2: mapping values are not allowed in this context: skipped"},
	}, {
		name: "a file that is not a mapping is skipped",
		files: map[string]string{
			"etc/cloud/cloud.cfg":                "- a\n- b\n",
			"etc/cloud/cloud.cfg.d/10-list.cfg":  "just a string\n",
			"etc/cloud/cloud.cfg.d/20-ok.cfg":    "preserve_hostname: true\n",
			"etc/cloud/cloud.cfg.d/30-empty.cfg": "",
		},
		wantFiles: []string{"/etc/cloud/cloud.cfg.d/20-ok.cfg", "/etc/cloud/cloud.cfg.d/30-empty.cfg"},
		warns: []string{
			"/etc/cloud/cloud.cfg: the top level is a list, not a mapping: skipped",
			"/etc/cloud/cloud.cfg.d/10-list.cfg: the top level is a string, not a mapping: skipped",
		},
	}, {
		name: "only *.cfg regular files are read",
		files: map[string]string{
			"etc/cloud/cloud.cfg.d/README":         "ssh_pwauth: true\n",
			"etc/cloud/cloud.cfg.d/05.cfg.bak":     "ssh_pwauth: true\n",
			"etc/cloud/cloud.cfg.d/dir.cfg":        "<dir>",
			"etc/cloud/cloud.cfg.d/dir.cfg/x.cfg":  "ssh_pwauth: true\n",
			"etc/cloud/cloud.cfg.d/05_logging.cfg": "ssh_pwauth: false\n",
		},
		wantFiles: []string{"/etc/cloud/cloud.cfg.d/05_logging.cfg"},
	}, {
		name: "no cloud.cfg, only the .d directory",
		files: map[string]string{
			"etc/cloud/cloud.cfg.d/10.cfg": "datasource_list: [ConfigDrive, None]\n",
		},
		wantFiles: []string{"/etc/cloud/cloud.cfg.d/10.cfg"},
	}, {
		name: "a file's merge_how is honoured",
		files: map[string]string{
			"etc/cloud/cloud.cfg":          "ssh_genkeytypes: [rsa]\nsystem_info: {default_user: {name: u, groups: [adm]}}\n",
			"etc/cloud/cloud.cfg.d/50.cfg": "merge_how: 'list(append)+dict(recurse_array)+str()'\nssh_genkeytypes: [ed25519]\nsystem_info: {default_user: {groups: [wheel]}}\n",
			"etc/cloud/cloud.cfg.d/60.cfg": "ssh_genkeytypes: [ecdsa]\n",
		},
		wantFiles: []string{"/etc/cloud/cloud.cfg", "/etc/cloud/cloud.cfg.d/50.cfg", "/etc/cloud/cloud.cfg.d/60.cfg"},
	}, {
		name: "earlyinit's files win over cloud-init's",
		files: map[string]string{
			"etc/cloud/cloud.cfg":                        "datasource_list: [NoCloud, ConfigDrive]\nsystem_info: {default_user: {name: fedora, shell: /bin/bash}}\n",
			"etc/cloud/cloud.cfg.d/99.cfg":               "preserve_hostname: false\n",
			"etc/earlyinit/earlyinit.cfg":                "datasource_list: [ConfigDrive]\nsystem_info: {default_user: {name: admin}}\n",
			"etc/earlyinit/earlyinit.cfg.d/10-local.cfg": "preserve_hostname: true\n",
		},
		wantFiles: []string{"/etc/cloud/cloud.cfg", "/etc/cloud/cloud.cfg.d/99.cfg", "/etc/earlyinit/earlyinit.cfg", "/etc/earlyinit/earlyinit.cfg.d/10-local.cfg"},
	}, {
		name: "YAML 1.1 scalars",
		files: map[string]string{
			"etc/cloud/cloud.cfg": "ssh_pwauth: yes\ndisable_root: Off\nx: 0o17\ny: 010\nz: 1:20\nw: 1e3\nv: ~\n",
		},
		wantFiles: []string{"/etc/cloud/cloud.cfg"},
	}} {
		dir := writeTree(t, tt.files)
		dirs = append(dirs, dir)
		c, err := Load(os.DirFS(dir))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, c.Raw)
		if !reflect.DeepEqual(c.Files, tt.wantFiles) {
			t.Errorf("%s: Files %q, want %q", tt.name, c.Files, tt.wantFiles)
		}
		if strings.Join(c.Warnings, "\n") != strings.Join(tt.warns, "\n") {
			t.Errorf("%s: warnings:\n%s\nwant:\n%s", tt.name, strings.Join(c.Warnings, "\n"), strings.Join(tt.warns, "\n"))
		}
		names = append(names, tt.name)
	}
	// One run of the oracle for all the trees (python starts slowly).
	py := cloudInitPython()
	if py == "" {
		t.Skip("no python3 with cloudinit: the merge is not checked against cloud-init")
	}
	out, err := exec.Command(py, append([]string{"-c", oracleScript}, dirs...)...).Output()
	if err != nil {
		t.Fatalf("oracle: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(dirs) {
		t.Fatalf("oracle gave %d results for %d trees", len(lines), len(dirs))
	}
	for i, line := range lines {
		var want any
		if err := json.Unmarshal([]byte(line), &want); err != nil {
			t.Fatalf("oracle output %q: %v", line, err)
		}
		if g := normJSON(t, got[i]); !reflect.DeepEqual(g, want) {
			t.Errorf("%s: merged\n%v\ncloud-init gives\n%v", names[i], g, want)
		}
	}
}

// TestLoadMissing: a root without any configuration is an empty one,
// without error or warning; a nil file system is an error.
func TestLoadMissing(t *testing.T) {
	c, err := Load(fstest.MapFS{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Raw == nil || len(c.Raw) != 0 || len(c.Files) != 0 || len(c.Warnings) != 0 {
		t.Errorf("got %+v, want an empty config", c)
	}
	if _, err := Load(nil); err == nil {
		t.Error("Load(nil): no error")
	}
}

// TestLoadLimits: a file past MaxFileSize is skipped, files past maxFiles
// are not read, each with one warning; a jinja template is read as YAML
// with a warning.
func TestLoadLimits(t *testing.T) {
	fsys := fstest.MapFS{
		"etc/cloud/cloud.cfg":           {Data: []byte("a: " + strings.Repeat("x", MaxFileSize) + "\n")},
		"etc/cloud/cloud.cfg.d/00.cfg":  {Data: []byte("## template: jinja\nb: 1\n")},
		"etc/earlyinit/earlyinit.cfg":   {Data: []byte("c: 1\n")},
		"etc/earlyinit/earlyinit.cfg.d": {Mode: 0o755 | os.ModeDir},
	}
	for i := 0; i < maxFiles; i++ {
		fsys[fmt.Sprintf("etc/cloud/cloud.cfg.d/%04d-x.cfg", i)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("k%d: 1\n", i))}
	}
	c, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/etc/cloud/cloud.cfg: 1048580 bytes, more than the limit of 1048576: skipped",
		"/etc/cloud/cloud.cfg.d/00.cfg: a jinja template: not rendered by earlyinit, read as plain YAML",
		"/etc/cloud/cloud.cfg.d/0254-x.cfg: more than 256 configuration files: it and the rest are not read",
	}
	if strings.Join(c.Warnings, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(c.Warnings, "\n"), strings.Join(want, "\n"))
	}
	if len(c.Files) != maxFiles-1 {
		t.Errorf("%d files read, want %d (one skipped for its size)", len(c.Files), maxFiles-1)
	}
	if c.Raw["b"] != 1 || c.Raw["k253"] != 1 || c.Raw["k254"] != nil || c.Raw["c"] != nil || c.Raw["a"] != nil {
		t.Errorf("b=%v k253=%v k254=%v c=%v a=%v, want 1 1 <nil> <nil> <nil>", c.Raw["b"], c.Raw["k253"], c.Raw["k254"], c.Raw["c"], c.Raw["a"] != nil)
	}
}

// TestLoadConfD: a conf_d key names the .d directory instead of
// cloud.cfg.d; a false one reads none; one of another type is a warning.
func TestLoadConfD(t *testing.T) {
	for _, tt := range []struct {
		name, main string
		want       any
		warns      []string
	}{
		{"another directory", "conf_d: /etc/cloud/other.d\nx: main\n", "other", nil},
		{"false reads none", "conf_d: false\nx: main\n", "main", nil},
		{"relative", "conf_d: other.d\nx: main\n", "main", []string{"/etc/cloud/cloud.cfg: conf_d: want an absolute directory: no .d directory read"}},
		{"a list", "conf_d: [a]\nx: main\n", "main", []string{"/etc/cloud/cloud.cfg: conf_d: want a directory, got a list: no .d directory read"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(fstest.MapFS{
				"etc/cloud/cloud.cfg":          {Data: []byte(tt.main)},
				"etc/cloud/cloud.cfg.d/10.cfg": {Data: []byte("x: default\n")},
				"etc/cloud/other.d/10.cfg":     {Data: []byte("x: other\n")},
			})
			if err != nil {
				t.Fatal(err)
			}
			if c.Raw["x"] != tt.want {
				t.Errorf("x = %v, want %v", c.Raw["x"], tt.want)
			}
			if strings.Join(c.Warnings, "\n") != strings.Join(tt.warns, "\n") {
				t.Errorf("warnings %q, want %q", c.Warnings, tt.warns)
			}
		})
	}
}

// TestOrigin: a top-level key's origin is the file of highest precedence
// that sets it.
func TestOrigin(t *testing.T) {
	c, err := Load(fstest.MapFS{
		"etc/cloud/cloud.cfg":          {Data: []byte("a: 1\nb: 1\ncloud_init_modules: [x]\n")},
		"etc/cloud/cloud.cfg.d/10.cfg": {Data: []byte("b: 2\n")},
		"etc/earlyinit/earlyinit.cfg":  {Data: []byte("cloud_init_modules: [y]\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"a": "/etc/cloud/cloud.cfg", "b": "/etc/cloud/cloud.cfg.d/10.cfg", "cloud_init_modules": "/etc/earlyinit/earlyinit.cfg", "c": ""} {
		if got := c.Origin(key); got != want {
			t.Errorf("Origin(%q) = %q, want %q", key, got, want)
		}
	}
}
