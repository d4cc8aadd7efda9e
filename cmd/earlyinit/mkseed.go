//go:build !initrd

package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing/fstest"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/pkg/datasource/configdrive"
	"github.com/earlyinit/earlyinit/pkg/datasource/nocloud"
	"github.com/earlyinit/earlyinit/pkg/instance"
	"github.com/earlyinit/earlyinit/pkg/netcfg"
	"github.com/earlyinit/earlyinit/pkg/seed"
	"github.com/earlyinit/earlyinit/pkg/userdata"
)

func init() {
	verbs["mkseed"] = verb{"build a NoCloud (cidata) or --config-2 seed image, ISO 9660 or vfat, as cloud-localds: [-f iso|vfat] [-N network-config] [-V vendor-data] [-H hostname] [-i instance-id] [--config-2] OUTPUT USER-DATA [META-DATA]", mkseedVerb}
}

// mkseedDefaultIID is the instance id of a seed made without META-DATA, as
// in cloud-init's documentation examples.
const mkseedDefaultIID = "iid-local01"

// mkseedConfig2FATSize is the size of a vfat config-2 drive: 64 MB, as
// Nova's and some private clouds' are.
const mkseedConfig2FATSize = 64 << 20

// mkseedOpts are mkseed's flags and arguments.
type mkseedOpts struct {
	format, network, vendor, hostname, iid string
	config2                                bool
	output, user, meta                     string
}

// mkseedVerb is `earlyinit mkseed`: cloud-localds's arguments (flags may
// come after the operands too, as getopt allows), the inputs checked first
// (earlyinit schema's checks, then the seed read back by the datasource's
// own reader), the image written to a temporary file renamed to OUTPUT.
func mkseedVerb(args []string) int {
	var o mkseedOpts
	fs := flag.NewFlagSet("mkseed", flag.ContinueOnError)
	for _, n := range []string{"f", "filesystem"} {
		fs.StringVar(&o.format, n, "iso", "filesystem: iso (iso9660) or vfat")
	}
	for _, n := range []string{"N", "network-config"} {
		fs.StringVar(&o.network, n, "", "network config file (NoCloud network-config; with --config-2, network_data.json)")
	}
	for _, n := range []string{"V", "vendor-data"} {
		fs.StringVar(&o.vendor, n, "", "vendor-data file (with --config-2, vendor_data.json, or a payload to put in its \"cloud-init\" key)")
	}
	for _, n := range []string{"H", "hostname"} {
		fs.StringVar(&o.hostname, n, "", "host name for the generated meta-data (not with META-DATA)")
	}
	for _, n := range []string{"i", "instance-id"} {
		fs.StringVar(&o.iid, n, "", "instance id for the generated meta-data (not with META-DATA; default "+mkseedDefaultIID+")")
	}
	fs.BoolVar(&o.config2, "config-2", false, "OpenStack config drive layout (openstack/latest/...), labelled config-2; a vfat one is 64 MB")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: earlyinit mkseed [flags] OUTPUT USER-DATA [META-DATA]  (\"-\" reads USER-DATA from stdin)")
		fs.PrintDefaults()
	}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		pos, args = append(pos, args[0]), args[1:]
	}
	if len(pos) < 2 || len(pos) > 3 {
		fmt.Fprintln(os.Stderr, "mkseed: want OUTPUT USER-DATA [META-DATA]")
		fs.Usage()
		return 2
	}
	o.output, o.user = pos[0], pos[1]
	if len(pos) == 3 {
		o.meta = pos[2]
	}
	switch o.format {
	case "iso", "iso9660":
		o.format = "iso"
	case "vfat":
	default:
		fmt.Fprintf(os.Stderr, "mkseed: -f %q: want iso or vfat\n", o.format)
		return 2
	}
	if o.meta != "" && (o.hostname != "" || o.iid != "") {
		fmt.Fprintf(os.Stderr, "mkseed: -H and -i make the meta-data: they cannot go with META-DATA %s (put the keys in it)\n", o.meta)
		return 2
	}
	files, errs := mkseedFiles(o)
	if len(errs) > 0 {
		for _, e := range errs {
			fmt.Fprintf(os.Stderr, "mkseed: error: %v\n", e)
		}
		fmt.Fprintf(os.Stderr, "mkseed: %s not written\n", o.output)
		return 1
	}
	if err := mkseedWrite(o, files); err != nil {
		fmt.Fprintf(os.Stderr, "mkseed: %v\n", err)
		return 1
	}
	return 0
}

