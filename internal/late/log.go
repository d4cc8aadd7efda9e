package late

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// Log files in the real root.
const (
	LogFile       = "/var/log/earlyinit.log"
	OutputLogFile = "/var/log/earlyinit-output.log"
)

// fileLog buffers writes for a file in the root and appends them on
// Flush (or when the buffer grows past 64 KiB): one confined, synced
// append per module rather than per line.
type fileLog struct {
	mu   sync.Mutex
	root *rootfs.Root
	name string
	buf  bytes.Buffer
	err  error
	tee  io.Writer
}

func (l *fileLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.tee != nil {
		l.tee.Write(p)
	}
	if l.buf.Len() > 64<<10 {
		l.flushLocked()
	}
	return len(p), nil
}

// writeFileOnly adds p to the file, not to the tee: for detail (a panic's
// stack) that would flood a console.
func (l *fileLog) writeFileOnly(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.buf.Len() > 64<<10 {
		l.flushLocked()
	}
}

func (l *fileLog) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
	return l.err
}

func (l *fileLog) flushLocked() {
	if l.buf.Len() == 0 {
		return
	}
	if err := l.root.AppendFile(l.name, l.buf.Bytes(), 0o600, 0, 0); err != nil && l.err == nil {
		l.err = err
	}
	l.buf.Reset()
}

// logger writes timestamped lines to the runner's log.
type logger struct {
	w     io.Writer
	stage string
	now   func() time.Time
}

func (lg *logger) logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	fmt.Fprintf(lg.w, "%s [%s] %s\n", lg.now().UTC().Format("2006-01-02 15:04:05.000"), lg.stage, line)
}
