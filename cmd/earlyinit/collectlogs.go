//go:build !initrd

package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/proc"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

func init() {
	verbs["collect-logs"] = &verbCollectLogs
}

// verbCollectLogs is the collect-logs verb.
var verbCollectLogs = verb{help: "write earlyinit's logs, status, boot record, instance data (redacted), network files and versions to one tarball (0600), as cloud-init collect-logs",
	flags: func() *pflag.FlagSet { return new(collectLogsOpts).flags() }, run: collectLogsVerb}

// collectLogsOpts are cloud-init collect-logs's flags, and --root.
type collectLogsOpts struct {
	tarfile, root string
	userdata      bool
	verbose       int
}

func (o *collectLogsOpts) flags() *pflag.FlagSet {
	fs := newFlags("collect-logs")
	fs.StringVarP(&o.tarfile, "tarfile", "t", "earlyinit.tar.gz", "the gzip'ed tar `FILE` to write")
	fs.BoolVarP(&o.userdata, "include-userdata", "u", false, "also collect the user-data ("+paths.InstanceLink+"/user-data.txt) and the unredacted instance data, which may hold secrets (root only)")
	fs.CountVarP(&o.verbose, "verbose", "v", "say what is collected (twice: also what is not there)")
	rootFlag(fs, &o.root, "/", "the root whose files to collect (another than /: no dmesg, journal or package version, which are the running system's)")
	fileFlag(fs, "tarfile")
	return fs
}

// Bounds of what collect-logs takes: each file, and each command's
// output and time.
const (
	maxCollectFile    = 64 << 20
	collectCmdTimeout = 30 * time.Second
)

// collectCommands are the running system's: name in the tarball, command.
var collectCommands = [...]struct {
	name string
	argv []string
}{
	{"dpkg-version", []string{"dpkg-query", "--show", "-f=${Version}\n", "earlyinit"}},
	{"rpm-version", []string{"rpm", "-q", "earlyinit"}},
	{"dmesg.txt", []string{"dmesg"}},
	{"journal.txt", []string{"journalctl", "--boot=0", "-o", "short-precise"}},
}

// collectNetwork are the network files earlyinit writes (internal/netcfg/render,
// internal/nic): whole directories' files whose names match, and single files.
var collectNetwork = [...]struct{ dir, match string }{
	{render.NetworkdDir, "*init*"},
	{"/etc/netplan", "*init*"},
	{"/etc/network/interfaces.d", "*"},
	{render.SysconfigDir, "ifcfg-*"},
	{render.SysconfigDir, "route*"},
	{render.NMDir, "*init*"},
	{"/etc/NetworkManager/conf.d", "*cloud-init*"},
	{"/etc/udev/rules.d", "70-persistent-net.rules"},
	{"/etc/network", "interfaces"},
	{"/etc/sysconfig", "network"},
	{"/etc", "resolv.conf"},
	{"/etc/cloud/cloud.cfg.d", "*earlyinit*"},
}

// collector gathers the tarball's files.
type collector struct {
	root    *rootfs.Root
	dir     string // the top directory in the tarball
	files   []tarFile
	verbose int
}

type tarFile struct {
	name  string
	data  []byte
	mode  iofs.FileMode
	mtime time.Time
}

func (c *collector) debug(level int, format string, a ...any) {
	if level <= c.verbose {
		fmt.Fprintf(os.Stderr, format+"\n", a...)
	}
}

func (c *collector) add(name string, data []byte, mode iofs.FileMode, mtime time.Time) {
	c.files = append(c.files, tarFile{name: path.Join(c.dir, name), data: data, mode: mode, mtime: mtime})
}

// file collects name of the root, read without following a link a user
// could have planted (internal/rootfs), as to in the tarball.
func (c *collector) file(name, to string) {
	fi, err := c.root.Stat(name)
	if err != nil || !fi.Mode().IsRegular() {
		c.debug(2, "file %s did not exist", name)
		return
	}
	if fi.Size() > maxCollectFile {
		c.debug(1, "file %s: %d bytes, more than %d: not collected", name, fi.Size(), maxCollectFile)
		c.add(to+".not-collected", []byte(fmt.Sprintf("%d bytes, more than %d\n", fi.Size(), maxCollectFile)), 0o600, time.Now())
		return
	}
	b, err := c.root.ReadFile(name)
	if err != nil {
		c.debug(1, "file %s: %v", name, err)
		return
	}
	c.add(to, b, fi.Mode().Perm(), fi.ModTime())
	c.debug(1, "collected file: %s", name)
}

// dirFiles collects the regular files under dir (recursively when deep),
// but those skip names, as under to; links and special files are left.
func (c *collector) dirFiles(dir, match, to string, deep bool, skip func(string) bool) {
	entries, err := os.ReadDir(c.root.Path(dir))
	if err != nil {
		c.debug(2, "directory %s did not exist", dir)
		return
	}
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		if ok, _ := path.Match(match, e.Name()); !ok || skip != nil && skip(name) {
			continue
		}
		switch {
		case e.Type().IsRegular():
			c.file(name, path.Join(to, e.Name()))
		case e.IsDir() && deep:
			c.dirFiles(name, match, path.Join(to, e.Name()), deep, skip)
		}
	}
}

