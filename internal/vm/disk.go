package vm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

var execCommand = exec.Command

// run runs a command and returns its error with its output.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return nil
}

// Ext4 makes an ext4 image of sizeMB from the tree in dir, without root
// privileges (mkfs.ext4 -d). label and uuid may be empty.
func Ext4(img, dir, label, uuid string, sizeMB int) error {
	args := []string{"-q", "-F", "-t", "ext4", "-d", dir, "-E", "root_owner=0:0"}
	if label != "" {
		args = append(args, "-L", label)
	}
	if uuid != "" {
		args = append(args, "-U", uuid)
	}
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		return err
	}
	if err := os.Truncate(img, int64(sizeMB)<<20); err != nil {
		return err
	}
	return run("mkfs.ext4", append(args, img)...)
}

// Cat returns a file's content from an ext4 image (debugfs, no mount).
func Cat(img, path string) (string, error) {
	out, err := exec.Command("debugfs", "-R", "cat "+path, img).Output()
	if err != nil {
		return "", fmt.Errorf("debugfs cat %s in %s: %w", path, img, err)
	}
	return string(out), nil
}

// Stat returns debugfs's stat of a path in an ext4 image ("" and an error
// when it does not exist).
func Stat(img, path string) (string, error) {
	out, err := exec.Command("debugfs", "-R", "stat "+path, img).CombinedOutput()
	s := string(out)
	if err != nil || strings.Contains(s, "File not found") {
		return "", fmt.Errorf("debugfs stat %s in %s: %v: %s", path, img, err, s)
	}
	return s, nil
}

// BusyboxRoot writes a tiny root into dir: Debian's static busybox and an
// init script that records what it saw (its PID, arguments, command line,
// mounts) under /seen, says so on the console, and powers off. The same
// script is installed as /sbin/init and /bin/altinit (which records its own
// name), so tests can tell which one ran.
func BusyboxRoot(dir string) error {
	bb := "/bin/busybox"
	if _, err := os.Stat(bb); err != nil {
		return fmt.Errorf("%s missing (apt-get install busybox-static): %w", bb, err)
	}
	for _, d := range []string{"bin", "sbin", "etc", "proc", "sys", "dev", "run", "tmp", "seen", "var/lib"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(bb)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "bin/busybox"), b, 0o755); err != nil {
		return err
	}
	// The applets a busybox distro links, so earlyinit's late stage finds
	// hostname, adduser, chpasswd... as it would there.
	for _, a := range []string{"sh", "hostname", "adduser", "addgroup", "passwd", "chpasswd", "cat", "sleep", "mount", "ip", "poweroff", "reboot"} {
		if err := os.Symlink("busybox", filepath.Join(dir, "bin", a)); err != nil {
			return err
		}
	}
	if err := WriteTree(dir, map[string]string{
		"etc/hostname": "image-template\n",
		"etc/passwd":   "root:x:0:0:root:/root:/bin/sh\n",
		"etc/group":    "root:x:0:\nadm:x:4:\n",
		"etc/hosts":    "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n",
	}); err != nil {
		return err
	}
	for _, name := range []string{"sbin/init", "bin/altinit"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(initScript), 0o755); err != nil {
			return err
		}
	}
	return nil
}

const initScript = `#!/bin/busybox sh
B=/bin/busybox
me=$0
# With earlyinit's late runner installed (roots without systemd enter us
# through "earlyinit late --exec"), wait for its final stage, bounded.
if [ -x /run/earlyinit/earlyinit ]; then
  i=0
  while [ ! -f /run/earlyinit/result.json ] && [ $i -lt 600 ]; do $B sleep 0.2; i=$((i+1)); done
  /run/earlyinit/earlyinit status --format json > /seen/status.json 2>&1
  echo "status-exit=$?" >> /seen/status.json
  /run/earlyinit/earlyinit analyze > /seen/analyze.txt 2>&1
  $B cp /var/log/earlyinit.log /seen/earlyinit.log 2>/dev/null
fi
{
  echo "init=$me"
  echo "pid=$$"
  echo "args=$*"
  echo "cmdline=$($B cat /proc/cmdline)"
  echo "uptime=$($B cut -d' ' -f1 /proc/uptime)"
  echo "--- mounts"
  $B cat /proc/mounts
  echo "--- root"
  $B ls -a /
  echo "--- run"
  $B ls -a /run /run/earlyinit 2>&1
  echo "--- nics"
  for n in /sys/class/net/*; do echo "nic $($B basename $n) $($B cat $n/address)"; done
  echo "--- addresses"
  $B ip -4 addr 2>&1
  echo "--- routes"
  $B ip route 2>&1
  echo "--- end"
} > /seen/init.txt 2>&1
[ -f /run/earlyinit/boot.json ] && $B cp /run/earlyinit/boot.json /seen/boot.json
if [ -d /run/earlyinit ]; then
  $B rm -rf /seen/run-earlyinit
  $B cp -a /run/earlyinit /seen/run-earlyinit
  $B ls -ln /run/earlyinit > /seen/run-earlyinit.ls
fi
[ -x /seen/hook ] && /seen/hook
echo "TESTINIT: $me pid=$$ args=$* uptime=$($B cut -d' ' -f1 /proc/uptime)" > /dev/console
$B sync
# As a real init's shutdown: a clean root (XFS checkpoints its log).
$B mount -o remount,ro / 2>/dev/null
$B poweroff -f
`
