// Package logs is earlyinit's one logging interface, Logger, which every
// package that reports takes (the boot's log, boot.Log, is the one PID 1
// uses), and Guard, the recover PID 1 runs its steps and goroutines under.
// Timing steps is not logging: boot.Log's Step does that.
package logs

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// Logger is where a package reports: a line per message.
type Logger interface {
	// Printf logs at info level.
	Printf(format string, args ...any)
	// Errorf logs at error level.
	Errorf(format string, args ...any)
	// Debugf logs at debug level: only when debugging is on.
	Debugf(format string, args ...any)
}

// Writer is a Logger writing a line per message to w, errors as the
// others, debug lines not at all.
func Writer(w io.Writer) Logger { return writer{w} }

type writer struct{ w io.Writer }

func (l writer) Printf(format string, args ...any) { fmt.Fprintf(l.w, format+"\n", args...) }
func (l writer) Errorf(format string, args ...any) { fmt.Fprintf(l.w, format+"\n", args...) }
func (l writer) Debugf(format string, args ...any) {}

// Guard runs fn and turns a panic in it into an error ("panic: VALUE"),
// after logging to l what panicked and its stack. PID 1 must never panic:
// every step and every goroutine of the boot runs under Guard.
func Guard(l Logger, what string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
			l.Errorf("%s panicked: %v\n%s", what, r, Stack(debug.Stack()))
		}
	}()
	return fn()
}

// Stack trims a debug.Stack to the frames below the panic: the runtime's
// and Guard's own frames say nothing about where it happened.
func Stack(stack []byte) string {
	lines := strings.Split(strings.TrimRight(string(stack), "\n"), "\n")
	for i, line := range lines {
		if strings.HasPrefix(line, "panic(") && i+2 < len(lines) {
			return strings.Join(lines[i+2:], "\n")
		}
	}
	return strings.Join(lines, "\n")
}