// command collects a command's output, or its error.
func (c *collector) command(name string, argv []string) {
	ctx, cancel := context.WithTimeout(context.Background(), collectCmdTimeout)
	defer cancel()
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = &limitedBuffer{b: &out, left: maxCollectFile}, &limitedBuffer{b: &out, left: 1 << 16}
	if err := proc.Run(cmd); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			c.debug(2, "%s: %s is not installed", name, argv[0])
			return
		}
		out.WriteString(fmt.Sprintf("\n%s: %v\n", strings.Join(argv, " "), err))
		c.debug(1, "collecting %s failed", name)
	} else {
		c.debug(1, "collected %s", name)
	}
	c.add(name, out.Bytes(), 0o600, time.Now())
}

// limitedBuffer keeps the first left bytes written to it.
type limitedBuffer struct {
	b    *bytes.Buffer
	left int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) > l.left {
		p = p[:l.left]
	}
	l.b.Write(p)
	l.left -= len(p)
	return n, nil
}

// collectLogsVerb is cloud-init collect-logs's collect_logs, for
// earlyinit's files: the tarball is written 0600, as the caller, through
// a temporary file renamed over FILE (never through a link there).
func collectLogsVerb(args []string) int {
	var o collectLogsOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError("collect-logs", "takes no operands, got %q", fs.Args())
	}
	if o.userdata && os.Getuid() != 0 {
		fmt.Fprintln(os.Stderr, "To include userdata, root user is required. Try sudo earlyinit collect-logs")
		return 1
	}
	tarfile, err := filepath.Abs(o.tarfile)
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(filepath.Dir(tarfile)); err == nil && !fi.IsDir() {
			err = fmt.Errorf("%s: not a directory", filepath.Dir(tarfile))
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "collect-logs: --tarfile %s: %v\n", o.tarfile, err)
		return 1
	}
	r, err := rootfs.Open(o.root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "collect-logs: %v\n", err)
		return 1
	}
	now := time.Now()
	c := &collector{root: r, dir: now.UTC().Format("earlyinit-logs-2006-01-02"), verbose: o.verbose}
	c.add("version", []byte(boot.Version+"\n"), 0o644, now)
	c.debug(1, "collected earlyinit version: %s", boot.Version)
	if o.root == "/" {
		for _, cmd := range collectCommands {
			c.command(cmd.name, cmd.argv)
		}
	}
	c.file(late.LogFile, path.Base(late.LogFile))
	c.file(late.OutputLogFile, path.Base(late.OutputLogFile))
	if o.userdata {
		c.file(paths.InstanceLink+"/user-data.txt", "user-data.txt")
	}
	// The run directory, but the late stages' copy of the binary and,
	// unless asked, the unredacted instance data.
	c.dirFiles(paths.RunDir, "*", "run/earlyinit", true, func(name string) bool {
		return name == paths.LateBinary || !o.userdata && name == paths.RunDir+"/"+instance.InstanceDataSensitiveFile
	})
	if r.Exists(paths.RunDisabledFile) {
		c.dirFiles(paths.DataDir, "*", strings.TrimPrefix(paths.DataDir, "/"), true, nil)
	}
	for _, n := range collectNetwork {
		c.dirFiles(n.dir, n.match, "network"+n.dir, false, nil)
	}
	if rep, err := late.Status(o.root); err == nil {
		var b strings.Builder
		fmt.Fprintf(&b, "status: %s\nboot_status_code: %s\nlast_update: %s\ndetail:\n%s\n", rep.ExtendedStatus, rep.BootStatusCode, rep.LastUpdate, rep.Detail)
		for _, e := range rep.Errors {
			fmt.Fprintf(&b, "error: %s\n", e)
		}
		c.add("status.txt", []byte(b.String()), 0o644, now)
	} else {
		c.debug(1, "status: %v", err)
	}
	if err := writeNew(tarfile, func(f *os.File) error { return c.writeTar(f, now) }); err != nil {
		fmt.Fprintf(os.Stderr, "collect-logs: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "Wrote %s\n", tarfile)
	return 0
}

// writeNew writes a new file (0600, the caller's) at name: a temporary
// file made in its directory (O_EXCL: never an existing file or a link),
// filled, synced and renamed over name, which replaces whatever name was,
// a link included, without writing through it.
func writeNew(name string, fill func(*os.File) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = f.Chmod(0o600)
	if err == nil {
		err = fill(f)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// writeTar writes the files, under their directories, as a gzip'ed tar.
func (c *collector) writeTar(f *os.File, now time.Time) error {
	zw := gzip.NewWriter(f)
	tw := tar.NewWriter(zw)
	sort.SliceStable(c.files, func(i, j int) bool { return c.files[i].name < c.files[j].name })
	dirs := map[string]bool{}
	var mkdirs func(d string) error
	mkdirs = func(d string) error {
		if d == "." || d == "/" || dirs[d] {
			return nil
		}
		if err := mkdirs(path.Dir(d)); err != nil {
			return err
		}
		dirs[d] = true
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: now})
	}
	for _, tf := range c.files {
		if err := mkdirs(path.Dir(tf.name)); err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: tf.name, Mode: int64(tf.mode), Size: int64(len(tf.data)), ModTime: tf.mtime}); err != nil {
			return err
		}
		if _, err := tw.Write(tf.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}
