package vm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// FreePort is a TCP port on 127.0.0.1 free now, for a host forward.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// SSHForward is the host forward of 127.0.0.1:port to the guest's sshd.
func SSHForward(port int) string { return fmt.Sprintf("tcp:127.0.0.1:%d-:22", port) }

// KeyPair makes an ed25519 key pair in dir with ssh-keygen and returns the
// private key's path and the public key's line.
func KeyPair(dir, comment string) (private, public string, err error) {
	private = filepath.Join(dir, "id_ed25519")
	out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", private).CombinedOutput()
	if err != nil {
		return "", "", fmt.Errorf("ssh-keygen: %v: %s", err, out)
	}
	pub, err := os.ReadFile(private + ".pub")
	return private, strings.TrimSpace(string(pub)), err
}

// SSH logs in to a guest through a host forward on 127.0.0.1, as a user
// would: with a key (Key, a private key file) or a password (Password,
// given to ssh through SSH_ASKPASS), the host key accepted without a
// known_hosts file.
type SSH struct {
	Port     int
	User     string
	Key      string
	Password string
	// Dir holds the askpass script for Password (a temporary directory).
	Dir string
}

// Command is the ssh command line that runs remote on the guest.
func (s SSH) Command(ctx context.Context, remote string) (*exec.Cmd, error) {
	args := []string{"-p", strconv.Itoa(s.Port), "-o", "StrictHostKeyChecking=no", "-o", "UserKnownHostsFile=/dev/null",
		"-o", "LogLevel=ERROR", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=6"}
	env := os.Environ()
	switch {
	case s.Key != "":
		args = append(args, "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes", "-o", "PasswordAuthentication=no", "-i", s.Key)
	case s.Password != "":
		if s.Dir == "" {
			return nil, errors.New("ssh: a password login needs Dir for its askpass script")
		}
		askpass := filepath.Join(s.Dir, "askpass")
		script := "#!/bin/sh\nprintf '%s\\n' '" + strings.ReplaceAll(s.Password, "'", `'\''`) + "'\n"
		if err := os.WriteFile(askpass, []byte(script), 0o700); err != nil {
			return nil, err
		}
		args = append(args, "-o", "PubkeyAuthentication=no", "-o", "PreferredAuthentications=password,keyboard-interactive",
			"-o", "NumberOfPasswordPrompts=1", "-o", "IdentitiesOnly=yes", "-o", "IdentityFile=/dev/null")
		env = append(env, "SSH_ASKPASS="+askpass, "SSH_ASKPASS_REQUIRE=force", "DISPLAY=none")
	default:
		return nil, errors.New("ssh: neither a key nor a password")
	}
	args = append(args, s.User+"@127.0.0.1", remote)
	cmd := exec.CommandContext(ctx, "ssh", args...)
	cmd.Env = env
	cmd.Stdin = nil
	cmd.WaitDelay = 5 * time.Second
	return cmd, nil
}

// Run runs remote on the guest and returns its stdout; a failure's error
// has stderr.
func (s SSH) Run(ctx context.Context, remote string) (string, error) {
	cmd, err := s.Command(ctx, remote)
	if err != nil {
		return "", err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("ssh %s@127.0.0.1:%d %q: %w: %s", s.User, s.Port, remote, err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// WaitUp tries `true` over SSH until it works, m ends, or timeout passes;
// the error is the last attempt's.
func (s SSH) WaitUp(ctx context.Context, m *Machine, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		select {
		case <-m.Done():
			return fmt.Errorf("the VM stopped before sshd answered (last: %v)", last)
		default:
		}
		actx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, last = s.Run(actx, "true")
		cancel()
		if last == nil {
			return nil
		}
		time.Sleep(2 * time.Second)
	}
	return fmt.Errorf("no SSH login within %s: %w", timeout, last)
}