// mkseedFiles reads and checks the inputs and lays them out as the seed's
// files. Every problem found is returned, each naming its file, key and
// reason; warnings are printed.
func mkseedFiles(o mkseedOpts) ([]seed.File, []error) {
	var errs []error
	fail := func(err error) { errs = append(errs, err) }
	read := func(name string) []byte {
		if name == "" {
			return nil
		}
		b, err := mkseedRead(name)
		if err != nil {
			fail(err)
		}
		return b
	}
	user, meta, net, vendor := read(o.user), read(o.meta), read(o.network), read(o.vendor)
	if len(errs) > 0 {
		return nil, errs
	}
	userName := o.user
	if userName == "-" {
		userName = "user-data (stdin)"
	}
	errs = append(errs, mkseedCheckUserData(userName, user)...)

	var files []seed.File
	add := func(name string, data []byte) {
		files = append(files, seed.File{Name: name, Data: data, Mode: 0o644})
	}
	if !o.config2 {
		if meta == nil {
			var err error
			if meta, err = mkseedMetaData(o); err != nil {
				fail(err)
			}
		}
		add("user-data", user)
		add("meta-data", meta)
		if o.vendor != "" {
			errs = append(errs, mkseedCheckUserData(o.vendor, vendor)...)
			add("vendor-data", vendor)
		}
		if o.network != "" {
			if err := mkseedCheckNetwork(o.network, instance.NetworkYAML, net); err != nil {
				fail(err)
			}
			add("network-config", net)
		}
		if len(errs) == 0 {
			// The seed as earlyinit's NoCloud reader takes it.
			if _, err := nocloud.Read(mkseedFS(files)); err != nil {
				fail(mkseedReaderError(o, err))
			}
		}
		return files, errs
	}

	const dir = "openstack/latest/"
	if meta == nil {
		var err error
		if meta, err = mkseedMetaDataJSON(o); err != nil {
			fail(err)
		}
	}
	add(dir+"meta_data.json", meta)
	add(dir+"user_data", user)
	if o.vendor != "" {
		if json.Valid(vendor) {
			// vendor_data.json as is: its payload is checked as
			// user-data is.
			payload, err := configdrive.ConvertVendorData(o.vendor, vendor)
			if err != nil {
				fail(err)
			} else {
				errs = append(errs, mkseedCheckUserData(o.vendor+" (its cloud-init payload)", payload)...)
			}
		} else {
			// A payload (cloud-config, script): wrapped as Nova's
			// static vendor data is.
			errs = append(errs, mkseedCheckUserData(o.vendor, vendor)...)
			b, err := json.Marshal(map[string]string{"cloud-init": string(vendor)})
			if err != nil {
				fail(fmt.Errorf("%s: %w", o.vendor, err))
			}
			vendor = append(b, '\n')
		}
		add(dir+"vendor_data.json", vendor)
	}
	if o.network != "" {
		if !json.Valid(net) {
			fail(fmt.Errorf("%s: not JSON: a config-2 drive's network config is OpenStack's network_data.json", o.network))
		} else if err := mkseedCheckNetwork(o.network, instance.NetworkDataJSON, net); err != nil {
			fail(err)
		}
		add(dir+"network_data.json", net)
	}
	if len(errs) == 0 {
		if _, err := configdrive.Read(mkseedFS(files)); err != nil {
			fail(mkseedReaderError(o, err))
		}
	}
	return files, errs
}

