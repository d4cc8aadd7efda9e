package modules

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// startExec is fakeExec with Start: a started command runs (its handler)
// in its own goroutine once want commands have been started, so one that
// is waited for before the next is started never runs and fails with
// "ran alone". It counts the commands started and not yet waited for.
type startExec struct {
	*fakeExec
	want int
	all  chan struct{}

	mu                             sync.Mutex
	started, inFlight, maxInFlight int
}

func newStartExec(f *fakeExec, want int) *startExec {
	return &startExec{fakeExec: f, want: want, all: make(chan struct{})}
}

func (s *startExec) Start(ctx context.Context, c Cmd) func() ([]byte, error) {
	s.mu.Lock()
	s.started++
	s.inFlight++
	s.maxInFlight = max(s.maxInFlight, s.inFlight)
	if s.started == s.want {
		close(s.all)
	}
	s.mu.Unlock()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		select {
		case <-s.all:
		case <-time.After(5 * time.Second):
			s.mu.Lock()
			n := s.started
			s.mu.Unlock()
			done <- result{nil, fmt.Errorf("%s ran alone: %d of %d commands started", c.String(), n, s.want)}
			return
		}
		out, err := s.fakeExec.Run(ctx, c)
		done <- result{out, err}
	}()
	return func() ([]byte, error) {
		r := <-done
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
		return r.out, r.err
	}
}

// fakeKeygen writes the key pair ssh-keygen -t T -f FILE would, and says
// which type it made; a type in fail exits 1 instead.
func fakeKeygen(fail ...string) func(Cmd) ([]byte, error) {
	return func(c Cmd) ([]byte, error) {
		t, f := c.Args[1], c.Args[len(c.Args)-1]
		for _, x := range fail {
			if t == x {
				return []byte("keygen " + t + " failed\n"), exitErr(1)
			}
		}
		if err := os.WriteFile(f, []byte("PRIVATE "+t), 0o600); err != nil {
			return nil, err
		}
		if err := os.WriteFile(f+".pub", []byte("ssh-"+t+" AAAA root@host\n"), 0o644); err != nil {
			return nil, err
		}
		return []byte("generated " + t + "\n"), nil
	}
}

func (te *testEnv) sortedCalls() []string {
	c := te.calls()
	sort.Strings(c)
	return c
}

// TestHostKeysInParallel: the default types are all started before any is
// waited for, each gets its own files, and the output keeps the types'
// order whatever order they finish in.
func TestHostKeysInParallel(t *testing.T) {
	te := newEnv(t, "users: []\n")
	te.write("/etc/ssh/ssh_host_rsa_key", "old", 0o600)
	te.exec.handlers["ssh-keygen"] = fakeKeygen()
	se := newStartExec(te.exec, 3)
	te.Exec = se
	if err := te.runModule("ssh"); err != nil {
		t.Fatal(err)
	}
	if se.maxInFlight != 3 {
		t.Errorf("at most %d ssh-keygen at once, want 3", se.maxInFlight)
	}
	want := []string{
		"ssh-keygen -t ecdsa -N  -f /etc/ssh/ssh_host_ecdsa_key",
		"ssh-keygen -t ed25519 -N  -f /etc/ssh/ssh_host_ed25519_key",
		"ssh-keygen -t rsa -N  -f /etc/ssh/ssh_host_rsa_key",
	}
	if got := te.sortedCalls(); !reflect.DeepEqual(got, want) {
		t.Errorf("commands:\n got %q\nwant %q", got, want)
	}
	for _, c := range te.exec.calls {
		if !reflect.DeepEqual(c.Env, []string{"LANG=C"}) {
			t.Errorf("%s: env %q, want LANG=C", c, c.Env)
		}
	}
	for _, typ := range defaultKeyTypes {
		te.wantFile("/etc/ssh/ssh_host_"+typ+"_key", "PRIVATE "+typ, 0o600, 0, 0)
		te.wantFile("/etc/ssh/ssh_host_"+typ+"_key.pub", "ssh-"+typ+" AAAA root@host\n", 0o644, 0, 0)
	}
	if got := te.out.String(); got != "generated rsa\ngenerated ecdsa\ngenerated ed25519\n" {
		t.Errorf("output log %q, want each type's output in ssh_genkeytypes' order", got)
	}
}

