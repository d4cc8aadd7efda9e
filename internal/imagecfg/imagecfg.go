// Package imagecfg reads the image's own configuration: cloud-init's
// /etc/cloud/cloud.cfg and /etc/cloud/cloud.cfg.d/*.cfg, merged as
// cloud-init 22.4 merges them, then earlyinit's /etc/earlyinit/earlyinit.cfg
// and /etc/earlyinit/earlyinit.cfg.d/*.cfg over them, and the root's
// os-release for the defaults a distribution's cloud.cfg would give.
//
// The merge is cloud-init's util.read_conf_with_confd, for each of the two
// files:
//
//   - the .d directory's *.cfg files (regular files only) are merged with
//     mergemanydict in reverse lexical order: of two files setting the same
//     key, the later in lexical order (99-x.cfg over 10-y.cfg) wins; maps
//     merge recursively, key by key; a list or any other value is taken
//     whole from the winning file (lists are not appended); a file's own
//     merge_how changes that as in user-data;
//   - the .d result is merged over the main file the same way: the .d
//     directory wins;
//   - a conf_d key in the main file names another directory instead.
//
// earlyinit.cfg's result is merged over cloud.cfg's the same way again:
// earlyinit's files win. A file that is missing or empty adds nothing; a
// file that does not parse, or whose top level is not a mapping, is one
// warning naming it (and the line), and is skipped, as cloud-init's
// load_yaml skips it. Jinja templates ("## template: jinja") are not
// rendered: such a file is read as plain YAML, with a warning.
//
// Everything is read through an fs.FS over the root (LoadRoot:
// datasource.DriveFS, which follows no link, without earlyinit's own
// drop-in for cloud-init), each file capped at MaxFileSize and at most
// maxFiles files. The package is otherwise pure:
// the typed accessors (DatasourceList, DefaultUser, ModuleLists, ...) read
// Raw and give cloud-init's defaults.
package imagecfg

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"regexp"
	"strings"
	"sync"

	"github.com/earlyinit/earlyinit/internal/scalar"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// Limits of what Load reads.
const (
	// MaxFileSize bounds one configuration file: 1 MiB, far above any
	// real cloud.cfg (a few KiB).
	MaxFileSize = 1 << 20
	// maxFiles bounds the configuration files read in all: the main files
	// and every *.cfg in their .d directories.
	maxFiles = 256
)

// The main configuration files, as absolute paths in the root.
const (
	// CloudConfig is cloud-init's main file; its .d directory is
	// CloudConfig + ".d".
	CloudConfig = "/etc/cloud/cloud.cfg"
	// earlyinitConfig is earlyinit's own; it and its .d directory win
	// over cloud-init's.
	earlyinitConfig = "/etc/earlyinit/earlyinit.cfg"
)

// Config is the image's merged configuration.
type Config struct {
	// Raw is the merged configuration, as cloud-config (YAML 1.1 values:
	// map[string]any, []any, string, int, float64, bool, nil). Never nil
	// after Load. merge_how and merge_type are removed.
	Raw map[string]any
	// Files are the files read, as absolute paths in the root, from the
	// lowest precedence to the highest: cloud.cfg, cloud.cfg.d/* in
	// lexical order, earlyinit.cfg, earlyinit.cfg.d/*. Files skipped with
	// a warning are not listed.
	Files []string
	// Warnings are the problems found, each naming its file (or for a
	// value of the merged configuration "cloud.cfg: " and its key), never
	// a value.
	Warnings []string
	// OS is the root's os-release, for the defaults (DefaultUser, Distro).
	OS OSRelease

	// origins are, by top-level key, the last file (in precedence order)
	// that set it.
	origins map[string]string
}

// Origin is the file that gave a top-level key its value: the one of
// highest precedence that sets it ("/etc/cloud/cloud.cfg.d/99-x.cfg"), ""
// when none does. Under the default merge a list or a scalar is that
// file's own; a map may hold keys of other files too.
func (c *Config) Origin(key string) string {
	if c == nil {
		return ""
	}
	return c.origins[key]
}

// Load reads the image's configuration from fsys, the root's file system
// (names without a leading slash: "etc/cloud/cloud.cfg"). Missing files
// give an empty configuration and no error; every problem with a file is
// a warning in Config.Warnings, and the rest is still used. After Load,
// Warnings also hold those of every typed accessor (a value of the wrong
// type). The error is only for a nil fsys.
func Load(fsys fs.FS) (*Config, error) {
	if fsys == nil {
		return nil, errors.New("imagecfg: no file system to read the image's configuration from")
	}
	l := &loader{fsys: fsys}
	cloud := l.readConfWithConfd(CloudConfig)
	early := l.readConfWithConfd(earlyinitConfig)
	raw, ws := userdata.MergeConfigs(early, cloud)
	for _, w := range ws {
		l.warnf("merge: %s", w)
	}
	c := &Config{Raw: raw, Files: l.files, Warnings: l.warns, origins: l.origins}
	var osWarns []string
	c.OS, osWarns = readOSRelease(fsys)
	c.Warnings = append(c.Warnings, osWarns...)
	c.Warnings = append(c.Warnings, c.Check()...)
	return c, nil
}

type loader struct {
	fsys    fs.FS
	origins map[string]string
	files   []string
	warns   []string
	count   int
	full    bool
}

