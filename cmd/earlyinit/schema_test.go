package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchemaImage: `schema --image` reports the image configuration's
// bad files and values as errors (exit 1) and what earlyinit does not act
// on as "not supported by earlyinit" warnings; --config-file still works.
func TestSchemaImage(t *testing.T) {
	root := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("etc/cloud/cloud.cfg", "users: [default]\napt: {preserve_sources_list: true}\nlandscape: {client: {}}\ncloud_config_modules: [snap, runcmd]\nsystem_info: {default_user: {name: rocky}}\n")
	code, out := capture(t, "schema", "--image", "--root", root)
	want := []string{
		"warning: /etc/cloud/cloud.cfg: landscape: not supported by earlyinit: ignored",
		"warning: module snap (cloud_config_modules in /etc/cloud/cloud.cfg): not supported by earlyinit",
		"Valid image configuration: 1 file(s), default user rocky",
	}
	if code != 0 || strings.TrimSpace(out) != strings.Join(want, "\n") {
		t.Errorf("exit %d, output:\n%s\nwant 0 and:\n%s", code, out, strings.Join(want, "\n"))
	}

	write("etc/cloud/cloud.cfg.d/50-bad.cfg", "a: [\n")
	write("etc/earlyinit/earlyinit.cfg", "preserve_hostname: [x]\n")
	code, out = capture(t, "schema", "--image", "--root", root)
	for _, line := range []string{
		"error: /etc/cloud/cloud.cfg.d/50-bad.cfg: ",
		"error: cloud.cfg: preserve_hostname: want a boolean, got a list: false",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}

	if code, out := capture(t, "schema", "--image", "--root", t.TempDir()); code != 0 || !strings.Contains(out, "No image configuration") {
		t.Errorf("empty root: exit %d, output %q", code, out)
	}
	good := filepath.Join(t.TempDir(), "ok.yaml")
	os.WriteFile(good, []byte("#cloud-config\nruncmd: [ls]\n"), 0o644)
	if code, out := capture(t, "schema", "--config-file", good); code != 0 || !strings.Contains(out, "Valid cloud-config") {
		t.Errorf("--config-file: exit %d, output %q", code, out)
	}
}
