package accounts

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"

	"github.com/earlyinit/earlyinit/internal/modules/sshd"
)

// startExec is fakeExec with Start: a started command runs (its handler)
// in its own goroutine once want commands have been started, so one that
// is waited for before the next is started never runs and fails with
// "ran alone". It counts the commands started and not yet waited for.
type startExec struct {
	*coretest.FakeExec
	want int
	all  chan struct{}

	mu                             sync.Mutex
	started, inFlight, maxInFlight int
}

func newStartExec(f *coretest.FakeExec, want int) *startExec {
	return &startExec{FakeExec: f, want: want, all: make(chan struct{})}
}

func (s *startExec) Start(ctx context.Context, c core.Cmd) func() ([]byte, error) {
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
		out, err := s.FakeExec.Run(ctx, c)
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
func fakeKeygen(fail ...string) func(core.Cmd) ([]byte, error) {
	return func(c core.Cmd) ([]byte, error) {
		t, f := c.Args[1], c.Args[len(c.Args)-1]
		for _, x := range fail {
			if t == x {
				return []byte("keygen " + t + " failed\n"), coretest.ExitErr(1)
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

func sortedCalls(te *coretest.Env) []string {
	c := te.Calls()
	sort.Strings(c)
	return c
}

// debianSshd and rhelSshd are the host key lines of Debian 12's and
// EL9's sshd_config: Debian's commented out (sshd's defaults), RHEL's
// naming the three keys.
const (
	debianSshd = "Include /etc/ssh/sshd_config.d/*.conf\n#HostKey /etc/ssh/ssh_host_rsa_key\n#HostKey /etc/ssh/ssh_host_ecdsa_key\n#HostKey /etc/ssh/ssh_host_ed25519_key\n"
	rhelSshd   = "Include /etc/ssh/sshd_config.d/*.conf\nHostKey /etc/ssh/ssh_host_rsa_key\nHostKey /etc/ssh/ssh_host_ecdsa_key\nHostKey /etc/ssh/ssh_host_ed25519_key\n"
)

// TestHostKeysInProcess: with ssh_genkeytypes not set on a Debian
// sshd_config, the old keys go and ECDSA and ed25519 keys are made
// without a process: files OpenSSH's ssh-keygen reads back (the same
// public key), root's, 0600 and 0644, and ssh-keygen's words in the
// output log in the types' order, with the fingerprint ssh-keygen gives
// the public file.
func TestHostKeysInProcess(t *testing.T) {
	te := coretest.NewEnv(t, "users: []\n")
	te.Write(sshd.ConfigFile, debianSshd, 0o644)
	te.Write("/etc/ssh/ssh_host_rsa_key", "old", 0o600)
	te.Write("/etc/ssh/ssh_host_rsa_key.pub", "old", 0o644)
	if err := te.RunFunc(SSH); err != nil {
		t.Fatal(err)
	}
	te.WantCalls()
	if te.Root.Exists("/etc/ssh/ssh_host_rsa_key") || te.Root.Exists("/etc/ssh/ssh_host_rsa_key.pub") {
		t.Error("an RSA key is there: nothing asked for one")
	}
	kg := sshKeygen(t)
	var want strings.Builder
	for _, typ := range unaskedKeyTypes {
		f := "/etc/ssh/ssh_host_" + typ + "_key"
		te.WantMode(f, 0o600, 0, 0)
		te.WantMode(f+".pub", 0o644, 0, 0)
		pub := te.Read(f + ".pub")
		out, err := exec.Command(kg, "-y", "-f", te.Root.Path(f)).CombinedOutput()
		if err != nil || string(out) != pub {
			t.Errorf("%s: ssh-keygen -y says %q (%v), the public file %q", typ, out, err, pub)
		}
		out, err = exec.Command(kg, "-l", "-f", te.Root.Path(f+".pub")).Output()
		if err != nil {
			t.Fatal(err)
		}
		host, _ := os.Hostname()
		if c := strings.Fields(pub)[2]; c != "root@"+host {
			t.Errorf("%s: comment %q, want root@%s as ssh-keygen's", typ, c, host)
		}
		want.WriteString("Generating public/private " + typ + " key pair.\nYour identification has been saved in " + f +
			"\nYour public key has been saved in " + f + ".pub\nThe key fingerprint is:\n" + strings.Fields(string(out))[1] + " root@" + host + "\n")
	}
	var got strings.Builder
	for _, l := range strings.SplitAfter(te.OutBuf.String(), "\n") {
		if !strings.HasPrefix(l, "|") && !strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "The key's randomart") {
			got.WriteString(l)
		}
	}
	if got.String() != want.String() {
		t.Errorf("output log without the randomart:\n%s\nwant\n%s", got.String(), want.String())
	}
}

// TestHostKeyTypes: which keys are made when ssh_genkeytypes is not set:
// those sshd_config's HostKey lines name (also in an included file, not
// a custom path), else ECDSA and ed25519; a set ssh_genkeytypes is taken
// as it is, as cloud-init takes it.
func TestHostKeyTypes(t *testing.T) {
	for _, c := range []struct {
		name, cfg string
		files     map[string]string
		want      []string
	}{
		{"debian", "", map[string]string{sshd.ConfigFile: debianSshd}, unaskedKeyTypes},
		{"rhel", "", map[string]string{sshd.ConfigFile: rhelSshd}, []string{"rsa", "ecdsa", "ed25519"}},
		{"drop-in", "", map[string]string{sshd.ConfigFile: debianSshd, "/etc/ssh/sshd_config.d/10-keys.conf": "HostKey \"/etc/ssh/ssh_host_ed25519_key\"\nHostKey /etc/ssh//ssh_host_rsa_key\n"}, []string{"ed25519", "rsa"}},
		{"custom path", "", map[string]string{sshd.ConfigFile: "HostKey /etc/ssh/mykey\n"}, unaskedKeyTypes},
		{"no sshd", "", nil, unaskedKeyTypes},
		{"asked", "ssh_genkeytypes: [rsa]\n", map[string]string{sshd.ConfigFile: debianSshd}, []string{"rsa"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := coretest.NewEnv(t, "users: []\nssh_quiet_keygen: true\n"+c.cfg)
			for f, content := range c.files {
				te.Write(f, content, 0o644)
			}
			if err := te.RunFunc(SSH); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, typ := range []string{"rsa", "ecdsa", "ed25519", "dsa"} {
				if te.Root.Exists("/etc/ssh/ssh_host_" + typ + "_key") {
					got = append(got, typ)
				}
			}
			want := slices.Clone(c.want)
			slices.Sort(want)
			slices.Sort(got)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("keys made %q, want %q", got, want)
			}
		})
	}
}

// TestHostKeysGroupSshKeys: with a group ssh_keys the private keys are
// root:ssh_keys 0640, as cc_ssh leaves them ("the same sanitize
// permissions as sshd-keygen"), ssh-keygen's (dsa) as the in-process ones.
func TestHostKeysGroupSshKeys(t *testing.T) {
	te := coretest.NewEnv(t, "users: []\nssh_genkeytypes: [ed25519, dsa]\n")
	te.Write("/etc/group", coretest.BaseGroup+"ssh_keys:x:996:\n", 0o644)
	te.Fake.Handlers["ssh-keygen"] = fakeKeygen()
	if err := te.RunFunc(SSH); err != nil {
		t.Fatal(err)
	}
	te.WantCalls("ssh-keygen -t dsa -N  -f /etc/ssh/ssh_host_dsa_key")
	for _, typ := range []string{"ed25519", "dsa"} {
		te.WantMode("/etc/ssh/ssh_host_"+typ+"_key", 0o640, 0, 996)
		te.WantMode("/etc/ssh/ssh_host_"+typ+"_key.pub", 0o644, 0, 0)
	}
	te.WantFile("/etc/ssh/ssh_host_dsa_key", "PRIVATE dsa", 0o640, 0, 996)
}

// TestHostKeyFailureByType: one type failing is reported by its type, and
// the others are still made.
func TestHostKeyFailureByType(t *testing.T) {
	te := coretest.NewEnv(t, "users: []\nssh_genkeytypes: [dsa, ed25519]\n")
	te.Fake.Handlers["ssh-keygen"] = fakeKeygen("dsa")
	err := te.RunFunc(SSH)
	if err == nil {
		t.Fatal("no error with dsa's ssh-keygen failing")
	}
	msg := err.Error()
	if !strings.Contains(msg, "ssh host key dsa: run ssh-keygen -t dsa -N  -f "+te.Root.Path("/etc/ssh/ssh_host_dsa_key")+": exit status 1") {
		t.Errorf("error %q does not name dsa's failure", msg)
	}
	if strings.Contains(msg, "ssh host key ed25519") {
		t.Errorf("error %q blames more than dsa", msg)
	}
	te.WantMode("/etc/ssh/ssh_host_ed25519_key", 0o600, 0, 0)
	if te.Root.Exists("/etc/ssh/ssh_host_dsa_key") {
		t.Error("dsa key there though its ssh-keygen failed")
	}
	if got := te.OutBuf.String(); !strings.HasPrefix(got, "Generating public/private ed25519 key pair.\n") {
		t.Errorf("output log %q", got)
	}
}

// TestHostKeysToMake: a type listed twice is made once (two ssh-keygen on
// one file would ask whether to overwrite it), a kept key is not made
// again, an unknown type is an error that does not stop the others, and
// ssh_quiet_keygen keeps ssh-keygen's words out of the output log.
func TestHostKeysToMake(t *testing.T) {
	te := coretest.NewEnv(t, "users: []\nssh_deletekeys: false\nssh_quiet_keygen: true\nssh_genkeytypes: [ed25519, rsa, ed25519, dsa, bogus]\n")
	te.Write("/etc/ssh/ssh_host_rsa_key", "kept", 0o600)
	te.Fake.Handlers["ssh-keygen"] = fakeKeygen()
	err := te.RunFunc(SSH)
	if err == nil || err.Error() != `ssh_genkeytypes: unknown key type "bogus"` {
		t.Errorf("error %v, want the unknown type alone", err)
	}
	te.WantCalls("ssh-keygen -t dsa -N  -f /etc/ssh/ssh_host_dsa_key")
	te.WantFile("/etc/ssh/ssh_host_rsa_key", "kept", 0o600, 0, 0)
	if n := strings.Count(te.Read("/etc/ssh/ssh_host_ed25519_key.pub"), "\n"); n != 1 {
		t.Errorf("ed25519 public file has %d lines", n)
	}
	if te.OutBuf.Len() != 0 {
		t.Errorf("ssh_quiet_keygen: output log %q", te.OutBuf.String())
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
		waits = append(waits, core.SystemExec{}.Start(context.Background(), core.Cmd{Name: "sh", Args: []string{"-c", script, "sh", dir, n}}))
	}
	for i, n := range []string{"a", "b", "c"} {
		out, err := waits[i]()
		if err != nil || string(out) != n+" met the others\n" {
			t.Errorf("%s: %q %v", n, out, err)
		}
	}
	// A failure comes back as Run's: exit code and output.
	out, err := core.SystemExec{}.Start(context.Background(), core.Cmd{Name: "sh", Args: []string{"-c", "echo no; exit 3"}})()
	if c, ok := core.ExitCode(err); !ok || c != 3 || string(out) != "no\n" || !strings.Contains(err.Error(), "no") {
		t.Errorf("failure: %q %v", out, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err != nil {
		t.Error(err)
	}
}

// TestEnvStartWithoutStarter: an Exec without Start runs the command when
// it is started, and its failure is wrapped as run's.
func TestEnvStartWithoutStarter(t *testing.T) {
	te := coretest.NewEnv(t, "")
	te.Fake.Handlers["false"] = func(core.Cmd) ([]byte, error) { return []byte("out"), coretest.ExitErr(1) }
	wait := start(context.Background(), te.Env, core.Cmd{Name: "false", Args: []string{"x"}})
	te.WantCalls("false x")
	out, err := wait()
	if string(out) != "out" || err == nil || err.Error() != "run false x: exit status 1" {
		t.Errorf("%q %v", out, err)
	}
	te.Exec = nil
	if _, err := start(context.Background(), te.Env, core.Cmd{Name: "x"})(); err != core.ErrNoExec {
		t.Errorf("nil Exec: %v", err)
	}
}
