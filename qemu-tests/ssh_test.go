//go:build qemu

package qemutests

import (
	"context"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/vm"
)

// guest is a VM reached as its user would reach it: QEMU's user network
// (restrict=on) with sshd forwarded to a port on 127.0.0.1.
type guest struct {
	t    *testing.T
	m    *vm.Machine
	port int
	dir  string
}

// startGuest boots c with one user-network NIC of mac whose sshd is
// forwarded to a free port on 127.0.0.1, and returns at once.
func startGuest(t *testing.T, c vm.Config, mac string) *guest {
	t.Helper()
	port, err := vm.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	c.NICs = append(c.NICs, vm.NIC{MAC: mac, Netdev: "user", HostFwd: []string{vm.SSHForward(port)}})
	if c.Kernel == "" {
		c.Kernel = kernel
	}
	if c.Initrd == "" {
		c.Initrd = initrd
	}
	if !strings.Contains(c.Append, "console=") {
		c.Append = "console=ttyS0 panic=-1 " + c.Append
	}
	if c.Timeout == 0 {
		c.Timeout = 12 * time.Minute
	}
	m, err := vm.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	g := &guest{t: t, m: m, port: port, dir: t.TempDir()}
	t.Cleanup(func() {
		select {
		case <-m.Done():
		default:
			m.Stop()
		}
		res, _ := m.Wait()
		if t.Failed() && res != nil {
			t.Logf("console (%s):\n%s", res.Duration.Round(time.Second), res.Console)
		}
	})
	return g
}

// login is an SSH login as user with a key file or a password.
func (g *guest) login(user, key, password string) vm.SSH {
	return vm.SSH{Port: g.port, User: user, Key: key, Password: password, Dir: g.dir}
}

// waitSSH waits for a login to work (sshd up, the user provisioned).
func (g *guest) waitSSH(s vm.SSH, timeout time.Duration) {
	g.t.Helper()
	t0 := time.Now()
	if err := s.WaitUp(context.Background(), g.m, timeout); err != nil {
		g.t.Fatalf("SSH as %s: %v", s.User, err)
	}
	g.t.Logf("SSH as %s after %s", s.User, time.Since(t0).Round(time.Second))
}

// run runs cmd over s and returns its output; a failure fails the test.
func (g *guest) run(s vm.SSH, cmd string) string {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := s.Run(ctx, cmd)
	if err != nil {
		g.t.Fatalf("%v", err)
	}
	return out
}

// fails says whether cmd over s fails (a login refused, say).
func (g *guest) fails(s vm.SSH, cmd string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := s.Run(ctx, cmd)
	return err != nil
}

// powerOff asks the guest to power off over s (a sudoer) and waits.
func (g *guest) powerOff(s vm.SSH) *vm.Result {
	g.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s.Run(ctx, "sudo -n systemctl poweroff") // the connection may drop
	res, err := g.m.Wait()
	if err != nil {
		g.t.Fatalf("power off: %v", err)
	}
	return res
}

const (
	pveMAC      = "bc:24:11:5e:00:01"
	pvePassword = "pve-s3cret"
	// pveHash is what Proxmox VE puts in user-data for that password:
	// openssl passwd -5 -salt Pr0xm0xS pve-s3cret.
	pveHash = "$5$Pr0xm0xS$P7QbVMpK/EBXDLHmSSOMQMulCc838Pw6e4QJc6MyCs7"
)

// pveUserData is the user-data Proxmox VE generates for a Linux guest
// (PVE::QemuServer::Cloudinit), in its exact shape: the password hashed,
// chpasswd's expire off, the default user renamed by user:.
func pveUserData(key string) string {
	return `#cloud-config
hostname: pve-guest
manage_etc_hosts: true
fqdn: pve-guest.example
user: pveuser
password: ` + pveHash + `
ssh_authorized_keys:
  - ` + key + `
chpasswd:
  expire: False
users:
  - default
`
}

// pveNetwork is Proxmox VE's network-config for a NIC with DHCP.
const pveNetwork = `version: 1
config:
    - type: physical
      name: eth0
      mac_address: '` + pveMAC + `'
      subnets:
      - type: dhcp4
`

