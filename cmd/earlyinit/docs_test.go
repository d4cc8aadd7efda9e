//go:build !initrd

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/settings"
)

// complete runs the completion script in bash for the words typed (the
// last one being completed) and returns what it offers.
func complete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatal("bash is not installed")
	}
	var quoted []string
	for _, w := range words {
		quoted = append(quoted, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
	}
	prog := script + "\nCOMP_WORDS=(" + strings.Join(quoted, " ") + "); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMPREPLY=(); _earlyinit; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
	out, err := exec.Command(bash, "-c", prog).CombinedOutput()
	if err != nil {
		t.Fatalf("bash: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// TestCompletion: the script completes the verbs, every flag of every
// verb (from its flag set: a flag missing from the completion fails
// here), the values of flags that take a fixed set, and operand words.
func TestCompletion(t *testing.T) {
	code, script, errOut := captureAll(t, "completion", "bash")
	if code != 0 || errOut != "" || !strings.Contains(script, "complete -F _earlyinit earlyinit\n") {
		t.Fatalf("completion bash: exit %d, stderr %q", code, errOut)
	}
	has := func(got []string, want ...string) bool {
		for _, w := range want {
			if !strings.Contains(" "+strings.Join(got, " ")+" ", " "+w+" ") {
				return false
			}
		}
		return true
	}
	if got := complete(t, script, "earlyinit", ""); !has(got, append(verbNames(), "--help", "--version")...) {
		t.Errorf("verbs: %q", got)
	}
	if got := complete(t, script, "earlyinit", "st"); strings.Join(got, " ") != "status" {
		t.Errorf("st: %q", got)
	}
	for _, n := range verbNames() {
		v := verbs[n]
		var flags []string
		if v.flags != nil {
			v.flags().VisitAll(func(f *pflag.Flag) {
				flags = append(flags, "--"+f.Name)
				if f.Shorthand != "" {
					flags = append(flags, "-"+f.Shorthand)
				}
				if vs := f.Annotations[annValues]; len(vs) > 0 {
					if got := complete(t, script, "earlyinit", n, "--"+f.Name, ""); !has(got, vs...) {
						t.Errorf("%s --%s: values %q, want %q", n, f.Name, got, vs)
					}
					if got := complete(t, script, "earlyinit", n, "--"+f.Name, "=", ""); !has(got, vs...) {
						t.Errorf("%s --%s=: values %q, want %q", n, f.Name, got, vs)
					}
				}
			})
		}
		if got := complete(t, script, "earlyinit", n, "-"); !has(got, append(flags, "--help")...) {
			t.Errorf("%s -: %q, want every flag %q", n, got, flags)
		}
		if v.words != nil {
			if got := complete(t, script, "earlyinit", n, ""); !has(got, v.words()...) {
				t.Errorf("%s: operands %q, want %q", n, got, v.words())
			}
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "user-data"), nil, 0o644)
	if got := complete(t, script, "earlyinit", "mkseed", "-N", filepath.Join(dir, "us")); strings.Join(got, " ") != filepath.Join(dir, "user-data") {
		t.Errorf("mkseed -N FILE: %q", got)
	}
	if got := complete(t, script, "earlyinit", "status", "--root", filepath.Join(dir, "us")); len(got) != 0 {
		t.Errorf("status --root DIR offers a file: %q", got)
	}
	for _, c := range []cliCase{
		{args: []string{"completion"}, code: 2, stderr: []string{"want the shell, bash"}, noStdout: true},
		{args: []string{"completion", "zsh"}, code: 2, stderr: []string{"want the shell, bash"}, noStdout: true},
	} {
		c.check(t)
	}
}

// TestManCoversCmdline: the manual page's KERNEL COMMAND LINE lists every
// option of docs/reference.md's table and every earlyinit.* key internal/settings
// knows.
func TestManCoversCmdline(t *testing.T) {
	page := manPage(t)
	_, section, _ := strings.Cut(page, ".SH KERNEL COMMAND LINE\n")
	section, _, _ = strings.Cut(section, "\n.SH ")
	readme, err := os.ReadFile("../../docs/reference.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "\n## Kernel command line\n")
	if !ok {
		t.Fatal("docs/reference.md has no Kernel command line section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	var opts []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)`").FindAllStringSubmatch(table, -1) {
		opts = append(opts, m[1])
	}
	// Which keys settings knows: its error for an unknown key lists them.
	_, errs := settings.ParseCmdline("earlyinit.zz-not-a-key")
	if len(errs) != 1 {
		t.Fatalf("settings: %v", errs)
	}
	_, known, ok := strings.Cut(errs[0].Error(), "(known: ")
	if !ok {
		t.Fatalf("settings' unknown-key error lists no keys: %v", errs[0])
	}
	for _, k := range strings.Split(strings.TrimSuffix(known, ")"), ", ") {
		opts = append(opts, k)
	}
	if len(opts) < 20 {
		t.Fatalf("found only %q", opts)
	}
	for _, o := range opts {
		// "ro / rw" in the README is "ro, rw" here; "earlyinit" is
		// earlyinit=disabled.
		for _, word := range strings.Split(o, " / ") {
			if word == "earlyinit" {
				word = "earlyinit="
			}
			word, _, _ = strings.Cut(word, "=")
			if !strings.Contains(section, "\n.B "+roffText(word)) {
				t.Errorf("KERNEL COMMAND LINE lacks %q (from %q)", roffText(word), o)
			}
		}
	}
}

// TestManFiles: the FILES section names the logs and state files the
// verbs read and write.
func TestManFiles(t *testing.T) {
	page := manPage(t)
	for _, f := range []string{"/var/log/earlyinit.log", "/var/log/earlyinit-output.log", "/run/earlyinit/boot.json", "/run/earlyinit/status.json", "/run/earlyinit/instance-data.json",
		"/var/lib/earlyinit/seed", "/etc/machine-id", "/run/earlyinit/initramfs.log"} {
		if !strings.Contains(page, roffText(f)) {
			t.Errorf("the page does not name %s", f)
		}
	}
	_, exit, _ := strings.Cut(page, ".SH EXIT STATUS\n")
	for _, c := range []string{".B 0\n", ".B 1\n", ".B 2\na usage error"} {
		if !strings.Contains(exit, c) {
			t.Errorf("EXIT STATUS lacks %q", c)
		}
	}
}
