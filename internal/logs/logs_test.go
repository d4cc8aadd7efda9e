package logs

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

func TestGuard(t *testing.T) {
	var b bytes.Buffer
	l := Writer(&b)
	if err := Guard(l, "x", func() error { return errors.New("plain") }); err == nil || err.Error() != "plain" {
		t.Errorf("Guard changed a plain error: %v", err)
	}
	if b.Len() != 0 {
		t.Errorf("Guard logged %q for a plain error", b.String())
	}
	if err := Guard(l, "step x", func() error { panic(errors.New("deep")) }); err == nil || err.Error() != "panic: deep" {
		t.Errorf("Guard: %v", err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "step x panicked: deep\n") || !strings.Contains(out, "logs.TestGuard") {
		t.Errorf("logged %q; want what panicked and the stack down to this test", out)
	}
	if strings.Contains(out, "runtime/panic.go") {
		t.Errorf("runtime frames in the logged stack:\n%s", out)
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	l := Writer(&b)
	l.Printf("a %d", 1)
	l.Debugf("hidden")
	l.Errorf("b %s", "c")
	if b.String() != "a 1\nb c\n" {
		t.Errorf("wrote %q", b.String())
	}
}
