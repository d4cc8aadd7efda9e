package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/provision"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

func init() {
	// schemaMain reads --image itself and hands --config-file to
	// schemaVerb. It reports against the modules' table, which the
	// package's initramfs build does not link (provision.LateRunner).
	if provision.LateRunner {
		verbs["schema"] = &verbSchema
	}
}

// verbSchema is the schema verb.
var verbSchema = verb{help: "validate cloud-config, as cloud-init schema: a file (--config-file), this instance's user-data (--system), the image's configuration (--image); exit 1 when invalid",
	flags: func() *pflag.FlagSet { return new(schemaOpts).flags() }, run: schemaMain}

// schemaOpts are cloud-init schema's flags (but --docs), --image and --root.
type schemaOpts struct {
	file, root              string
	system, annotate, image bool
}

func (o *schemaOpts) flags() *pflag.FlagSet {
	fs := newFlags("schema")
	fs.StringVarP(&o.file, "config-file", "c", "", "the cloud-config `FILE` to validate")
	fileFlag(fs, "config-file")
	fs.BoolVar(&o.system, "system", false, "validate this instance's user-data (ROOT"+paths.InstanceLink+"/user-data.txt, root only)")
	fs.BoolVar(&o.annotate, "annotate", false, "print the cloud-config with each problem's label at the end of its line, and the problems after it, as cloud-init")
	fs.BoolVar(&o.image, "image", false, "validate the image's configuration: /etc/cloud/cloud.cfg and cloud.cfg.d, /etc/earlyinit/earlyinit.cfg and earlyinit.cfg.d")
	rootFlag(fs, &o.root, "/", "with --image and --system, the root to read them from")
	return fs
}

// schemaMain is `earlyinit schema`: --config-file FILE checks a
// cloud-config file and --system the instance's user-data (schemaVerb),
// --image the image's configuration (schemaImage); --image with one of
// the others does both, with the worse exit code.
func schemaMain(args []string) int {
	var o schemaOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	switch {
	case fs.NArg() > 0:
		return usageError("schema", "takes no operands, got %q", fs.Args())
	case o.file != "" && o.system:
		return usageError("schema", "--config-file and --system are exclusive")
	case o.file == "" && !o.system && !o.image:
		return usageError("schema", "give --config-file FILE, --system or --image")
	case o.annotate && o.file == "" && !o.system:
		return usageError("schema", "--annotate goes with --config-file or --system")
	}
	code := 0
	if o.image {
		code = schemaImage(o.root)
	}
	if o.file != "" || o.system {
		if c := schemaVerb(o); c > code {
			code = c
		}
	}
	return code
}

// schemaImage checks the image's configuration under root as the late
// stage reads it: a file that cannot be read or parsed, or a value of the
// wrong type, is an error (exit 1); a key or a module list entry earlyinit
// does not act on is a warning ("...: not supported by earlyinit").
func schemaImage(root string) int {
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		fmt.Fprintf(os.Stderr, "schema: --root %s: not a directory\n", root)
		return 2
	}
	c, err := imagecfg.LoadRoot(root)
	if err != nil {
		fmt.Fprintf(os.Stderr, "schema: %v\n", err)
		return 1
	}
	for _, w := range c.Warnings {
		fmt.Printf("error: %s\n", w)
	}
	for _, w := range late.ImageReport(c) {
		fmt.Printf("warning: %s\n", w)
	}
	if len(c.Warnings) > 0 {
		return 1
	}
	if len(c.Files) == 0 {
		fmt.Printf("No image configuration under %s\n", root)
		return 0
	}
	fmt.Printf("Valid image configuration: %d file(s), default user %s\n", len(c.Files), c.DefaultUser().Name)
	return 0
}

