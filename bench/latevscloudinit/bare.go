package main

// The bare variant (-until provisioned): the same root, kernel, drive and
// VM as the others, booted with Debian's initramfs-tools image, with what
// the user-data provisions that the probe checks already in the image
// (user alice, her key, her sudo rule; the host keys are the image's own)
// and no datasource tool at all: cloud-init disabled and its generator
// masked, so neither cloud-init's units nor ds-identify run, and no
// earlyinit. Its time to provisioned is the machine's own boot to sshd;
// each tool's overhead is its time less bare's.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/vm"
)

// tag names v's files: its letter, or "bare".
func (v *variant) tag() string {
	if v.bare {
		return bareName
	}
	return v.name[:1]
}

// bareSudoers is alice's rule, as the user-data gives it.
const bareSudoers = "# bench bare: baked in, as the user-data's sudo\nalice ALL=(ALL) NOPASSWD:ALL\n"

// bakeBare adds to the root tree at dir what the probe checks, as the
// tools would have made it: alice (the first free uid and gid from 1000,
// her group, in sudo, /bin/bash, password locked), her home with
// .ssh/authorized_keys holding her key, her sudoers rule; and masks
// cloud-init's generator (a link to /dev/null of its name in
// /etc/systemd/system-generators), beside cloud-init.disabled.
func bakeBare(dir string) error {
	passwd, err := os.ReadFile(filepath.Join(dir, "etc/passwd"))
	if err != nil {
		return err
	}
	group, err := os.ReadFile(filepath.Join(dir, "etc/group"))
	if err != nil {
		return err
	}
	id := freeID(string(passwd), string(group))
	ids := strconv.Itoa(id)
	appends := map[string]string{
		"etc/passwd":  "alice:x:" + ids + ":" + ids + ":Alice:/home/alice:/bin/bash\n",
		"etc/shadow":  "alice:!:19700:0:99999:7:::\n",
		"etc/group":   "alice:x:" + ids + ":\n",
		"etc/gshadow": "alice:!::\n",
	}
	for f, line := range appends {
		if err := appendFile(filepath.Join(dir, f), line); err != nil {
			return err
		}
	}
	for _, f := range []string{"etc/group", "etc/gshadow"} {
		if err := addToGroup(filepath.Join(dir, f), "sudo", "alice"); err != nil {
			return err
		}
	}
	home := filepath.Join(dir, "home/alice")
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{home, 0o700}, {filepath.Join(home, ".ssh"), 0o700}} {
		if err := os.MkdirAll(d.path, d.mode); err != nil {
			return err
		}
		if err := os.Chmod(d.path, d.mode); err != nil {
			return err
		}
	}
	keys := filepath.Join(home, ".ssh/authorized_keys")
	if err := os.WriteFile(keys, []byte(aliceKey+"\n"), 0o600); err != nil {
		return err
	}
	for _, p := range []string{home, filepath.Join(home, ".ssh"), keys} {
		if err := os.Chown(p, id, id); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "etc/sudoers.d/90-bench-bare"), []byte(bareSudoers), 0o440); err != nil {
		return err
	}
	gen := filepath.Join(dir, "etc/systemd/system-generators")
	if err := os.MkdirAll(gen, 0o755); err != nil {
		return err
	}
	return os.Symlink("/dev/null", filepath.Join(gen, "cloud-init-generator"))
}

// freeID is the first id from 1000 that no user and no group has.
func freeID(passwd, group string) int {
	used := map[int]bool{}
	for _, s := range []string{passwd, group} {
		for _, l := range strings.Split(s, "\n") {
			f := strings.Split(l, ":")
			if len(f) >= 3 {
				if n, err := strconv.Atoi(f[2]); err == nil {
					used[n] = true
				}
			}
		}
	}
	id := 1000
	for used[id] {
		id++
	}
	return id
}

func appendFile(p, s string) error {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(s)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// addToGroup adds user to the members (the last field) of group's line in
// a group or gshadow file.
func addToGroup(p, group, user string) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	lines := strings.Split(string(b), "\n")
	found := false
	for i, l := range lines {
		if !strings.HasPrefix(l, group+":") {
			continue
		}
		found = true
		if strings.HasSuffix(l, ":") {
			lines[i] = l + user
		} else {
			lines[i] = l + "," + user
		}
	}
	if !found {
		return fmt.Errorf("%s: no group %s", p, group)
	}
	return os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644)
}

// checkBare is check for the bare variant: what was baked in is there
// after the boot, and nothing provisioned anything (no tool's files).
func checkBare(img string) []string {
	cat := func(p string) string { s, _ := vm.Cat(img, p); return s }
	var miss []string
	want := func(ok bool, what string) {
		if !ok {
			miss = append(miss, what)
		}
	}
	want(regexp.MustCompile(`(?m)^alice:x:\d+:\d+:Alice:/home/alice:/bin/bash$`).MatchString(cat("/etc/passwd")), "user alice")
	want(strings.Contains(cat("/home/alice/.ssh/authorized_keys"), aliceKey), "alice's key")
	want(cat("/etc/e2e/plain.txt") == "" && cat("/var/log/e2e-runcmd.log") == "", "no user-data applied (a tool ran)")
	return miss
}
