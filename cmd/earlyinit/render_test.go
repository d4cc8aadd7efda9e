//go:build !initrd

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/instance"
)

// renderInstanceData is an instance-data.json as earlyinit writes it.
func renderInstanceData(t *testing.T) []byte {
	t.Helper()
	d := &instance.Data{Datasource: "nocloud", CloudName: "nocloud", Platform: "nocloud", Subplatform: "seed-dir (/var/lib/cloud/seed/nocloud)",
		InstanceID: "iid-r", LocalHostname: "render-host.example.com", PublicKeys: []string{"ssh-ed25519 AAAA k@h"},
		Meta: map[string]any{"instance-id": "iid-r", "local-hostname": "render-host.example.com", "dsmode": "local"}}
	redacted, _, err := instance.InstanceData(d, instance.SysInfo{Distro: "debian", DistroVersion: "12", DistroRelease: "bookworm"})
	if err != nil {
		t.Fatal(err)
	}
	return redacted
}

// TestRenderAgainstCloudInit: earlyinit render prints what cloud-init
// devel render prints for the same user-data and instance data (-i), and
// fails where it fails (exit 1), with the warnings it gives.
func TestRenderAgainstCloudInit(t *testing.T) {
	ci, err := exec.LookPath("cloud-init")
	if err != nil {
		t.Fatal("cloud-init (this test's oracle) is not installed: make deps installs it")
	}
	dir := t.TempDir()
	data := filepath.Join(dir, "instance-data.json")
	if err := os.WriteFile(data, renderInstanceData(t), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyRoot := t.TempDir()
	for i, c := range []struct {
		payload  string
		stderr   []string // in both
		ciStderr string   // in cloud-init's alone, when it fails otherwise
	}{
		{payload: "## template: jinja\n#cloud-config\nhostname: {{ v1.local_hostname }}\nfqdn: {{ ds.meta_data.local_hostname }}\n{% for k in v1.public_ssh_keys %}key: {{ k }}\n{% endfor %}"},
		{payload: "## template: jinja\n#!/bin/sh\n{% if v1.cloud_name == 'nocloud' -%}\necho {{ instance_id | upper }} {{ v1['local-hostname'] }}\n{%- endif %}\n"},
		{payload: "## template: jinja\n#cloud-config\na: {{ nope }} {{ v1.nope }}\n", stderr: []string{"ould not render jinja template variables in file", "'nope', 'nope'"}},
		{payload: "## template: jinja\nnot even cloud-config {{ v1.region }}\n"},
		{payload: "## template: jinja\n{{ nope.x }}\n", stderr: []string{"Unable to render user-data file"}},
		// cloud-init's render fails with a traceback on a syntax error.
		{payload: "## template: jinja\n{% if %}\n", ciStderr: "TemplateSyntaxError: Expected an expression, got 'end of statement block'"},
		{payload: "## template: jinja\n", stderr: []string{"Unable to render user-data file"}},
		{payload: "#cloud-config\na: 1\n", stderr: []string{"Cannot render from instance data due to exception"}},
	} {
		ud := filepath.Join(dir, "user-data")
		if err := os.WriteFile(ud, []byte(c.payload), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(ci, "devel", "render", ud, "-i", data)
		var ciErr strings.Builder
		cmd.Stderr = &ciErr
		ciOut, err := cmd.Output()
		ciCode := 0
		if ee, ok := err.(*exec.ExitError); ok {
			ciCode = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		code, out, errOut := captureAll(t, "render", ud, "-i", data, "--root", emptyRoot)
		if code != ciCode || out != string(ciOut) {
			t.Errorf("case %d: exit %d, stdout %q\ncloud-init: exit %d, stdout %q\nstderr %q\ncloud-init's %q", i, code, out, ciCode, ciOut, errOut, ciErr.String())
		}
		if c.ciStderr != "" && (!strings.Contains(ciErr.String(), c.ciStderr) || !strings.Contains(errOut, "line 2: expected an expression, got end of statement block") || !strings.Contains(errOut, "Unable to render user-data file")) {
			t.Errorf("case %d: stderr %q, cloud-init's %q", i, errOut, ciErr.String())
		}
		for _, w := range c.stderr {
			if !strings.Contains(errOut, w) || !strings.Contains(ciErr.String(), w) {
				t.Errorf("case %d: stderr %q and cloud-init's %q, want both with %q", i, errOut, ciErr.String(), w)
			}
		}
	}
	// The default instance data is ROOT's; merged_cfg is the image's
	// configuration when the instance data has none.
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "run/earlyinit"), 0o755)
	os.MkdirAll(filepath.Join(root, "etc/cloud"), 0o755)
	os.WriteFile(filepath.Join(root, "run/earlyinit/instance-data.json"), renderInstanceData(t), 0o644)
	os.WriteFile(filepath.Join(root, "run/earlyinit/instance-data-sensitive.json"), renderInstanceData(t), 0o600)
	os.WriteFile(filepath.Join(root, "etc/cloud/cloud.cfg"), []byte("system_info:\n  default_user:\n    name: debian\n"), 0o644)
	ud := filepath.Join(dir, "user-data")
	os.WriteFile(ud, []byte("## template: jinja\n{{ merged_cfg.system_info.default_user.name }} {{ v1.instance_id }}"), 0o644)
	cliCase{args: []string{"render", "--root", root, ud}, code: 0, stdout: []string{"debian iid-r"}, noStderr: true}.check(t)
	cliCase{args: []string{"render", "--root", root, "-d", ud}, code: 0, stdout: []string{"debian iid-r"}, stderr: []string{"DEBUG: Converted jinja variables\n{\n", `"local_hostname": "render-host"`}}.check(t)
	for _, c := range []cliCase{
		{args: []string{"render"}, code: 2, stderr: []string{"want one USER-DATA file"}, noStdout: true},
		{args: []string{"render", ud, ud}, code: 2, stderr: []string{"want one USER-DATA file"}, noStdout: true},
		{args: []string{"render", "--root", t.TempDir(), ud}, code: 1, stderr: []string{"Missing instance-data.json file"}, noStdout: true},
		{args: []string{"render", "--root", root, filepath.Join(dir, "nosuch")}, code: 1, stderr: []string{"Missing user-data file"}, noStdout: true},
	} {
		c.check(t)
	}
}