func (l *loader) warnf(format string, args ...any) {
	l.warns = append(l.warns, fmt.Sprintf(format, args...))
}

// rel is name (absolute in the root) as an fs.FS name.
func rel(name string) string {
	r := strings.TrimPrefix(path.Clean("/"+name), "/")
	if r == "" {
		return "."
	}
	return r
}

// reason is err without the path an *fs.PathError repeats.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// jinjaHeader is cloud-init's JINJA_PREFIX test of a template; compiled
// on first use.
var jinjaHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)^##\s*template:\s*jinja`) })

// readConf is cloud-init's read_conf: the file's mapping, nil when it is
// missing or empty, or skipped (with a warning) when it cannot be read or
// parsed or is not a mapping.
func (l *loader) readConf(name string) map[string]any {
	fi, err := fs.Stat(l.fsys, rel(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if l.count >= maxFiles {
		if !l.full {
			l.warnf("%s: more than %d configuration files: it and the rest are not read", name, maxFiles)
			l.full = true
		}
		return nil
	}
	l.count++
	if err != nil {
		l.warnf("%s: %v: skipped", name, reason(err))
		return nil
	}
	if !fi.Mode().IsRegular() {
		l.warnf("%s: not a regular file: skipped", name)
		return nil
	}
	if fi.Size() > MaxFileSize {
		l.warnf("%s: %d bytes, more than the limit of %d: skipped", name, fi.Size(), MaxFileSize)
		return nil
	}
	data, err := l.read(name)
	if err != nil {
		l.warnf("%s: %v: skipped", name, err)
		return nil
	}
	if jinjaHeader().Match(data) {
		l.warnf("%s: a jinja template: not rendered by earlyinit, read as plain YAML", name)
	}
	v, err := userdata.LoadYAML(data)
	if err != nil {
		l.warnf("%s: %s: skipped", name, strings.TrimPrefix(err.Error(), "yaml: "))
		return nil
	}
	l.files = append(l.files, name)
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		l.files = l.files[:len(l.files)-1]
		l.warnf("%s: the top level is %s, not a mapping: skipped", name, scalar.YAMLNoun(v))
		return nil
	}
	if l.origins == nil {
		l.origins = map[string]string{}
	}
	for k := range m {
		l.origins[k] = name
	}
	return m
}

// read reads name, at most MaxFileSize bytes.
func (l *loader) read(name string) ([]byte, error) {
	f, err := l.fsys.Open(rel(name))
	if err != nil {
		return nil, reason(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, reason(err)
	}
	if n > MaxFileSize {
		return nil, fmt.Errorf("grew past the limit of %d bytes while read", MaxFileSize)
	}
	return buf.Bytes(), nil
}

// readConfWithConfd is cloud-init's read_conf_with_confd: the main file,
// with its .d directory (or the directory its conf_d key names) merged
// over it.
func (l *loader) readConfWithConfd(main string) map[string]any {
	cfg := l.readConf(main)
	confd := main + ".d"
	if v, ok := cfg["conf_d"]; ok {
		switch t := v.(type) {
		case string:
			confd = strings.TrimSpace(t)
			if confd != "" && !strings.HasPrefix(confd, "/") {
				l.warnf("%s: conf_d: want an absolute directory: no .d directory read", main)
				confd = ""
			}
		default:
			// cloud-init reads no .d directory for a false value (null,
			// false, 0, an empty list) and fails on any other.
			if scalar.Truthy(v) {
				l.warnf("%s: conf_d: want a directory, got %s: no .d directory read", main, scalar.YAMLNoun(v))
			}
			confd = ""
		}
	}
	if confd == "" {
		return cfg
	}
	confdCfg := l.readConfD(path.Clean(confd))
	out, ws := userdata.MergeConfigs(confdCfg, cfg)
	for _, w := range ws {
		l.warnf("%s: merge: %s", main, w)
	}
	return out
}

// readConfD is cloud-init's read_conf_d: the directory's *.cfg regular
// files, the later in lexical order winning.
func (l *loader) readConfD(dir string) map[string]any {
	ents, err := fs.ReadDir(l.fsys, rel(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		// Not a directory (cloud-init's isdir) is not a problem.
		if fi, serr := fs.Stat(l.fsys, rel(dir)); serr == nil && !fi.IsDir() {
			return nil
		}
		l.warnf("%s: %v: not read", dir, reason(err))
		return nil
	}
	var cfgs []map[string]any
	for _, e := range ents { // fs.ReadDir sorts by name
		if !strings.HasSuffix(e.Name(), ".cfg") {
			continue
		}
		name := dir + "/" + e.Name()
		if e.IsDir() {
			continue
		}
		if fi, err := fs.Stat(l.fsys, rel(name)); err == nil && fi.IsDir() {
			continue // a link to a directory
		}
		if m := l.readConf(name); m != nil {
			cfgs = append(cfgs, m)
		}
	}
	// mergemanydict over the reverse-sorted list: the first wins.
	for i, j := 0, len(cfgs)-1; i < j; i, j = i+1, j-1 {
		cfgs[i], cfgs[j] = cfgs[j], cfgs[i]
	}
	out, ws := userdata.MergeConfigs(cfgs...)
	for _, w := range ws {
		l.warnf("%s: merge: %s", dir, w)
	}
	return out
}
