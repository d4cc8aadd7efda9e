//go:build !initrd

package main

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jinja"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

func init() {
	verbs["render"] = &verbRender
}

// verbRender is the render verb.
var verbRender = verb{help: "render a `## template: jinja` user-data file with the instance data, as cloud-init devel render does and the late stages do",
	operands: "USER-DATA", files: true,
	flags: func() *pflag.FlagSet { return new(renderOpts).flags() }, run: renderVerb}

// renderOpts are cloud-init devel render's flags, and --root.
type renderOpts struct {
	instanceData, root string
	debug              bool
}

func (o *renderOpts) flags() *pflag.FlagSet {
	fs := newFlags("render")
	fs.StringVarP(&o.instanceData, "instance-data", "i", "", "the instance data `FILE` to render with (default: ROOT"+paths.RunDir+"/"+instance.InstanceDataSensitiveFile+" for root when it is there, else "+instance.InstanceDataFile+")")
	fs.BoolVarP(&o.debug, "debug", "d", false, "print the template's variables, as converted from the instance data, on stderr")
	rootFlag(fs, &o.root, "/", "the root whose instance data and image configuration (merged_cfg) to read")
	fileFlag(fs, "instance-data")
	return fs
}

// renderVerb is cloud-init devel render's render_template: the rendered
// payload on stdout, exit 0; its messages (cloud-init's, "LEVEL: ...") on
// stderr and exit 1 when the template cannot be rendered.
func renderVerb(args []string) int {
	var o renderOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() != 1 {
		return usageError("render", "want one USER-DATA file, got %q", fs.Args())
	}
	udPath := fs.Arg(0)
	logf := func(level, format string, a ...any) {
		fmt.Fprintf(os.Stderr, "%s: %s\n", level, fmt.Sprintf(format, a...))
	}
	dataPath := o.instanceData
	if dataPath == "" {
		run := strings.TrimSuffix(o.root, "/") + paths.RunDir + "/"
		redacted := run + instance.InstanceDataFile
		dataPath = redacted
		if os.Getuid() == 0 {
			dataPath = run + instance.InstanceDataSensitiveFile
			if _, err := os.Stat(dataPath); err != nil {
				logf("WARNING", "Missing root-readable %s. Using redacted %s instead.", dataPath, redacted)
				dataPath = redacted
			}
		}
	}
	if _, err := os.Stat(dataPath); err != nil {
		logf("ERROR", "Missing instance-data.json file: %s", dataPath)
		return 1
	}
	payload, err := readFileCapped(udPath, userdata.MaxSize)
	if err != nil {
		logf("ERROR", "Missing user-data file: %s", udPath)
		return 1
	}
	// cloud-init's order: the header, then the instance data.
	if _, _, err := userdata.RenderJinjaPayload(payload, nil); errors.Is(err, userdata.ErrNotJinja) {
		logf("ERROR", "Cannot render from instance data due to exception: %v", err)
		return 1
	}
	data, err := readFileCapped(dataPath, maxInstanceDataRead)
	var vars *jinja.Dict
	if err == nil {
		vars, err = userdata.JinjaVars(data, imageConfig(o.root))
	}
	if err != nil {
		msg := "Loading Jinja instance data failed"
		if errors.Is(err, iofs.ErrPermission) {
			msg = fmt.Sprintf("Cannot render jinja template vars. No read permission on '%s'. Try sudo", dataPath)
		}
		logf("ERROR", "Cannot render from instance data due to exception: %s: %v", msg, err)
		return 1
	}
	if o.debug {
		if s, err := jinja.DumpJSON(vars, 1, ","); err == nil {
			logf("DEBUG", "Converted jinja variables\n%s", s)
		}
	}
	out, missing, err := userdata.RenderJinjaPayload(payload, vars)
	if err != nil {
		logf("WARNING", "Ignoring jinja template for %s: %v", udPath, err)
	} else if len(missing) > 0 {
		w := userdata.MissingWarning("file '"+udPath+"'", missing)
		logf("WARNING", "%s", strings.ToUpper(w[:1])+w[1:])
	}
	if err != nil || len(out) == 0 {
		logf("ERROR", "Unable to render user-data file: %s", udPath)
		return 1
	}
	os.Stdout.Write(out)
	return 0
}

// maxInstanceDataRead bounds the instance data render and cloud-id read, as
// the late stages bound it.
const maxInstanceDataRead = 64 << 20

// readFileCapped reads the file at p, refusing one over limit bytes.
func readFileCapped(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("%s: more than %d bytes", p, limit)
	}
	return b, err
}

// imageConfig is root's image configuration, for merged_cfg; nil when it
// cannot be read.
func imageConfig(root string) map[string]any {
	c, err := imagecfg.LoadRoot(root)
	if err != nil {
		return nil
	}
	return c.Raw
}
