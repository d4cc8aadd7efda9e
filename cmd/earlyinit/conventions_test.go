package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/boot"
)

// cliCase is one run of the CLI and what it must give: the exit code,
// strings stdout and stderr must hold, and whether stdout or stderr must
// be empty.
type cliCase struct {
	args                 []string
	code                 int
	stdout, stderr       []string
	noStdout, noStderr   bool
	notStdout, notStderr []string
}

func (c cliCase) check(t *testing.T) {
	t.Helper()
	code, out, errOut := captureAll(t, c.args...)
	if code != c.code {
		t.Errorf("%q: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", c.args, code, c.code, out, errOut)
	}
	for _, w := range c.stdout {
		if !strings.Contains(out, w) {
			t.Errorf("%q: stdout lacks %q:\n%s", c.args, w, out)
		}
	}
	for _, w := range c.stderr {
		if !strings.Contains(errOut, w) {
			t.Errorf("%q: stderr lacks %q:\n%s", c.args, w, errOut)
		}
	}
	for _, w := range c.notStdout {
		if strings.Contains(out, w) {
			t.Errorf("%q: stdout has %q:\n%s", c.args, w, out)
		}
	}
	for _, w := range c.notStderr {
		if strings.Contains(errOut, w) {
			t.Errorf("%q: stderr has %q:\n%s", c.args, w, errOut)
		}
	}
	if c.noStdout && out != "" {
		t.Errorf("%q: stdout not empty:\n%s", c.args, out)
	}
	if c.noStderr && errOut != "" {
		t.Errorf("%q: stderr not empty:\n%s", c.args, errOut)
	}
}

// TestCLIConventions: help on stdout with exit 0, the version, usage
// errors on stderr with exit 2, for earlyinit itself and every verb.
func TestCLIConventions(t *testing.T) {
	for _, c := range []cliCase{
		{args: nil, code: 2, stderr: []string{"no verb given", "usage: earlyinit VERB"}, noStdout: true},
		{args: []string{"help"}, code: 0, stdout: []string{"usage: earlyinit VERB", "\n  status ", "\n  query "}, noStderr: true},
		{args: []string{"--help"}, code: 0, stdout: []string{"usage: earlyinit VERB"}, noStderr: true},
		{args: []string{"-h"}, code: 0, stdout: []string{"usage: earlyinit VERB"}, noStderr: true},
		{args: []string{"help", "status"}, code: 0, stdout: []string{"usage: earlyinit status [flags]", "-w, --wait", "-l, --long", "--format FORMAT", "the output FORMAT: json, tabular, yaml (default tabular)"}, noStderr: true},
		{args: []string{"--help", "query"}, code: 0, stdout: []string{"usage: earlyinit query [flags] [KEY]", "-f, --format TEMPLATE"}, noStderr: true},
		{args: []string{"help", "nosuch"}, code: 2, stderr: []string{`unknown verb "nosuch"`}, noStdout: true},
		{args: []string{"help", "a", "b"}, code: 2, stderr: []string{"one VERB at most"}, noStdout: true},
		{args: []string{"version"}, code: 0, stdout: []string{boot.Version + "\n"}, noStderr: true},
		{args: []string{"--version"}, code: 0, stdout: []string{boot.Version + "\n"}, noStderr: true},
		{args: []string{"-v"}, code: 0, stdout: []string{boot.Version + "\n"}, noStderr: true},
		{args: []string{"version", "extra"}, code: 2, stderr: []string{"takes no arguments"}, noStdout: true},
		{args: []string{"--bogus"}, code: 2, stderr: []string{`unknown option "--bogus"`, "usage: earlyinit VERB"}, noStdout: true},
		{args: []string{"nosuch"}, code: 2, stderr: []string{`unknown verb "nosuch"`}, noStdout: true},
		{args: []string{"status", "--bogus"}, code: 2, stderr: []string{"earlyinit status: unknown flag: --bogus", "usage: earlyinit status [flags]", "earlyinit status --help"}, noStdout: true},
		{args: []string{"status", "-x"}, code: 2, stderr: []string{"unknown shorthand flag: 'x'"}, noStdout: true},
		{args: []string{"status", "--format"}, code: 2, stderr: []string{"flag needs an argument: --format"}, noStdout: true},
		{args: []string{"status", "--format", "xml", "--root", t.TempDir()}, code: 2, stderr: []string{`--format "xml": want json, tabular or yaml`}, noStdout: true},
		{args: []string{"status", "extra"}, code: 2, stderr: []string{"takes no operands"}, noStdout: true},
		{args: []string{"query"}, code: 2, stderr: []string{"give a KEY, --all, --list-keys or --format"}, noStdout: true},
		{args: []string{"query", "a", "b"}, code: 2, stderr: []string{"one KEY at most"}, noStdout: true},
		{args: []string{"clean", "extra"}, code: 2, stderr: []string{"takes no operands"}, noStdout: true},
		{args: []string{"analyze", "nosuch"}, code: 2, stderr: []string{`unknown subcommand "nosuch"`}, noStdout: true},
		{args: []string{"analyze", "blame", "show"}, code: 2, stderr: []string{"one subcommand at most"}, noStdout: true},
		{args: []string{"analyze", "blame", "-f", "%n"}, code: 2, stderr: []string{"--format goes with show"}, noStdout: true},
		{args: []string{"analyze", "plot", "-i", "x.json"}, code: 2, stderr: []string{"--infile goes with blame, show and dump"}, noStdout: true},
		{args: []string{"provision"}, code: 2, stderr: []string{"want --root DIR"}, noStdout: true},
		{args: []string{"net-convert", "-p", "x"}, code: 2, stderr: []string{"missing required flags: -O -d -k"}, noStdout: true},
	} {
		c.check(t)
	}
	// Every verb: VERB --help and VERB -h print its help on stdout, exit
	// 0, with every flag; `help VERB` prints the same.
	for _, n := range verbNames() {
		v := verbs[n]
		if v.flags == nil && n != "help" && n != "version" {
			continue // a verb this build leaves out (initrd.go)
		}
		want := []string{"usage: " + verbSynopsis(n) + "\n", v.help}
		if v.flags != nil {
			v.flags().VisitAll(func(f *pflag.Flag) {
				spec := "--" + f.Name
				if f.Shorthand != "" {
					spec = "-" + f.Shorthand + ", " + spec
				}
				want = append(want, "\n  "+spec)
			})
		}
		for _, args := range [][]string{{n, "--help"}, {n, "-h"}, {"help", n}} {
			cliCase{args: args, code: 0, stdout: want, noStderr: true}.check(t)
		}
	}
}