// schemaVerb checks o.file, or with o.system the instance's user-data:
// a #cloud-config file whole, or the cloud-config parts of a MIME
// multipart or archive (other payloads are not cloud-config). Problems
// are printed as file:line:col, or with o.annotate on the file's lines
// (a whole #cloud-config file only). Exit 1 on an error.
func schemaVerb(o schemaOpts) int {
	file, name := o.file, o.file
	if o.system {
		file, name = filepath.Join(o.root, paths.InstanceLink, "user-data.txt"), "system userdata"
	}
	data, err := readConfigFile(file)
	if err != nil {
		if o.system && os.Getuid() != 0 && errors.Is(err, fs.ErrPermission) {
			err = fmt.Errorf("%w: the instance's user-data is root's alone; try sudo", err)
		}
		fmt.Fprintf(os.Stderr, "schema: %v\n", err)
		return 1
	}
	var problems []userdata.SchemaError
	whole := isCloudConfig(data)
	if whole || !o.system {
		problems = userdata.Validate(file, data)
	} else {
		parts, warns, err := userdata.Decode(data)
		if err != nil {
			fmt.Fprintf(os.Stderr, "schema: %s: %v\n", file, err)
			return 1
		}
		for _, w := range warns {
			fmt.Printf("warning: %s: %s\n", file, w)
		}
		for _, p := range parts {
			if p.Type == userdata.TypeCloudConfig {
				p.Filename = file + ": " + p.Filename
				problems = append(problems, userdata.ValidatePart(p)...)
			}
		}
	}
	bad := 0
	for _, e := range problems {
		if !e.Warning {
			bad++
		}
	}
	if o.annotate && whole {
		if len(problems) > 0 {
			fmt.Println(annotateConfig(data, problems))
		}
	} else {
		for _, e := range problems {
			if e.Warning {
				fmt.Printf("warning: %s\n", e)
				continue
			}
			fmt.Printf("error: %s\n", e)
		}
	}
	if bad > 0 {
		return 1
	}
	fmt.Printf("Valid cloud-config: %s\n", name)
	return 0
}

// isCloudConfig tells a #cloud-config document: its first line, past
// blank ones, is the header.
func isCloudConfig(data []byte) bool {
	first, _, _ := strings.Cut(strings.TrimLeft(string(data), " \t\r\n"), "\n")
	return strings.TrimSpace(first) == "#cloud-config"
}

// annotateConfig is cloud-init schema --annotate's output (its
// _Annotator): each line with problems gets "\t\t# E1,W1" (cloud-init's
// labels are E for errors and D for deprecations; earlyinit's warnings
// are W), and the problems follow the file, errors then warnings, each as
// "# E1: path: message". Whole-document problems go on line 1.
func annotateConfig(data []byte, problems []userdata.SchemaError) string {
	lines := strings.Split(string(data), "\n")
	labels := make(map[int][]string)
	var errs, warns []string
	for _, kind := range []struct {
		warning bool
		prefix  string
		list    *[]string
	}{{false, "E", &errs}, {true, "W", &warns}} {
		byLine := make(map[int][]userdata.SchemaError)
		for _, p := range problems {
			if p.Warning == kind.warning {
				byLine[min(max(p.Line, 1), len(lines))] = append(byLine[min(max(p.Line, 1), len(lines))], p)
			}
		}
		// Labels are numbered in line order, as cloud-init walks the lines.
		for n := 1; n <= len(lines); n++ {
			for _, p := range byLine[n] {
				label := fmt.Sprintf("%s%d", kind.prefix, len(*kind.list)+1)
				labels[n] = append(labels[n], label)
				msg := p.Msg
				if p.Path != "" {
					msg = p.Path + ": " + msg
				}
				*kind.list = append(*kind.list, "# "+label+": "+msg)
			}
		}
	}
	out := make([]string, 0, len(lines)+2)
	for i, l := range lines {
		if ls := labels[i+1]; len(ls) > 0 {
			l += "\t\t# " + strings.Join(ls, ",")
		}
		out = append(out, l)
	}
	for _, f := range []struct {
		title string
		list  []string
	}{{"Errors", errs}, {"Warnings", warns}} {
		if len(f.list) > 0 {
			out = append(out, "# "+f.title+": -------------\n"+strings.Join(f.list, "\n")+"\n\n")
		}
	}
	return strings.Join(out, "\n")
}