// TestProxmoxPasswordOverSSH boots a Debian root with the NoCloud drive
// Proxmox VE makes, and logs in as its user would: with the password
// whose hash Proxmox sent (not with the hash itself), with the key, then
// sudo, the host name, and the password not expired (expire: False).
func TestProxmoxPasswordOverSSH(t *testing.T) {
	parallel(t, time.Minute) // a Debian boot, over SSH
	dir := debianDir(t)
	img := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(img, dir, "root", "", 1024); err != nil {
		t.Fatal(err)
	}
	key, pub, err := vm.KeyPair(t.TempDir(), "pve@test")
	if err != nil {
		t.Fatal(err)
	}
	seed := seedISO(t, "cidata", map[string]string{
		"meta-data":      "instance-id: 9001-pve\n",
		"user-data":      pveUserData(pub),
		"network-config": pveNetwork,
	})
	g := startGuest(t, vm.Config{Append: "root=LABEL=root rw earlyinit.timeout=30",
		Disks: []vm.Disk{{Path: img}, {Path: seed, If: "ide-cd"}}, RNG: true, MemoryMB: 1024}, pveMAC)
	byPassword := g.login("pveuser", "", pvePassword)
	g.waitSSH(byPassword, 8*time.Minute)

	if got := strings.TrimSpace(g.run(byPassword, "id -un")); got != "pveuser" {
		t.Errorf("password login: id -un = %q", got)
	}
	if !g.fails(g.login("pveuser", "", pveHash), "true") {
		t.Errorf("the hash itself is accepted as the password: it was set as clear text")
	}
	byKey := g.login("pveuser", key, "")
	if got := strings.TrimSpace(g.run(byKey, "hostname")); got != "pve-guest" {
		t.Errorf("hostname = %q, want pve-guest", got)
	}
	g.run(byKey, "sudo -n true")
	if got := strings.TrimSpace(g.run(byKey, `sudo -n awk -F: '$1=="pveuser"{print $2}' /etc/shadow`)); got != pveHash {
		t.Errorf("pveuser's shadow password = %q, want Proxmox's hash", got)
	}
	// The default user, as useradd would have made it (on Debian,
	// internal/accounts does): its groups, its home from /etc/skel, its
	// subordinate ids, no lock file left.
	acct := sections(g.run(byKey, `for c in "id -nG" "stat -c %U:%G:%a /home/pveuser" "ls -A /home/pveuser" "sudo -n cat /etc/subuid" "sudo -n ls /etc"; do echo "=== $c"; $c 2>&1; done`))
	for _, grp := range []string{"pveuser", "sudo", "netdev", "adm"} {
		if !strings.Contains(" "+strings.TrimSpace(acct["id -nG"])+" ", " "+grp+" ") {
			t.Errorf("id -nG: %q lacks %s", acct["id -nG"], grp)
		}
	}
	if got := strings.TrimSpace(acct["stat -c %U:%G:%a /home/pveuser"]); got != "pveuser:pveuser:755" {
		t.Errorf("home: %s, want pveuser:pveuser:755", got)
	}
	if ls := acct["ls -A /home/pveuser"]; !strings.Contains(ls, ".bashrc\n") || !strings.Contains(ls, ".profile\n") {
		t.Errorf("home lacks /etc/skel's files:\n%s", ls)
	}
	if !strings.Contains(acct["sudo -n cat /etc/subuid"], "pveuser:100000:65536\n") {
		t.Errorf("/etc/subuid: %q", acct["sudo -n cat /etc/subuid"])
	}
	if strings.Contains(acct["sudo -n ls /etc"], ".lock\n") {
		t.Errorf("a lock file is left in /etc:\n%s", acct["sudo -n ls /etc"])
	}
	// The host keys sshd serves, as a client sees them: the ones the
	// guest made, ECDSA and ed25519 (Debian's sshd_config names none).
	served := hostKeysServed(t, g.port)
	for _, typ := range []string{"ecdsa", "ed25519"} {
		file := strings.Fields(g.run(byKey, "cat /etc/ssh/ssh_host_"+typ+"_key.pub"))
		if len(file) < 2 || served[file[0]] != file[1] {
			t.Errorf("%s: sshd serves %q, the guest's file has %q", typ, served, file)
		}
	}
	if k, ok := served["ssh-rsa"]; ok {
		t.Errorf("an RSA host key is served (%.20s...): nothing asked for one", k)
	}
	// expire: False: a password login needs no change (chage would say
	// "password must be changed").
	if chage := g.run(byKey, "sudo -n chage -l pveuser"); strings.Contains(chage, "password must be changed") {
		t.Errorf("pveuser's password expired:\n%s", chage)
	}
	// The hash is a secret: not in the runner's logs nor the journal.
	logs := g.run(byKey, "sudo -n cat /var/log/earlyinit.log /var/log/earlyinit-output.log; sudo -n journalctl -b --no-pager -o cat")
	if strings.Contains(logs, "P7QbVMpK") {
		t.Errorf("the password hash is in a log")
	}
	if !strings.Contains(logs, "pveuser") {
		t.Errorf("the logs do not mention pveuser at all:\n%s", tailLines(logs, 40))
	}
	g.powerOff(byKey)
}

// hostKeysServed is what ssh-keyscan gets from the guest's sshd: key
// blob by algorithm.
func hostKeysServed(t *testing.T, port int) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, "ssh-keyscan", "-p", strconv.Itoa(port), "-t", "rsa,ecdsa,ed25519", "127.0.0.1").Output()
	if err != nil {
		t.Fatalf("ssh-keyscan: %v", err)
	}
	keys := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) == 3 && !strings.HasPrefix(l, "#") {
			keys[f[1]] = f[2]
		}
	}
	return keys
}

// tailLines is the last n lines of s.
func tailLines(s string, n int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(l[max(0, len(l)-n):], "\n")
}
