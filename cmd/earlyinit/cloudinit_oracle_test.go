//go:build !initrd

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/userdata"
)

// The verbs that print what cloud-init prints are checked against
// cloud-init 22.4 itself (make deps installs it as the oracle): its
// Python for status's YAML, query's templates and schema's annotation,
// its CLI for analyze.

// ciPython is a python3 that imports cloudinit.
func ciPython(t *testing.T) string {
	t.Helper()
	for _, py := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(py, "-c", "import cloudinit, yaml, jinja2").Run() == nil {
			return py
		}
	}
	t.Fatal("no python3 that imports cloudinit, yaml and jinja2 (cloud-init 22.4, this test's oracle): make deps installs it")
	return ""
}

func pyRun(t *testing.T, py, script string, stdin []byte) string {
	t.Helper()
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = strings.NewReader(string(stdin))
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("python: %v\n%s", err, stderr)
	}
	return string(out)
}

// TestStatusYAMLAgainstCloudInit: status --format yaml prints the JSON
// output's keys as cloud-init's safeyaml.dumps does (the numbers, all
// seconds, as floats, which status's are), and pyYAML writes any string
// as PyYAML does: quoting, escapes, folding at 80 columns.
func TestStatusYAMLAgainstCloudInit(t *testing.T) {
	py := ciPython(t)
	const dump = `import json, sys
from cloudinit import safeyaml
def floats(v):
    if isinstance(v, dict): return {k: floats(x) for k, x in v.items()}
    if isinstance(v, list): return [floats(x) for x in v]
    if isinstance(v, int) and not isinstance(v, bool): return float(v)
    return v
print(safeyaml.dumps(floats(json.load(sys.stdin))))`
	root := statusRoot(t)
	for _, long := range []string{"", "--long"} {
		args := []string{"status", "--root", root, "--format", "json"}
		if long != "" {
			args = append(args, long)
		}
		_, js, _ := captureAll(t, args...)
		want := pyRun(t, py, dump, []byte(js))
		args[4] = "yaml"
		_, got, _ := captureAll(t, args...)
		if got != want {
			t.Errorf("status --format yaml %s:\n%s\ncloud-init's safeyaml.dumps:\n%s", long, got, want)
		}
	}
	strs := []string{"", "plain", "yes", "No", "on", "1", "0x1f", "012", "1.5", "1e3", ".inf", "~", "null", "2021-01-01", "=", "<<",
		"a: b", "a:b", "- x", "-x", "x #y", "x#y", "#x", "@x", "%x", "!x", "&x", "*x", "?x", "? x", "'q'", `"d"`, "{a}", "[a]", "a,b",
		" lead", "trail ", "tab\there", "line1\nline2", "line1\nline2\n", "\nlead", "a \nb", "a\n b", "ünï", "a\x01b", "back\\slash",
		"--- doc", "...", "DataSourceNoCloud [seed=/dev/sr0][dsmode=net]", "Tue, 14 Nov 2023 22:13:32 +0000",
		strings.Repeat("word ", 40), strings.Repeat("x", 100) + " " + strings.Repeat("y", 100), "it's " + strings.Repeat("quoted ", 20),
		"esc\t" + strings.Repeat("z ", 50), strings.Repeat("long\n", 3) + strings.Repeat("text ", 30)}
	tree := map[string]any{"list": []any{}, "map": map[string]any{}, "nested": map[string]any{"seq": []any{map[string]any{"a": 1.5, "b": nil, "c": true}, "s"}}}
	for i, s := range strs {
		tree[strings.Repeat("k", i%5+1)+string(rune('a'+i%26))+strings.Repeat("_", i/26)] = s
	}
	tree["values"] = func() []any {
		var l []any
		for _, s := range strs {
			l = append(l, s)
		}
		return l
	}()
	tree["a key: with colon"] = "v"
	var got strings.Builder
	if err := pyYAML(&got, tree); err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(tree)
	if err != nil {
		t.Fatal(err)
	}
	want := pyRun(t, py, `import json, sys
from cloudinit import safeyaml
sys.stdout.write(safeyaml.dumps(json.load(sys.stdin)))`, js)
	if got.String() != want {
		gl, wl := strings.Split(got.String(), "\n"), strings.Split(want, "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Errorf("pyYAML differs from PyYAML at line %d:\n got  %q\n want %q", i+1, gl[i], wl[i])
				break
			}
		}
		t.Errorf("pyYAML:\n%s\nPyYAML:\n%s", got.String(), want)
	}
}

