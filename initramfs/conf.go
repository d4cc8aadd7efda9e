package initramfs

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"regexp"
	"strings"
	"sync"
)

// ConfFile is where `earlyinit initramfs` reads its settings.
const ConfFile = "/etc/earlyinit/initramfs.conf"

// Conf is initramfs.conf: how `earlyinit initramfs` builds the image.
type Conf struct {
	// HostOnly (HOSTONLY=yes) keeps only the modules the running machine
	// has loaded, its root's filesystem and the config drives'.
	HostOnly bool
	// Compress (COMPRESS) is "auto" or one of Compressions.
	Compress string
	// ModulesAdd (MODULES_ADD) are module names or path globs under the
	// kernel's module tree added to the set, host-only or not.
	ModulesAdd []string
	// ModulesOmit (MODULES_OMIT) are module names or path globs taken
	// out of the set; a module a kept one depends on stays.
	ModulesOmit []string
	// RootFS (ROOTFS) is "auto": a generic image keeps, of the root
	// filesystem drivers (RootFilesystems), those the root's /etc/fstab
	// mounts "/" with (FstabRootFS), all of them when it names none; or
	// "all": all of them.
	RootFS string
}

// DefaultConf is the Conf of an empty or missing file.
func DefaultConf() Conf { return Conf{Compress: "auto", RootFS: "auto"} }

// confKeys are the keys ParseConf knows, in the order errors list them.
var confKeys = []string{"HOSTONLY", "COMPRESS", "MODULES_ADD", "MODULES_OMIT", "ROOTFS"}

// moduleWord is a module name or a path glob under kernel/: no spaces,
// quotes, shell or escape characters.
// Compiled on first use.
var moduleWord = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_.,+*?\[\]/-]+$`) })

// ParseConf reads initramfs.conf from r, named name in errors. The format
// is initramfs-tools' initramfs.conf: KEY=value lines, '#' comments, blank
// lines; a value may be quoted with " or ' (no escapes inside); a key set
// twice takes the last value, as the shell would. Unknown keys and invalid
// values are errors naming the file, line and key.
func ParseConf(r io.Reader, name string) (Conf, error) {
	c := DefaultConf()
	s := bufio.NewScanner(r)
	for n := 1; s.Scan(); n++ {
		line := strings.TrimSpace(s.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		key, raw, ok := strings.Cut(line, "=")
		key = strings.TrimSpace(key)
		if !ok {
			return c, fmt.Errorf("%s:%d: %q: want KEY=value", name, n, line)
		}
		val, err := confValue(raw)
		if err == nil {
			err = c.set(key, val)
		}
		if err != nil {
			return c, fmt.Errorf("%s:%d: %s: %w", name, n, key, err)
		}
	}
	if err := s.Err(); err != nil {
		return c, fmt.Errorf("%s: %w", name, err)
	}
	return c, nil
}

// confValue returns the value of raw (what follows '='): quoted, or bare
// up to a '#' comment.
func confValue(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw != "" && (raw[0] == '"' || raw[0] == '\'') {
		end := strings.IndexByte(raw[1:], raw[0])
		if end < 0 {
			return "", fmt.Errorf("unterminated %c quote", raw[0])
		}
		val, rest := raw[1:1+end], strings.TrimSpace(raw[2+end:])
		if rest != "" && rest[0] != '#' {
			return "", fmt.Errorf("%q after the closing quote", rest)
		}
		return strings.TrimSpace(val), nil
	}
	if i := strings.IndexByte(raw, '#'); i >= 0 {
		raw = raw[:i]
	}
	return strings.TrimSpace(raw), nil
}

func (c *Conf) set(key, val string) error {
	switch key {
	case "HOSTONLY":
		switch val {
		case "yes":
			c.HostOnly = true
		case "no":
			c.HostOnly = false
		default:
			return fmt.Errorf("%q: want yes or no", val)
		}
	case "COMPRESS":
		if val != "auto" {
			if _, ok := compressorFor(val); !ok {
				return fmt.Errorf("%q: want auto, %s", val, strings.Join(Compressions(), ", "))
			}
		}
		c.Compress = val
	case "ROOTFS":
		if val != "auto" && val != "all" {
			return fmt.Errorf("%q: want auto or all", val)
		}
		c.RootFS = val
	case "MODULES_ADD", "MODULES_OMIT":
		mods, err := moduleList(val)
		if err != nil {
			return err
		}
		if key == "MODULES_ADD" {
			c.ModulesAdd = mods
		} else {
			c.ModulesOmit = mods
		}
	default:
		return fmt.Errorf("unknown key (known: %s)", strings.Join(confKeys, ", "))
	}
	return nil
}

// moduleList splits a space-separated list of module names and path globs
// and checks each.
func moduleList(val string) ([]string, error) {
	var out []string
	for _, m := range strings.Fields(val) {
		if err := checkModuleWord(m); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// checkModuleWord accepts a module name (virtio_blk, nls_iso8859-1) or a
// glob relative to the kernel's module tree (drivers/md/*), nothing that
// could leave it.
func checkModuleWord(m string) error {
	if !moduleWord().MatchString(m) {
		return fmt.Errorf("%q: not a module name or path glob (letters, digits, _ - . , + and glob characters)", m)
	}
	if _, err := path.Match(m, ""); err != nil {
		return fmt.Errorf("%q: %w", m, err)
	}
	if strings.HasPrefix(m, "/") || strings.HasSuffix(m, "/") || strings.Contains(m, "//") {
		return fmt.Errorf("%q: a path glob is relative to the kernel's module tree (drivers/md/*)", m)
	}
	for _, c := range strings.Split(m, "/") {
		if c == "." || c == ".." {
			return fmt.Errorf("%q: no . or .. in a path glob", m)
		}
	}
	return nil
}
