package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/earlyinit/earlyinit/pkg/datasource"
	"github.com/earlyinit/earlyinit/pkg/imagecfg"
	"github.com/earlyinit/earlyinit/pkg/late"
	"github.com/earlyinit/earlyinit/pkg/provision"
	"github.com/earlyinit/earlyinit/pkg/userdata"
)

func init() {
	// schemaMain reads --image itself and hands --config-file to
	// schemaVerb. It reports against the modules' table, which the
	// package's initramfs build does not link (provision.LateRunner).
	if provision.LateRunner {
		verbs["schema"] = verb{"validate cloud-config: --config-file FILE; the image's configuration: --image [--root DIR]", schemaMain}
	}
}

// schemaMain is `earlyinit schema`: --config-file FILE checks a
// cloud-config file (schemaVerb), --image the image's configuration
// (schemaImage); with both, both, and the worse exit code.
func schemaMain(args []string) int {
	fs := flag.NewFlagSet("schema", flag.ContinueOnError)
	file := fs.String("config-file", "", "cloud-config file to validate")
	image := fs.Bool("image", false, "validate the image's configuration: /etc/cloud/cloud.cfg and cloud.cfg.d, /etc/earlyinit/earlyinit.cfg and earlyinit.cfg.d")
	root := fs.String("root", "/", "with --image, the root to read it from")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if !*image {
		return schemaVerb(args)
	}
	code := schemaImage(*root)
	if *file != "" {
		if c := schemaVerb([]string{"--config-file", *file}); c > code {
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
	c, err := imagecfg.Load(datasource.DriveFS(root, 0))
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

func schemaVerb(args []string) int {
	fs := flag.NewFlagSet("schema", flag.ContinueOnError)
	file := fs.String("config-file", "", "cloud-config file to validate")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *file == "" {
		fmt.Fprintln(os.Stderr, "schema: --config-file is required")
		return 2
	}
	data, err := readConfigFile(*file)
	if err != nil {
		fmt.Fprintf(os.Stderr, "schema: %v\n", err)
		return 1
	}
	bad := 0
	for _, e := range userdata.Validate(*file, data) {
		if e.Warning {
			fmt.Printf("warning: %s\n", e)
			continue
		}
		fmt.Printf("error: %s\n", e)
		bad++
	}
	if bad > 0 {
		return 1
	}
	fmt.Printf("Valid cloud-config: %s\n", *file)
	return 0
}