// TestQueryFormatAgainstCloudInit: query --format renders {{ KEY }} as
// cloud-init's Jinja rendering of the same template over the same data;
// the rest of Jinja is refused, and the short and long flags agree.
func TestQueryFormatAgainstCloudInit(t *testing.T) {
	py := ciPython(t)
	root := queryRoot(t)
	raw, err := os.ReadFile(filepath.Join(root, "run/earlyinit/instance-data-sensitive.json"))
	if err != nil {
		t.Fatal(err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		t.Fatal(err)
	}
	data := compact.Bytes()
	for _, tmpl := range []string{
		"{{ v1.instance_id }}",
		"id={{v1.instance_id}} host={{ local_hostname }} ds={{ ds.meta_data.local_hostname }}",
		"{{ v1.availability_zone }} {{ v1.count }} {{ v1.ratio }} {{ v1.big }} {{ v1.flag }} {{ v1.tags.1 }}",
		"missing: {{ v1.nokey }} and {{ nokey }}",
		"text only, { single } braces }}",
		"trailing newline\n",
	} {
		want := pyRun(t, py, `import json, sys
from cloudinit.handlers.jinja_template import render_jinja_payload
d = json.loads(sys.stdin.readline())
d["userdata"] = d["vendordata"] = ""
print(render_jinja_payload("## template: jinja\n" + sys.stdin.read(), "query commandline", d))`, append(append(data, '\n'), tmpl...))
		for _, f := range []string{"-f", "--format"} {
			code, got, errOut := captureAll(t, "query", "--root", root, f, tmpl)
			if code != 0 || got != want {
				t.Errorf("query %s %q: exit %d, %q (stderr %q); cloud-init renders %q", f, tmpl, code, got, errOut, want)
			}
			if strings.Contains(want, queryMissing) != strings.Contains(errOut, "could not render") {
				t.Errorf("query %s %q: stderr %q: a warning exactly when a key is missing", f, tmpl, errOut)
			}
		}
	}
	for _, c := range []cliCase{
		{args: []string{"query", "--root", root, "-f", "{{ nokey.sub }}"}, code: 1, stderr: []string{"'nokey' is undefined"}, noStdout: true},
		{args: []string{"query", "--root", root, "-f", "{{ v1.nested }}"}, code: 1, stderr: []string{"an object"}, noStdout: true},
		{args: []string{"query", "--root", root, "-f", "{{ v1.tags }}"}, code: 1, stderr: []string{"a list"}, noStdout: true},
		{args: []string{"query", "--root", root, "-f", "{% if x %}y{% endif %}"}, code: 2, stderr: []string{"Jinja statements and comments are not supported"}, noStdout: true},
		{args: []string{"query", "--root", root, "-f", "{# c #}"}, code: 2, stderr: []string{"not supported"}, noStdout: true},
		{args: []string{"query", "--root", root, "-f", "{{ v1.instance_id | upper }}"}, code: 2, stderr: []string{"not a key path"}, noStdout: true},
		{args: []string{"query", "--root", root, "-f", "{{ local-hostname }}"}, code: 2, stderr: []string{"not a key path"}, noStdout: true},
		{args: []string{"query", "--root", root, "-f", "{{- v1.instance_id }}"}, code: 2, stderr: []string{"whitespace control"}, noStdout: true},
		{args: []string{"query", "--root", root, "-f", "{{ v1.instance_id"}, code: 2, stderr: []string{"no closing }}"}, noStdout: true},
		{args: []string{"query", "--root", root, "-f", "x", "v1"}, code: 2, stderr: []string{"takes no KEY"}, noStdout: true},
		{args: []string{"query", "--root", root, "-a"}, code: 0, stdout: []string{`"instance_id": "iid-q"`}, noStderr: true},
		{args: []string{"query", "--root", root, "--all"}, code: 0, stdout: []string{`"instance_id": "iid-q"`}, noStderr: true},
		{args: []string{"query", "--instance-data", filepath.Join(root, "run/earlyinit/instance-data.json"), "v1.local_hostname"}, code: 0, stdout: []string{"qhost\n"}, noStderr: true},
		{args: []string{"query", "-i", filepath.Join(root, "nothing.json"), "v1"}, code: 1, stderr: []string{"nothing.json"}, noStdout: true},
	} {
		c.check(t)
	}
}

// TestAnalyzeAgainstCloudInit: analyze dump prints the boot's events as
// cloud-init's dump prints its own, and cloud-init analyze show and
// blame, given them (-i), print what earlyinit's show and blame print.
func TestAnalyzeAgainstCloudInit(t *testing.T) {
	ci, err := exec.LookPath("cloud-init")
	if err != nil {
		t.Fatal("cloud-init (this test's oracle) is not installed: make deps installs it")
	}
	root := statusRoot(t)
	code, dump, errOut := captureAll(t, "analyze", "dump", "--root", root)
	if code != 0 || errOut != "" {
		t.Fatalf("analyze dump: exit %d, %q", code, errOut)
	}
	events := filepath.Join(t.TempDir(), "events.json")
	os.WriteFile(events, []byte(dump), 0o644)
	for _, sub := range [][]string{{"dump"}, {"show"}, {"blame"}, {"show", "-f", "%n|%e|%r|%o|%t|%E|%d|%I|%D"}} {
		want, err := exec.Command(ci, append(append([]string{"analyze"}, sub...), "-i", events)...).Output()
		if err != nil {
			t.Fatalf("cloud-init analyze %q: %v", sub, err)
		}
		for _, args := range [][]string{
			append(append([]string{"analyze"}, sub...), "--root", root),
			append(append([]string{"analyze", "--root", root}, sub[1:]...), sub[0]), // flags first
			append(append([]string{"analyze"}, sub...), "-i", events),
		} {
			code, got, errOut := captureAll(t, args...)
			if code != 0 || got != string(want) || errOut != "" {
				t.Errorf("earlyinit %q: exit %d (stderr %q):\n%s\ncloud-init analyze %q -i:\n%s", args, code, errOut, got, sub, want)
			}
		}
	}
	for _, want := range []string{"Starting stage: initramfs\n", "|`->running datasource failed @02.50000s +00.30000s\n", "Finished stage: (boot) 01.50000 seconds\n", "Total Time: 7.50000 seconds\n"} {
		if _, got, _ := captureAll(t, "analyze", "show", "--root", root); !strings.Contains(got, want) {
			t.Errorf("analyze show lacks %q:\n%s", want, got)
		}
	}
	out := filepath.Join(t.TempDir(), "blame.txt")
	if code, stdout, _ := captureAll(t, "analyze", "blame", "-o", out, "--root", root); code != 0 || stdout != "" {
		t.Errorf("blame -o: exit %d, stdout %q", code, stdout)
	}
	if b, _ := os.ReadFile(out); !strings.HasPrefix(string(b), "-- Boot Record 01 --\n     02.00000s (initramfs/modules)\n     01.20000s (final/scripts_user)\n") {
		t.Errorf("blame -o wrote:\n%s", b)
	}
	cliCase{args: []string{"analyze", "show", "-i", out}, code: 1, stderr: []string{"not a JSON list of events"}, noStdout: true}.check(t)
	cliCase{args: []string{"analyze", "show", "--root", t.TempDir()}, code: 1, stderr: []string{"boot.json"}, noStdout: true}.check(t)
	// earlyinit's own summary and plot are as they were.
	cliCase{args: []string{"analyze", "--root", root}, code: 0, stdout: []string{"switch_root to /sbin/init after 4s", "stage final: 2.000s"}, noStderr: true}.check(t)
	cliCase{args: []string{"analyze", "plot", "--root", root}, code: 0, stdout: []string{"<svg"}, noStderr: true}.check(t)
}

// TestAnnotateAgainstCloudInit: schema --annotate lays a file's errors
// out as cloud-init's annotated_cloudconfig_file does.
func TestAnnotateAgainstCloudInit(t *testing.T) {
	py := ciPython(t)
	text := "#cloud-config\nruncmd: [echo hi]\nno_such_key: 1\nwrite_files:\n  - path: 5\n    permissions: 7\nusers: 3\n"
	problems := userdata.Validate("f", []byte(text))
	// earlyinit's warnings go to cloud-init as its deprecations, whose
	// labels are D and title Deprecations where earlyinit's are W and
	// Warnings.
	errs, warns := [][2]string{}, [][2]string{}
	for _, p := range problems {
		msg := p.Msg
		if p.Path != "" {
			msg = p.Path + ": " + msg
		}
		pr := [2]string{"format-l" + itoa(p.Line) + ".c1", msg}
		if p.Warning {
			warns = append(warns, pr)
		} else {
			errs = append(errs, pr)
		}
	}
	if len(errs) < 3 || len(warns) < 1 {
		t.Fatalf("want at least 3 errors and a warning, got %v", problems)
	}
	in, _ := json.Marshal(map[string]any{"text": text, "errors": errs, "warns": warns})
	want := pyRun(t, py, `import json, re, sys
from cloudinit.config.schema import annotated_cloudconfig_file, SchemaProblem
d = json.load(sys.stdin)
out = annotated_cloudconfig_file({"a": 1}, d["text"].encode(), {}, schema_errors=[SchemaProblem(p, m) for p, m in d["errors"]],
    schema_deprecations=[SchemaProblem(p, m) for p, m in d["warns"]])
print(re.sub(r"\bD(\d+)", r"W\1", out).replace("# Deprecations: ", "# Warnings: "))`, in)
	if got := annotateConfig([]byte(text), problems) + "\n"; got != want {
		t.Errorf("annotateConfig:\n%q\ncloud-init:\n%q", got, want)
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
