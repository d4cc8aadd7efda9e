package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/paths"
)

func init() {
	verbs["query"] = &verbQuery
}

// verbQuery is the query verb.
var verbQuery = verb{help: "print instance data keys, as cloud-init query", operands: "[KEY]",
	flags: func() *pflag.FlagSet { return new(queryOpts).flags() }, run: query}

// queryOpts are cloud-init query's flags, and --root.
type queryOpts struct {
	root, instanceData, userData, vendorData, format string
	all, listKeys, debug                             bool
}

func (o *queryOpts) flags() *pflag.FlagSet {
	fs := newFlags("query")
	rootFlag(fs, &o.root, "/", "the root whose state to read")
	fs.BoolVarP(&o.all, "all", "a", false, "print all instance data")
	fs.BoolVarP(&o.listKeys, "list-keys", "l", false, "list the keys under KEY (or the top)")
	fs.StringVarP(&o.format, "format", "f", "", "print `TEMPLATE` with each {{ KEY }} replaced by that key's value, as cloud-init's Jinja template does (only {{ KEY }} and {{ v1.KEY }}, no other Jinja)")
	fs.StringVarP(&o.instanceData, "instance-data", "i", "", "the instance data `FILE` to read (default: ROOT"+paths.RunDir+"/"+instance.InstanceDataSensitiveFile+" for root when it is there, else "+instance.InstanceDataFile+")")
	fs.StringVarP(&o.userData, "user-data", "u", "", "the user-data `FILE` (default: ROOT"+paths.InstanceLink+"/user-data.txt)")
	fs.StringVarP(&o.vendorData, "vendor-data", "v", "", "the vendor-data `FILE` (default: ROOT"+paths.InstanceLink+"/vendor-data.txt)")
	fs.BoolVarP(&o.debug, "debug", "d", false, "accepted for cloud-init's sake; no effect")
	fileFlag(fs, "instance-data", "user-data", "vendor-data")
	return fs
}

// query prints instance-data keys like `cloud-init query`: root reads the
// sensitive file, others the redacted one. --root reads a mounted image.
func query(args []string) int {
	var o queryOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	key := strings.Join(fs.Args(), " ")
	if fs.NArg() > 1 {
		return usageError("query", "one KEY at most, got %q", fs.Args())
	}
	if key == "" && !o.all && !o.listKeys && o.format == "" {
		return usageError("query", "give a KEY, --all, --list-keys or --format")
	}
	var tmpl []queryPart
	if o.format != "" {
		if key != "" || o.listKeys {
			return usageError("query", "--format prints its template: it takes no KEY or --list-keys")
		}
		var err error
		if tmpl, err = parseQueryFormat(o.format); err != nil {
			fmt.Fprintf(os.Stderr, "query: --format: %v\n", err)
			return 2
		}
	}
	uid := os.Getuid()
	p := instance.DefaultQueryPaths(o.root, uid)
	for _, f := range []struct{ flag, path *string }{{&o.instanceData, &p.InstanceData}, {&o.userData, &p.UserData}, {&o.vendorData, &p.VendorData}} {
		if *f.flag != "" {
			*f.path = *f.flag
		}
	}
	data, err := instance.ReadQueryData(p, uid == 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "query: %v\n", err)
		return 1
	}
	if tmpl != nil {
		out, missing, err := renderQueryFormat(data, tmpl)
		if err != nil {
			fmt.Fprintf(os.Stderr, "query: --format: %v\n", err)
			return 1
		}
		if len(missing) > 0 {
			// cloud-init's warning; the marker stays in the output.
			fmt.Fprintf(os.Stderr, "query: warning: could not render template variables: '%s'\n", strings.Join(missing, "', '"))
		}
		fmt.Println(out)
		return 0
	}
	if o.listKeys {
		keys, err := instance.ListKeys(data, key)
		if err != nil {
			fmt.Fprintf(os.Stderr, "query: %v\n", err)
			return 1
		}
		fmt.Println(strings.Join(keys, "\n"))
		return 0
	}
	out, err := instance.Query(data, key)
	if err != nil {
		fmt.Fprintf(os.Stderr, "query: %v\n", err)
		return 1
	}
	fmt.Println(out)
	return 0
}
