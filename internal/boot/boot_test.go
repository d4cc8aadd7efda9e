package boot

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestChooseInit(t *testing.T) {
	root := t.TempDir()
	mk := func(p string, mode os.FileMode) {
		t.Helper()
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.WriteFile(full, []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		full := filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(full), 0o755)
		if err := os.Symlink(target, full); err != nil {
			t.Fatal(err)
		}
	}
	mk("lib/systemd/systemd", 0o755)
	mk("bin/sh", 0o755)
	mk("etc/init", 0o644) // not executable
	// Absolute symlinks resolve inside the root, as after switch_root.
	link("/lib/systemd/systemd", "sbin/init")
	link("../lib/systemd/systemd", "bin/relinit")
	link("/nonexistent", "bin/dangling")

	var logBuf bytes.Buffer
	log := newLog(&logBuf, nil, time.Now())
	for _, tt := range []struct {
		requested, want string
		logged          string
	}{
		{"", "/sbin/init", ""},
		{"/bin/relinit", "/bin/relinit", ""},
		{"/bin/sh", "/bin/sh", ""},
		{"/bin/dangling", "/sbin/init", "init=/bin/dangling is not an executable"},
		{"/etc/init", "/sbin/init", "init=/etc/init is not an executable"},
	} {
		logBuf.Reset()
		if got := ChooseInit(root, tt.requested, log); got != tt.want {
			t.Errorf("ChooseInit(%q) = %q, want %q", tt.requested, got, tt.want)
		}
		if tt.logged != "" && !strings.Contains(logBuf.String(), tt.logged) {
			t.Errorf("ChooseInit(%q) logged %q, want %q", tt.requested, logBuf.String(), tt.logged)
		}
	}
	os.Remove(filepath.Join(root, "sbin/init"))
	if got := ChooseInit(root, "", log); got != "/bin/sh" {
		t.Errorf("without /sbin/init: %q, want /bin/sh (etc/init is not executable)", got)
	}
}

func TestParseMountOptions(t *testing.T) {
	for _, tt := range []struct {
		in    string
		flags uintptr
		data  string
	}{
		{"", 0, ""},
		{"noatime,data=journal,nodev", unix.MS_NOATIME | unix.MS_NODEV, "data=journal"},
		{"ro,rw,defaults,subvol=@", 0, "subvol=@"},
	} {
		f, d := ParseMountOptions(tt.in)
		if f != tt.flags || d != tt.data {
			t.Errorf("ParseMountOptions(%q) = %#x, %q; want %#x, %q", tt.in, f, d, tt.flags, tt.data)
		}
	}
}

func TestRootErrorMessage(t *testing.T) {
	e := &rootError{Asked: "root=LABEL=x", Waited: 3 * time.Second, FSTypes: []string{"ext4", "vfat"}, Err: errors.New("no such device")}
	want := "cannot mount root root=LABEL=x after 3s: no such device\nblock devices seen: none\nfilesystems known to the kernel: ext4 vfat"
	if e.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", e.Error(), want)
	}
}

func TestLogStep(t *testing.T) {
	var console, kmsg bytes.Buffer
	l := newLog(&console, &kmsg, time.Now())
	l.Step("ok", func() error { return nil })
	err := l.Step("bad", func() error { return errors.New("boom") })
	if err == nil || err.Error() != "boom" {
		t.Fatalf("Step returned %v", err)
	}
	steps := l.Steps()
	if len(steps) != 2 || steps[0].Name != "ok" || steps[1].Error != "boom" {
		t.Fatalf("steps %+v", steps)
	}
	if !strings.Contains(console.String(), "step ok done in") || !strings.Contains(console.String(), "step bad failed after") {
		t.Errorf("console:\n%s", console.String())
	}
	if !strings.Contains(kmsg.String(), "<6>earlyinit: step ok done") || !strings.Contains(kmsg.String(), "<3>earlyinit: step bad failed") {
		t.Errorf("kmsg:\n%s", kmsg.String())
	}
	l.Debugf("hidden")
	if strings.Contains(console.String(), "hidden") {
		t.Errorf("debug line logged without earlyinit.debug")
	}
}

// panicsInStep is a named frame the recovered stack must show.
func panicsInStep() error {
	var m map[string]int
	m["x"]++ // a nil map write: a runtime panic, as a parser bug would be
	return nil
}

func TestLogStepRecoversPanic(t *testing.T) {
	var console, kmsg bytes.Buffer
	l := newLog(&console, &kmsg, time.Now())
	err := l.Step("network", panicsInStep)
	if err == nil || !strings.HasPrefix(err.Error(), "panic: assignment to entry in nil map") {
		t.Fatalf("Step returned %v", err)
	}
	// The boot goes on: the next step runs and both are recorded.
	l.Step("handoff", func() error { return nil })
	steps := l.Steps()
	if len(steps) != 2 || steps[0].Error != err.Error() || steps[1].Name != "handoff" || steps[1].Error != "" {
		t.Fatalf("steps %+v", steps)
	}
	for name, out := range map[string]string{"console": console.String(), "saved log": string(l.Bytes()), "kmsg": kmsg.String()} {
		for _, want := range []string{"step network panicked: assignment to entry in nil map", "boot.panicsInStep", "step network failed after"} {
			if !strings.Contains(out, want) {
				t.Errorf("%s lacks %q:\n%s", name, want, out)
			}
		}
	}
	// The stack starts at the panicking frame, not in the runtime.
	if i, j := strings.Index(console.String(), "panicked:"), strings.Index(console.String(), "runtime/panic.go"); j >= 0 && j > i {
		t.Errorf("runtime frames in the logged stack:\n%s", console.String())
	}
}
