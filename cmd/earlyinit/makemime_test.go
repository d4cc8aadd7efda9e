//go:build !initrd

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/oracle"
)

// TestMakeMIMEAgainstCloudInit: make-mime's message, read by Python's
// email module as cloud-init reads user-data, has the parts cloud-init's
// make-mime's has: content types, file names, payloads, headers; and the
// same list of types, and the same refusal of an unknown type.
func TestMakeMIMEAgainstCloudInit(t *testing.T) {
	ci, err := exec.LookPath("cloud-init")
	if err != nil {
		t.Fatal("cloud-init (this test's oracle) is not installed: make deps installs it")
	}
	dir := t.TempDir()
	files := map[string]string{
		"config.yaml": "#cloud-config\nruncmd: [ls]\n",
		"script.sh":   "#!/bin/sh\r\necho héllo\r\n" + strings.Repeat("long line ", 40) + "\n",
		"empty":       "",
		"boot.txt":    "#cloud-boothook\necho x",
	}
	for n, c := range files {
		os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644)
	}
	attach := []string{"-a", "config.yaml:cloud-config", "-a", "script.sh:x-shellscript", "--attach=empty:cloud-config", "-a", "boot.txt: cloud-boothook"}
	cmd := exec.Command(ci, append([]string{"devel", "make-mime"}, attach...)...)
	cmd.Dir = dir
	want, err := cmd.Output()
	if err != nil {
		t.Fatalf("cloud-init devel make-mime: %v", err)
	}
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	code, got, errOut := captureAll(t, append([]string{"make-mime"}, attach...)...)
	os.Chdir(wd)
	if code != 0 || errOut != "" {
		t.Fatalf("make-mime: exit %d, %q", code, errOut)
	}
	const parse = `
import email
out = []
for m in json.load(sys.stdin):
    msg = email.message_from_string(m)
    top = {"type": msg.get_content_type(), "headers": [k for k in msg.keys()], "preamble": msg.preamble, "epilogue": msg.epilogue, "parts": []}
    for p in msg.get_payload():
        top["parts"].append({"type": p.get_content_type(), "charset": p.get_content_charset(), "filename": p.get_filename(),
            "headers": p.items(), "payload": p.get_payload(decode=True).decode("utf-8")})
    out.append(top)
print(json.dumps(out))
`
	var parsed []map[string]any
	oracle.Run(t, parse, []string{string(want), got}, &parsed)
	// The boundary is random in both: the same otherwise.
	for _, p := range parsed {
		delete(p, "boundary")
	}
	a, _ := json.Marshal(parsed[0])
	b, _ := json.Marshal(parsed[1])
	if string(a) != string(b) {
		t.Errorf("make-mime's message:\n%s\ncloud-init's:\n%s", b, a)
	}
	// Byte for byte, but the boundary.
	norm := func(s string) string {
		i := strings.Index(s, `boundary="`)
		if i < 0 {
			return s
		}
		bnd := s[i+10 : i+10+strings.IndexByte(s[i+10:], '"')]
		return strings.ReplaceAll(s, bnd, "BOUNDARY")
	}
	if norm(got) != norm(string(want)) {
		t.Errorf("make-mime:\n%s\ncloud-init's:\n%s", norm(got), norm(string(want)))
	}
	ciList, _ := exec.Command(ci, "devel", "make-mime", "-l").Output()
	cliCase{args: []string{"make-mime", "-l"}, code: 0, stdout: []string{string(ciList)}, noStderr: true}.check(t)
	cliCase{args: []string{"make-mime", "--list-types"}, code: 0, stdout: []string{string(ciList)}, noStderr: true}.check(t)
	bogus := filepath.Join(dir, "config.yaml") + ":bogus"
	cliCase{args: []string{"make-mime", "-a", bogus}, code: 1, stderr: []string{"ERROR: content type 'text/bogus' for attachment 1 may be incorrect!\nInvalid content-types, override with --force\n"}, noStdout: true}.check(t)
	cliCase{args: []string{"make-mime", "-f", "-a", bogus}, code: 0, stdout: []string{"Content-Type: text/bogus; charset=\"utf-8\""}, stderr: []string{"WARNING: content type 'text/bogus'"}}.check(t)
	cliCase{args: []string{"make-mime", "-a", filepath.Join(dir, "config.yaml")}, code: 2, stderr: []string{"want FILE:TYPE"}, noStdout: true}.check(t)
	cliCase{args: []string{"make-mime", "-a", filepath.Join(dir, "nosuch") + ":cloud-config"}, code: 1, stderr: []string{"nosuch"}, noStdout: true}.check(t)
	os.WriteFile(filepath.Join(dir, "bin"), []byte{0xff, 0xfe}, 0o644)
	cliCase{args: []string{"make-mime", "-a", filepath.Join(dir, "bin") + ":cloud-config"}, code: 1, stderr: []string{"not UTF-8"}, noStdout: true}.check(t)
	// The empty message is cloud-init's too.
	ciEmpty, _ := exec.Command(ci, "devel", "make-mime").Output()
	_, empty, _ := captureAll(t, "make-mime")
	if norm(empty) != norm(string(ciEmpty)) {
		t.Errorf("no attachment: %q, cloud-init's %q", empty, ciEmpty)
	}
}
