package boot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/earlyinit/earlyinit/internal/logs"
)

// Log writes earlyinit's lines to the console and to /dev/kmsg, so the real
// OS's journal keeps them, and records how long each step took.
type Log struct {
	mu      sync.Mutex
	console io.Writer
	kmsg    io.Writer // may be nil
	start   time.Time
	debug   bool
	steps   []StepRecord
	saved   bytes.Buffer // every console line, for the late stage's log
	now     func() time.Time
}

// StepRecord is one step of the boot record, as `earlyinit analyze` reads it.
type StepRecord struct {
	Name     string        `json:"name"`
	Start    time.Duration `json:"start_ns"` // since earlyinit started
	Duration time.Duration `json:"duration_ns"`
	Error    string        `json:"error,omitempty"`
}

// newLog returns a log writing to console and kmsg (nil to skip).
func newLog(console, kmsg io.Writer, start time.Time) *Log {
	return &Log{console: console, kmsg: kmsg, start: start, now: time.Now}
}

// SetDebug turns debug lines on or off.
func (l *Log) SetDebug(on bool) { l.mu.Lock(); l.debug = on; l.mu.Unlock() }

// Printf logs one line at info level.
func (l *Log) Printf(format string, args ...any) { l.write(6, fmt.Sprintf(format, args...)) }

// Errorf logs one line at error level.
func (l *Log) Errorf(format string, args ...any) { l.write(3, fmt.Sprintf(format, args...)) }

// Debugf logs one line only with earlyinit.debug.
func (l *Log) Debugf(format string, args ...any) {
	l.mu.Lock()
	on := l.debug
	l.mu.Unlock()
	if on {
		l.write(7, fmt.Sprintf(format, args...))
	}
}

func (l *Log) write(level int, msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	el := l.now().Sub(l.start).Seconds()
	for _, line := range strings.Split(strings.TrimRight(msg, "\n"), "\n") {
		fmt.Fprintf(l.console, "earlyinit: [%8.3f] %s\n", el, line)
		fmt.Fprintf(&l.saved, "earlyinit: [%8.3f] %s\n", el, line)
		if l.kmsg != nil {
			// One write per record; the kernel caps a record near 1 KiB.
			if len(line) > 900 {
				line = line[:900] + "..."
			}
			fmt.Fprintf(l.kmsg, "<%d>earlyinit: %s\n", level, line)
		}
	}
}

// Step runs fn as a named step, logs its duration and records it. The error
// fn returns is logged and returned; it is the caller's to decide whether
// the boot goes on (it almost always does). A panic in fn is recovered:
// its stack is logged and it is the step's error.
func (l *Log) Step(name string, fn func() error) error {
	t0 := l.now()
	err := logs.Guard(l, "step "+name, func() error {
		injectFault(name)
		return fn()
	})
	d := l.now().Sub(t0)
	rec := StepRecord{Name: name, Start: t0.Sub(l.start), Duration: d}
	if err != nil {
		rec.Error = err.Error()
		l.Errorf("step %s failed after %s: %v", name, round(d), err)
	} else {
		l.Printf("step %s done in %s", name, round(d))
	}
	l.mu.Lock()
	l.steps = append(l.steps, rec)
	l.mu.Unlock()
	return err
}

// Bytes returns every line logged so far.
func (l *Log) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.saved.Bytes()...)
}

// Steps returns the steps recorded so far.
func (l *Log) Steps() []StepRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]StepRecord(nil), l.steps...)
}

// Record is the boot record earlyinit leaves in /run/earlyinit/boot.json.
type Record struct {
	Version string        `json:"version"`
	Steps   []StepRecord  `json:"steps"`
	Total   time.Duration `json:"total_ns"`
	// ModuleLoad is the time spent loading kernel modules, DeviceWait the
	// time spent polling for devices; Total less both is earlyinit's own.
	ModuleLoad time.Duration `json:"module_load_ns"`
	DeviceWait time.Duration `json:"device_wait_ns"`
	// NetworkWait is the time spent reaching the metadata service.
	NetworkWait time.Duration `json:"network_wait_ns"`
	Init        string        `json:"init"`
	Disabled    bool          `json:"disabled"`
	// StartedUnix is when earlyinit started, in seconds since the epoch,
	// and Uptime the seconds since the kernel started at that moment
	// (CLOCK_BOOTTIME): `earlyinit analyze plot` joins the initramfs's
	// steps and the late stages' wall-clock times on one timeline.
	StartedUnix float64 `json:"started_unix,omitempty"`
	Uptime      float64 `json:"uptime,omitempty"`
	// Mode is "distro" when a distro initramfs ran earlyinit on the root
	// it had mounted (earlyinit provision), empty as PID 1.
	Mode string `json:"mode,omitempty"`
}

// Marshal returns the record as indented JSON.
func (r Record) Marshal() []byte {
	b, _ := json.MarshalIndent(r, "", " ")
	return append(b, '\n')
}

func round(d time.Duration) time.Duration {
	if d > time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(10 * time.Microsecond)
}
