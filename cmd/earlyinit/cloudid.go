//go:build !initrd

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jinja"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/paths"
)

func init() {
	verbs["cloud-id"] = &verbCloudID
}

// verbCloudID is the cloud-id verb.
var verbCloudID = verb{help: "print the platform's canonical name from the instance data, as cloud-id; exit 2 when disabled, 3 when not run",
	flags: func() *pflag.FlagSet { return new(cloudIDOpts).flags() }, run: cloudIDVerb}

// cloudIDOpts are cloud-id's flags, and --root.
type cloudIDOpts struct {
	instanceData, root string
	json, long         bool
}

func (o *cloudIDOpts) flags() *pflag.FlagSet {
	fs := newFlags("cloud-id")
	fs.BoolVarP(&o.json, "json", "j", false, "print the instance data's v1 keys and cloud_id, as JSON (deprecated, as cloud-id's: earlyinit query v1)")
	fs.BoolVarP(&o.long, "long", "l", false, "print the cloud id and the region, separated by a tab")
	fs.StringVarP(&o.instanceData, "instance-data", "i", "", "the instance data `FILE` (default: ROOT"+paths.RunDir+"/"+instance.InstanceDataFile+")")
	rootFlag(fs, &o.root, "/", "the root whose state to read")
	fileFlag(fs, "instance-data")
	return fs
}

// metadataUnknown is cloud-init's METADATA_UNKNOWN.
const metadataUnknown = "unknown"

// canonicalCloudID is cloud-init's sources.canonical_cloud_id: the cloud
// name, except AWS's China and GovCloud regions and Azure's China ones,
// and the platform when the cloud is unknown. cloudName and region are
// "" when absent or null.
func canonicalCloudID(cloudName, region, platform string) string {
	if cloudName == "" {
		cloudName = metadataUnknown
	}
	if region == "" {
		region = metadataUnknown
	}
	if region != metadataUnknown {
		for _, m := range [...]struct{ prefix, id, cloud string }{
			{"cn-", "aws-china", "aws"},
			{"us-gov-", "aws-gov", "aws"},
			{"china", "azure-china", "azure"},
		} {
			if strings.HasPrefix(region, m.prefix) && cloudName == m.cloud {
				return m.id
			}
		}
	}
	if cloudName != metadataUnknown {
		return cloudName
	}
	return platform
}

// cloudIDVerb is cloud-id's handle_args: "disabled" (exit 2) or "not run"
// (exit 3) from the status, else the cloud id from the instance data.
func cloudIDVerb(args []string) int {
	var o cloudIDOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError("cloud-id", "takes no operands, got %q", fs.Args())
	}
	if rep, err := late.Status(o.root); err == nil {
		switch rep.Status {
		case late.StatusDisabled:
			fmt.Println(rep.Status)
			return 2
		case late.StatusNotRun:
			fmt.Println(rep.Status)
			return 3
		}
	}
	file := o.instanceData
	if file == "" {
		file = strings.TrimSuffix(o.root, "/") + paths.RunDir + "/" + instance.InstanceDataFile
	}
	b, err := readFileCapped(file, maxInstanceDataRead)
	if err != nil {
		fmt.Fprintf(os.Stderr, "File not found '%s'. Provide a path to instance data json file using --instance-data\n", file)
		return 1
	}
	doc, err := jinja.DecodeJSON(b, 512)
	if err != nil {
		fmt.Fprintf(os.Stderr, "File '%s' is not valid json. %v\n", file, err)
		return 1
	}
	v1 := jinja.NewDict()
	if top, ok := doc.(*jinja.Dict); ok {
		if d, ok := top.Get("v1"); ok {
			if d, ok := d.(*jinja.Dict); ok {
				v1 = d
			}
		}
	}
	// cloud-init's v1.get(key, METADATA_UNKNOWN), then "if not x" for
	// the cloud name and the region.
	get := func(k string) (string, bool) {
		v, ok := v1.Get(k)
		if !ok {
			return metadataUnknown, true
		}
		return pyStr(v)
	}
	cloud, _ := get("cloud_name")
	region, _ := get("region")
	platform, _ := get("platform")
	if v, _ := v1.Get("cloud_name"); v == nil || v == "" {
		cloud = ""
	}
	if v, _ := v1.Get("region"); v == nil || v == "" {
		region = ""
	}
	id := canonicalCloudID(cloud, region, platform)
	switch {
	case o.json:
		fmt.Fprintln(os.Stderr, "DEPRECATED: Use: earlyinit query v1")
		v1.Set("cloud_id", id)
		s, err := jinja.DumpJSON(v1, 1, ",")
		if err != nil {
			fmt.Fprintf(os.Stderr, "cloud-id: %v\n", err)
			return 1
		}
		fmt.Println(s)
	case o.long:
		r, _ := get("region")
		fmt.Printf("%s\t%s\n", id, r)
	default:
		fmt.Println(id)
	}
	return 0
}

// pyStr is Python's str() of a JSON scalar; ok is false for objects and
// lists, which cloud-id does not expect there.
func pyStr(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case nil:
		return "None", true
	case bool:
		if x {
			return "True", true
		}
		return "False", true
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), true
	}
	return fmt.Sprint(v), false
}
