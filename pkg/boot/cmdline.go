package boot

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultTimeout bounds every wait earlyinit does unless earlyinit.timeout=
// says otherwise.
const DefaultTimeout = 30 * time.Second

// maxTimeout is the largest earlyinit.timeout= accepted: one day.
const maxTimeout = 24 * time.Hour

// Cmdline is what earlyinit reads from /proc/cmdline.
type Cmdline struct {
	Root       string // root=: /dev/vda1, LABEL=, UUID=, PARTUUID=
	RootFSType string // rootfstype=, may be a comma-separated list
	RootFlags  string // rootflags=
	ReadOnly   bool   // ro (the kernel's default) unless rw is given
	Init       string // init=
	RootWait   bool
	RootDelay  time.Duration

	Disabled bool          // earlyinit=disabled
	Debug    bool          // earlyinit.debug
	Timeout  time.Duration // earlyinit.timeout=, in seconds (or a Go duration)

	// Params holds every key=value (last one wins) and every bare word
	// (value ""), for the steps that read their own options (ds=,
	// earlyinit.ds=, earlyinit.renderer=...).
	Params map[string]string
}

// SplitCmdline splits a kernel command line into words the way the kernel
// does: on white space, with double quotes grouping ("a=\"b c\"" is one word,
// quotes removed). Words after a lone "--" belong to init and are dropped.
func SplitCmdline(s string) []string {
	var words []string
	var b strings.Builder
	inWord, quoted := false, false
	flush := func() {
		if inWord {
			words = append(words, b.String())
		}
		b.Reset()
		inWord = false
	}
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			inWord = true
		case !quoted && (r == ' ' || r == '\t' || r == '\n'):
			flush()
		default:
			b.WriteRune(r)
			inWord = true
		}
	}
	flush()
	for i, w := range words {
		if w == "--" {
			return words[:i]
		}
	}
	return words
}

// ParseCmdline parses the contents of /proc/cmdline. Bad values of
// earlyinit's own options are reported and the default is kept: a typo on
// the command line must not stop a boot.
func ParseCmdline(s string) (Cmdline, []error) {
	c := Cmdline{ReadOnly: true, Timeout: DefaultTimeout, Params: map[string]string{}}
	var errs []error
	for _, w := range SplitCmdline(s) {
		k, v, _ := strings.Cut(w, "=")
		c.Params[k] = v
		switch k {
		case "root":
			c.Root = v
		case "rootfstype":
			c.RootFSType = v
		case "rootflags":
			c.RootFlags = v
		case "ro":
			c.ReadOnly = true
		case "rw":
			c.ReadOnly = false
		case "init":
			c.Init = v
		case "rootwait":
			c.RootWait = true
		case "rootdelay":
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				errs = append(errs, fmt.Errorf("cmdline: rootdelay=%q: want a whole number of seconds", v))
				continue
			}
			c.RootDelay = time.Duration(n) * time.Second
		case "earlyinit":
			switch v {
			case "disabled", "off", "0":
				c.Disabled = true
			case "enabled", "on", "1":
			default:
				errs = append(errs, fmt.Errorf("cmdline: earlyinit=%q: want disabled or enabled", v))
			}
		case "earlyinit.debug":
			c.Debug = v == "" || v == "1" || v == "true"
		case "earlyinit.timeout":
			d, err := parseSeconds(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("cmdline: earlyinit.timeout=%q: %w", v, err))
				continue
			}
			c.Timeout = d
		}
	}
	return c, errs
}

// parseSeconds accepts "10" (seconds) or a Go duration ("1500ms", "2m").
func parseSeconds(v string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		if n <= 0 || n > maxTimeout.Seconds() {
			return 0, fmt.Errorf("want a number of seconds above 0 and at most %v", maxTimeout.Seconds())
		}
		return time.Duration(n * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > maxTimeout {
		return 0, fmt.Errorf("want seconds (10) or a duration (1500ms), at most %v", maxTimeout)
	}
	return d, nil
}
