//go:build !initrd

package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/boot"
	"github.com/earlyinit/earlyinit/internal/collectlogs"
	"github.com/earlyinit/earlyinit/internal/paths"
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
	if err := collectlogs.Collect(collectlogs.Options{Root: o.root, Tarfile: tarfile, UserData: o.userdata, Verbose: o.verbose, Version: boot.Version}); err != nil {
		fmt.Fprintf(os.Stderr, "collect-logs: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "Wrote %s\n", tarfile)
	return 0
}