// mkseedCheckNetwork parses a network config as the boot does, every
// entry checked; the NICs' names are the guest's, unknown here, so an
// interface matched by MAC alone is fine.
func mkseedCheckNetwork(name string, format instance.NetworkFormat, data []byte) error {
	if _, err := netcfg.Parse(string(format), data, nil); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// mkseedReaderError says where the meta-data came from in an error of the
// datasource's reader, which names the file in the seed: the other inputs
// are checked before, so the meta-data is what is left for it to refuse.
func mkseedReaderError(o mkseedOpts, err error) error {
	from := "made from -i and -H"
	if o.meta != "" {
		from = "from " + o.meta
	}
	return fmt.Errorf("the seed read back as earlyinit reads it (meta-data %s): %w", from, err)
}

func mkseedFS(files []seed.File) fs.FS {
	m := fstest.MapFS{}
	for _, f := range files {
		m[f.Name] = &fstest.MapFile{Data: f.Data, Mode: f.Mode}
	}
	return m
}

// mkseedRead reads an input file ("-": stdin) within user-data's size
// limit.
func mkseedRead(name string) ([]byte, error) {
	if name != "-" {
		return readConfigFile(name)
	}
	b, err := io.ReadAll(io.LimitReader(os.Stdin, userdata.MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read stdin: %w", err)
	}
	if len(b) > userdata.MaxSize {
		return nil, fmt.Errorf("stdin: more than %d bytes, the user-data limit", userdata.MaxSize)
	}
	return b, nil
}

// mkseedCheckUserData checks user-data or vendor-data as `earlyinit
// schema` does: a #cloud-config file whole, and the cloud-config parts of
// a MIME multipart or #cloud-config-archive. Other payloads (scripts,
// boothooks, #include) are not cloud-config and are taken as they are.
// Warnings are printed; errors are returned.
func mkseedCheckUserData(name string, data []byte) []error {
	var errs []error
	report := func(ses []userdata.SchemaError) {
		for _, e := range ses {
			if e.Warning {
				fmt.Fprintf(os.Stderr, "mkseed: warning: %s\n", e)
				continue
			}
			errs = append(errs, e)
		}
	}
	first, _, _ := strings.Cut(strings.TrimLeft(string(data), " \t\r\n"), "\n")
	if strings.TrimSpace(first) == "#cloud-config" {
		report(userdata.Validate(name, data))
		return errs
	}
	parts, warns, err := userdata.Decode(data)
	if err != nil {
		return []error{fmt.Errorf("%s: %w", name, err)}
	}
	for _, w := range warns {
		fmt.Fprintf(os.Stderr, "mkseed: warning: %s: %s\n", name, w)
	}
	for _, p := range parts {
		if p.Type == userdata.TypeCloudConfig {
			p.Filename = name + ": " + p.Filename
			report(userdata.ValidatePart(p))
		}
	}
	return errs
}

// mkseedMetaData is the NoCloud meta-data made from -i and -H, as
// cloud-localds makes it; the values are checked, then quoted by the YAML
// encoder.
func mkseedMetaData(o mkseedOpts) ([]byte, error) {
	iid, host, err := mkseedIdentity(o)
	if err != nil {
		return nil, err
	}
	doc := yaml.Node{Kind: yaml.MappingNode}
	add := func(k, v string) {
		doc.Content = append(doc.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k},
			&yaml.Node{Kind: yaml.ScalarNode, Value: v, Style: yaml.DoubleQuotedStyle})
	}
	add("instance-id", iid)
	if host != "" {
		add("local-hostname", host)
	}
	return yaml.Marshal(&doc)
}

// mkseedMetaDataJSON is config-2's meta_data.json made from -i and -H.
func mkseedMetaDataJSON(o mkseedOpts) ([]byte, error) {
	iid, host, err := mkseedIdentity(o)
	if err != nil {
		return nil, err
	}
	md := map[string]string{"uuid": iid}
	if host != "" {
		md["hostname"], md["name"] = host, host
	}
	b, err := json.MarshalIndent(md, "", "  ")
	return append(b, '\n'), err
}

// mkseedIdentity checks -i and -H.
func mkseedIdentity(o mkseedOpts) (iid, host string, err error) {
	iid = o.iid
	if iid == "" {
		iid = mkseedDefaultIID
	}
	if strings.TrimSpace(iid) == "" || len(iid) > 255 || strings.ContainsFunc(iid, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '/' }) {
		return "", "", fmt.Errorf("-i %s: an instance id is 1 to 255 characters, no control characters or \"/\" (it names a directory under /var/lib/cloud/instances)", strconv.Quote(iid))
	}
	if o.hostname != "" {
		if _, _, err := instance.Hostnames(o.hostname); err != nil {
			return "", "", fmt.Errorf("-H: %w", err)
		}
	}
	return iid, o.hostname, nil
}

// mkseedWrite writes the image to a temporary file next to OUTPUT and
// renames it over OUTPUT, so that OUTPUT is never half written. OUTPUT, if
// it exists, must be a regular file: writing to a disk is dd's job.
func mkseedWrite(o mkseedOpts, files []seed.File) error {
	if fi, err := os.Lstat(o.output); err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: exists and is not a regular file (%v): write the image to a file, then copy it", o.output, fi.Mode().Type())
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	label, fatLabel := "cidata", "CIDATA"
	if o.config2 {
		label, fatLabel = "config-2", "CONFIG-2"
	}
	when := time.Now()
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		// Reproducible images, as mkisofs and mkfs.fat do.
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("SOURCE_DATE_EPOCH %q: not a number of seconds", s)
		}
		when = time.Unix(sec, 0)
	}
	tmp, err := os.CreateTemp(filepath.Dir(o.output), "."+filepath.Base(o.output)+".*")
	if err != nil {
		return fmt.Errorf("%s: %w", o.output, err)
	}
	done := false
	defer func() {
		if !done {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if o.format == "iso" {
		err = seed.ISO(tmp, label, when, files)
	} else {
		size := int64(mkseedConfig2FATSize)
		if !o.config2 {
			if size, err = seed.FATSize(files); err != nil {
				return fmt.Errorf("%s: %w", o.output, err)
			}
		}
		if err = tmp.Truncate(size); err == nil {
			err = seed.FAT(tmp, size, fatLabel, when, files)
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", o.output, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("%s: %w", o.output, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("%s: %w", o.output, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("%s: %w", o.output, err)
	}
	if err := os.Rename(tmp.Name(), o.output); err != nil {
		os.Remove(tmp.Name())
		done = true
		return fmt.Errorf("%s: %w", o.output, err)
	}
	done = true
	return nil
}
