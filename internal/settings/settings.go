// Package settings is earlyinit's configuration, typed and parsed once:
// today the kernel command line (root=, init=, earlyinit.*), later the
// image's own configuration merged into the same struct. Every option has a
// field with a type and a default; steps read fields, never raw words.
package settings

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// DefaultTimeout bounds every wait earlyinit does unless earlyinit.timeout=
// says otherwise.
const DefaultTimeout = 30 * time.Second

// maxTimeout is the largest earlyinit.timeout= accepted: one day.
const maxTimeout = 24 * time.Hour

// Settings is what earlyinit reads from /proc/cmdline, parsed once: every
// option earlyinit itself reads has a typed field here, and the steps read
// the fields, never the raw words.
type Settings struct {
	Root       string // root=: /dev/vda1, LABEL=, UUID=, PARTUUID=, PARTLABEL=
	RootFSType string // rootfstype=, may be a comma-separated list
	RootFlags  string // rootflags=
	ReadOnly   bool   // ro (the kernel's default) unless rw is given
	Init       string // init=
	RootWait   bool
	RootDelay  time.Duration

	Disabled    bool          // earlyinit=disabled
	Debug       bool          // earlyinit.debug
	Timeout     time.Duration // earlyinit.timeout=, in seconds (or a Go duration)
	KeepNet     bool          // earlyinit.keepnet: the temporary lease stays
	Datasources string        // earlyinit.ds=, comma separated; internal/discover checks the names
	MetadataURL string        // earlyinit.metadata_url=, an http(s) URL; "" for the default
	Renderer    string        // earlyinit.renderer=, a render.ByName name; "" to detect
	// NoGrow is earlyinit.growpart=0 (or off, no, false): the root's
	// partition and filesystem are not grown, whatever the cloud-config
	// says (growpart, resize_rootfs). A bare earlyinit.growpart, or =1,
	// leaves the decision to the cloud-config.
	NoGrow bool

	// Params holds every other key=value (last one wins) and bare word
	// (value ""), for options of other programs that earlyinit honours
	// (ds=nocloud;...). earlyinit's own options (earlyinit=,
	// earlyinit.*) are not in it: read their fields.
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
// earlyinit's own options, and unknown earlyinit.* keys, are reported (one
// error each, naming the key) and the default is kept: a typo on the
// command line must not stop a boot.
func ParseCmdline(s string) (Settings, []error) {
	c := Settings{ReadOnly: true, Timeout: DefaultTimeout, Params: map[string]string{}}
	var errs []error
	for _, w := range SplitCmdline(s) {
		k, v, _ := strings.Cut(w, "=")
		if k == "earlyinit" || strings.HasPrefix(k, "earlyinit.") {
			if err := c.setOption(k, v); err != nil {
				errs = append(errs, err)
			}
			continue
		}
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
			if err != nil || n < 0 || n > int(maxTimeout/time.Second) {
				errs = append(errs, fmt.Errorf("cmdline: rootdelay=%q: want a whole number of seconds, at most %d (default kept)", v, int(maxTimeout/time.Second)))
				continue
			}
			c.RootDelay = time.Duration(n) * time.Second
		}
	}
	return c, errs
}

// options are earlyinit's own keys. Each setter parses v ("" for a bare
// key) and sets its field only when v is good, so a bad value keeps the
// default (or the value an earlier word gave); its error says what it wants.
// The map is made on first use.
var options = sync.OnceValue(func() map[string]func(c *Settings, v string) error {
	return map[string]func(c *Settings, v string) error{
		"earlyinit": func(c *Settings, v string) error {
			// The late stage's units and status read earlyinit=disabled
			// literally; keep these words in step with internal/late.
			switch v {
			case "disabled", "off", "0":
				c.Disabled = true
			case "enabled", "on", "1":
				c.Disabled = false
			default:
				return errors.New("want disabled or enabled")
			}
			return nil
		},
		"earlyinit.debug":   boolOption(func(c *Settings) *bool { return &c.Debug }),
		"earlyinit.keepnet": boolOption(func(c *Settings) *bool { return &c.KeepNet }),
		"earlyinit.growpart": func(c *Settings, v string) error {
			b, err := parseBool(v)
			if err != nil {
				return err
			}
			c.NoGrow = !b
			return nil
		},
		"earlyinit.timeout": func(c *Settings, v string) error {
			d, err := parseSeconds(v)
			if err != nil {
				return err
			}
			c.Timeout = d
			return nil
		},
		"earlyinit.ds": func(c *Settings, v string) error {
			if strings.Trim(v, ", ") == "" {
				return errors.New("want datasource names, comma separated")
			}
			c.Datasources = v
			return nil
		},
		"earlyinit.metadata_url": func(c *Settings, v string) error {
			u, err := url.Parse(v)
			if err == nil && u.Scheme == "https" {
				// The initramfs's HTTP client has no TLS (internal/httpget).
				return errors.New("https is not supported in the initramfs: want an http:// URL")
			}
			if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
				return errors.New("want an http:// URL with a host and no user, query or fragment")
			}
			c.MetadataURL = v
			return nil
		},
		"earlyinit.renderer": func(c *Settings, v string) error {
			if _, err := render.ByName(v); err != nil {
				return fmt.Errorf("want one of %s", strings.Join(render.Names(), ", "))
			}
			c.Renderer = v
			return nil
		},
		// Read by test builds only (go build -tags faultinject, see
		// fault_inject.go); known here so that no build warns about it.
		"earlyinit.test_panic": func(*Settings, string) error { return nil },
	}
})

// setOption sets earlyinit's option k from v. Its error names the key, and
// the value unless it is an unknown key's or may hold a password.
func (c *Settings) setOption(k, v string) error {
	set, ok := options()[k]
	if !ok {
		return fmt.Errorf("cmdline: unknown option %q ignored (known: %s)", k, strings.Join(slices.Sorted(maps.Keys(options())), ", "))
	}
	if err := set(c, v); err != nil {
		if k == "earlyinit.metadata_url" {
			// It may hold a user and password.
			return fmt.Errorf("cmdline: %s: %w (default kept)", k, err)
		}
		return fmt.Errorf("cmdline: %s=%q: %w (default kept)", k, v, err)
	}
	return nil
}

// boolOption is the setter of a boolean option: a bare key is true.
func boolOption(field func(*Settings) *bool) func(*Settings, string) error {
	return func(c *Settings, v string) error {
		b, err := parseBool(v)
		if err != nil {
			return err
		}
		*field(c) = b
		return nil
	}
}

// parseBool reads a boolean option's value, in any case: "" (a bare key),
// 1, yes, true and on are true; 0, no, false and off are false.
func parseBool(v string) (bool, error) {
	if v == "" {
		return true, nil
	}
	if b, ok := scalar.Word(v); ok {
		return b, nil
	}
	return false, errors.New("want 0/1, yes/no, true/false or on/off")
}

// parseSeconds accepts "10" (seconds) or a Go duration ("1500ms", "2m").
func parseSeconds(v string) (time.Duration, error) {
	if n, err := strconv.ParseFloat(v, 64); err == nil {
		// Written so that NaN, which compares false, is refused too.
		if !(n > 0 && n <= maxTimeout.Seconds()) {
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
