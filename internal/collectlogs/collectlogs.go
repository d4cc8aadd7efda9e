// Package collectlogs is cloud-init collect-logs for earlyinit's files:
// its logs, status, boot record, instance data (redacted unless asked),
// the network files it writes and the versions, in one gzip'ed tarball
// written 0600 through a temporary file renamed over the target. Files
// are read through internal/rootfs, never following a link a user could
// have planted; each file and each command's output and time is bounded.
package collectlogs

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/netcfg/render"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/proc"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// Options are collect-logs' flags: the root whose files to collect, the
// tarball (an absolute path), whether to include user-data and the
// unredacted instance data, how much to say on stderr, and earlyinit's
// version for the tarball's version file.
type Options struct {
	Root, Tarfile string
	UserData      bool
	Verbose       int
	Version       string
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
	mode  fs.FileMode
	mtime time.Time
}

func (c *collector) debug(level int, format string, a ...any) {
	if level <= c.verbose {
		fmt.Fprintf(os.Stderr, format+"\n", a...)
	}
}

func (c *collector) add(name string, data []byte, mode fs.FileMode, mtime time.Time) {
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

// Collect writes the tarball o asks for.
func Collect(o Options) error {
	r, err := rootfs.Open(o.Root)
	if err != nil {
		return err
	}
	now := time.Now()
	c := &collector{root: r, dir: now.UTC().Format("earlyinit-logs-2006-01-02"), verbose: o.Verbose}
	c.add("version", []byte(o.Version+"\n"), 0o644, now)
	c.debug(1, "collected earlyinit version: %s", o.Version)
	if o.Root == "/" {
		for _, cmd := range collectCommands {
			c.command(cmd.name, cmd.argv)
		}
	}
	c.file(late.LogFile, path.Base(late.LogFile))
	c.file(late.OutputLogFile, path.Base(late.OutputLogFile))
	if o.UserData {
		c.file(paths.InstanceLink+"/user-data.txt", "user-data.txt")
	}
	// The run directory, but the late stages' copy of the binary and,
	// unless asked, the unredacted instance data.
	c.dirFiles(paths.RunDir, "*", "run/earlyinit", true, func(name string) bool {
		return name == paths.LateBinary || !o.UserData && name == paths.RunDir+"/"+instance.InstanceDataSensitiveFile
	})
	if r.Exists(paths.RunDisabledFile) {
		c.dirFiles(paths.DataDir, "*", strings.TrimPrefix(paths.DataDir, "/"), true, nil)
	}
	for _, n := range collectNetwork {
		c.dirFiles(n.dir, n.match, "network"+n.dir, false, nil)
	}
	if rep, err := late.Status(o.Root); err == nil {
		var b strings.Builder
		fmt.Fprintf(&b, "status: %s\nboot_status_code: %s\nlast_update: %s\ndetail:\n%s\n", rep.ExtendedStatus, rep.BootStatusCode, rep.LastUpdate, rep.Detail)
		for _, e := range rep.Errors {
			fmt.Fprintf(&b, "error: %s\n", e)
		}
		c.add("status.txt", []byte(b.String()), 0o644, now)
	} else {
		c.debug(1, "status: %v", err)
	}
	return writeNew(o.Tarfile, func(f *os.File) error { return c.writeTar(f, now) })
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