// TestHostKeyFailureByType: one type failing is reported by its type, and
// the others are still made.
func TestHostKeyFailureByType(t *testing.T) {
	te := newEnv(t, "users: []\nssh_genkeytypes: [rsa, ecdsa, ed25519]\n")
	te.exec.handlers["ssh-keygen"] = fakeKeygen("ecdsa")
	te.Exec = newStartExec(te.exec, 3)
	err := te.runModule("ssh")
	if err == nil {
		t.Fatal("no error with ecdsa's ssh-keygen failing")
	}
	msg := err.Error()
	if !strings.Contains(msg, "ssh host key ecdsa: run ssh-keygen -t ecdsa -N  -f "+te.Root.Path("/etc/ssh/ssh_host_ecdsa_key")+": exit status 1") {
		t.Errorf("error %q does not name ecdsa's failure", msg)
	}
	if strings.Contains(msg, "ssh host key rsa") || strings.Contains(msg, "ssh host key ed25519") || strings.Contains(msg, "ran alone") {
		t.Errorf("error %q blames more than ecdsa", msg)
	}
	for _, typ := range []string{"rsa", "ed25519"} {
		te.wantFile("/etc/ssh/ssh_host_"+typ+"_key", "PRIVATE "+typ, 0o600, 0, 0)
	}
	if te.Root.Exists("/etc/ssh/ssh_host_ecdsa_key") {
		t.Error("ecdsa key there though its ssh-keygen failed")
	}
	if got := te.out.String(); got != "generated rsa\ngenerated ed25519\n" {
		t.Errorf("output log %q", got)
	}
}

// TestHostKeysToMake: a type listed twice is made once (two ssh-keygen on
// one file would ask whether to overwrite it), a kept key is not made
// again, an unknown type is an error that does not stop the others, and
// ssh_quiet_keygen keeps ssh-keygen's output out of the output log.
func TestHostKeysToMake(t *testing.T) {
	te := newEnv(t, "users: []\nssh_deletekeys: false\nssh_quiet_keygen: true\nssh_genkeytypes: [ed25519, rsa, ed25519, dsa, bogus]\n")
	te.write("/etc/ssh/ssh_host_rsa_key", "kept", 0o600)
	te.exec.handlers["ssh-keygen"] = fakeKeygen()
	se := newStartExec(te.exec, 2)
	te.Exec = se
	err := te.runModule("ssh")
	if err == nil || err.Error() != `ssh_genkeytypes: unknown key type "bogus"` {
		t.Errorf("error %v, want the unknown type alone", err)
	}
	want := []string{
		"ssh-keygen -t dsa -N  -f /etc/ssh/ssh_host_dsa_key",
		"ssh-keygen -t ed25519 -N  -f /etc/ssh/ssh_host_ed25519_key",
	}
	if got := te.sortedCalls(); !reflect.DeepEqual(got, want) {
		t.Errorf("commands:\n got %q\nwant %q", got, want)
	}
	te.wantFile("/etc/ssh/ssh_host_rsa_key", "kept", 0o600, 0, 0)
	if te.out.Len() != 0 {
		t.Errorf("ssh_quiet_keygen: output log %q", te.out.String())
	}
}

// TestSystemExecStartOverlaps: SystemExec's Start runs real processes side
// by side: each of three makes its file and waits (bounded) until all
// three files are there, which only happens if none is waited for before
// the others start.
func TestSystemExecStartOverlaps(t *testing.T) {
	dir := t.TempDir()
	script := `touch "$1/$2"; i=0
while [ "$(ls "$1" | wc -l)" -lt 3 ]; do
	i=$((i+1)); [ "$i" -le 200 ] || { echo "alone after 10s: $(ls "$1")"; exit 1; }
	sleep 0.05
done
echo "$2 met the others"`
	var waits []func() ([]byte, error)
	for _, n := range []string{"a", "b", "c"} {
		waits = append(waits, SystemExec{}.Start(context.Background(), Cmd{Name: "sh", Args: []string{"-c", script, "sh", dir, n}}))
	}
	for i, n := range []string{"a", "b", "c"} {
		out, err := waits[i]()
		if err != nil || string(out) != n+" met the others\n" {
			t.Errorf("%s: %q %v", n, out, err)
		}
	}
	// A failure comes back as Run's: exit code and output.
	out, err := SystemExec{}.Start(context.Background(), Cmd{Name: "sh", Args: []string{"-c", "echo no; exit 3"}})()
	if c, ok := ExitCode(err); !ok || c != 3 || string(out) != "no\n" || !strings.Contains(err.Error(), "no") {
		t.Errorf("failure: %q %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err != nil {
		t.Error(err)
	}
}

// TestEnvStartWithoutStarter: an Exec without Start runs the command when
// it is started, and its failure is wrapped as run's.
func TestEnvStartWithoutStarter(t *testing.T) {
	te := newEnv(t, "")
	te.exec.handlers["false"] = func(Cmd) ([]byte, error) { return []byte("out"), exitErr(1) }
	wait := te.start(context.Background(), Cmd{Name: "false", Args: []string{"x"}})
	te.wantCalls("false x")
	out, err := wait()
	if string(out) != "out" || err == nil || err.Error() != "run false x: exit status 1" {
		t.Errorf("%q %v", out, err)
	}
	te.Exec = nil
	if _, err := te.start(context.Background(), Cmd{Name: "x"})(); err != errNoExec {
		t.Errorf("nil Exec: %v", err)
	}
}