// TestFlagsAfterOperands: flags may follow operands, short and long forms
// mean the same, bundled short flags work, and "--" ends the flags.
func TestFlagsAfterOperands(t *testing.T) {
	root := queryRoot(t)
	for _, args := range [][]string{
		{"query", "--root", root, "v1.instance_id"},
		{"query", "v1.instance_id", "--root", root},
		{"query", "v1.instance_id", "--root=" + root},
		{"query", "--", "v1.instance_id", "--root=" + root}, // not a flag after "--": two keys
	} {
		want := cliCase{args: args, code: 0, stdout: []string{"iid-q\n"}, noStderr: true}
		if args[1] == "--" {
			want = cliCase{args: args, code: 2, stderr: []string{"one KEY at most"}}
		}
		want.check(t)
	}
	for _, args := range [][]string{
		{"query", "--root", root, "--list-keys", "v1"},
		{"query", "-l", "v1", "--root", root},
		{"query", "--root", root, "-al", "v1"},
	} {
		cliCase{args: args, code: 0, stdout: []string{"instance_id\n", "local_hostname\n"}, noStderr: true}.check(t)
	}
}

// queryRoot is a root with instance data, as TestQuery's.
func queryRoot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	run := filepath.Join(dir, "run/earlyinit")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	data := `{"v1": {"instance_id": "iid-q", "local_hostname": "qhost", "availability_zone": null, "count": 3, "ratio": 1.0, "big": 1e20,
  "flag": true, "tags": ["a", "b"], "nested": {"x": "y"}},
 "ds": {"meta_data": {"local-hostname": "qhost", "instance-id": "iid-q"}}, "base64_encoded_keys": [], "sensitive_keys": []}`
	for _, f := range []string{"instance-data.json", "instance-data-sensitive.json"} {
		if err := os.WriteFile(filepath.Join(run, f), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestLateFlags: late's INIT arguments after "--" are the init's, flags
// and all; the first operand ends late's flags.
func TestLateFlags(t *testing.T) {
	if verbs["late"].flags == nil {
		t.Skip("this build has no late-stage runner")
	}
	var o lateOpts
	fs := o.flags()
	if err := fs.Parse([]string{"--exec", "/sbin/init", "--root", "/r", "--", "-s", "--single", "x"}); err != nil {
		t.Fatal(err)
	}
	if o.execInit != "/sbin/init" || o.root != "/r" || !slices.Equal(fs.Args(), []string{"-s", "--single", "x"}) {
		t.Errorf("exec %q root %q args %q", o.execInit, o.root, fs.Args())
	}
	cliCase{args: []string{"late", "--stage", "bogus", "--root", t.TempDir()}, code: 2, stderr: []string{"bogus"}}.check(t)
	cliCase{args: []string{"single", "--frequency", "always"}, code: 2, stderr: []string{"--name is required"}, noStdout: true}.check(t)
	cliCase{args: []string{"single", "-n", "bootcmd", "--frequency", "sometimes"}, code: 2, stderr: []string{"--frequency: frequency \"sometimes\""}, noStdout: true}.check(t)
	cliCase{args: []string{"single", "-n", "bootcmd", "arg"}, code: 2, stderr: []string{"module arguments are not supported"}, noStdout: true}.check(t)
}
