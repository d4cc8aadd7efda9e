//go:build !initrd

package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"testing/fstest"

	"github.com/spf13/pflag"

	"github.com/earlyinit/earlyinit/internal/datasource/configdrive"
	"github.com/earlyinit/earlyinit/internal/datasource/nocloud"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/netcfg"
	"github.com/earlyinit/earlyinit/internal/seed"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

func init() {
	verbs["mkseed"] = &verbMkseed
}

// verbMkseed is the mkseed verb.
var verbMkseed = verb{help: "build a NoCloud (cidata) or --config-2 seed image, ISO 9660 or vfat (or a tar, or any qemu-img format), with cloud-localds's flags and meaning; USER-DATA - is stdin, OUTPUT - is stdout",
	operands: "OUTPUT USER-DATA [META-DATA]", files: true,
	flags: func() *pflag.FlagSet { return new(mkseedOpts).flags() }, run: mkseedVerb}

// mkseedDefaultIID is the instance id of a seed made without META-DATA, as
// cloud-localds's (and cloud-init's documentation examples).
const mkseedDefaultIID = "iid-local01"

// mkseedConfig2FATSize is the size of a vfat config-2 drive: 64 MB, as
// Nova's and some private clouds' are.
const mkseedConfig2FATSize = 64 << 20

// mkseedOpts are mkseed's flags and arguments.
type mkseedOpts struct {
	diskFormat, filesystem, network, vendor, hostname, interfaces, dsmode, iid string
	config2                                                                    bool
	verbose                                                                    int
	output, user, meta                                                         string
}

// flags are cloud-localds's, with its letters and meaning, and earlyinit's
// own two, long only: --instance-id and --config-2.
func (o *mkseedOpts) flags() *pflag.FlagSet {
	fs := newFlags("mkseed")
	fs.StringVarP(&o.diskFormat, "disk-format", "d", "raw", "the image's disk `FORMAT`: raw, tar, tar-seed-local, tar-seed-net (a tar of the files, or of var/lib/cloud/seed/nocloud or nocloud-net holding them), or any format qemu-img converts to (qcow2, vmdk...)")
	oneOf(fs, "disk-format", "raw", "qcow2", "vmdk", "vdi", "vhdx", "tar", "tar-seed-local", "tar-seed-net")
	fs.StringVarP(&o.filesystem, "filesystem", "f", "", "the filesystem `FS`: iso9660 (or iso), vfat; a tar disk format is its own (default iso9660)")
	oneOf(fs, "filesystem", "iso9660", "iso", "vfat")
	fs.StringVarP(&o.hostname, "hostname", "H", "", "local-hostname `NAME` in the generated meta-data (not with META-DATA)")
	fs.StringVarP(&o.interfaces, "interfaces", "i", "", "an interfaces(5) `FILE` for the generated meta-data (not with META-DATA): its key interfaces as cloud-localds writes it, and network-interfaces, which NoCloud reads")
	fs.StringVarP(&o.network, "network-config", "N", "", "the network config `FILE` (NoCloud network-config; with --config-2, network_data.json)")
	fs.StringVarP(&o.dsmode, "dsmode", "m", "", "dsmode `MODE` in the generated meta-data (not with META-DATA): local or net (cloud-init's default), pass or disabled")
	oneOf(fs, "dsmode", "local", "net", "pass", "disabled")
	fs.StringVarP(&o.vendor, "vendor-data", "V", "", "the vendor-data `FILE` (with --config-2, vendor_data.json, or a payload to put in its \"cloud-init\" key)")
	fs.CountVarP(&o.verbose, "verbose", "v", "say what was written, on stderr")
	fs.StringVar(&o.iid, "instance-id", "", "instance-id `ID` in the generated meta-data (not with META-DATA; default "+mkseedDefaultIID+")")
	fs.BoolVar(&o.config2, "config-2", false, "OpenStack config drive layout (openstack/latest/...), labelled config-2; a vfat one is 64 MB")
	fileFlag(fs, "interfaces", "network-config", "vendor-data")
	return fs
}

// mkseedVerb is `earlyinit mkseed`: cloud-localds's arguments (flags may
// come after the operands too, as getopt allows), the inputs checked first
// (earlyinit schema's checks, then the seed read back by the datasource's
// own reader), the image written to a temporary file renamed to OUTPUT.
func mkseedVerb(args []string) int {
	var o mkseedOpts
	fs := o.flags()
	if ok, code := parseFlags(fs, args); !ok {
		return code
	}
	pos := fs.Args()
	if len(pos) < 2 || len(pos) > 3 {
		return usageError("mkseed", "want OUTPUT USER-DATA [META-DATA], got %q", pos)
	}
	o.output, o.user = pos[0], pos[1]
	if len(pos) == 3 {
		o.meta = pos[2]
	}
	if err := o.check(); err != nil {
		return usageError("mkseed", "%v", err)
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
	if o.verbose > 0 {
		fmt.Fprintf(os.Stderr, "wrote %s with filesystem=%s and diskformat=%s\n", o.output, o.filesystem, o.diskFormat)
	}
	return 0
}

// check settles the filesystem and disk format as cloud-localds does (a
// tar disk format is the filesystem; iso is iso9660) and refuses the
// combinations it refuses, and earlyinit's own: the meta-data flags with
// META-DATA, the NoCloud ones with --config-2.
func (o *mkseedOpts) check() error {
	if strings.HasPrefix(o.diskFormat, "tar") {
		switch o.diskFormat {
		case "tar", "tar-seed-local", "tar-seed-net":
		default:
			return fmt.Errorf("-d %q: the tar formats are tar, tar-seed-local, tar-seed-net", o.diskFormat)
		}
		if o.filesystem != "" && o.filesystem != "tar" {
			return fmt.Errorf("-d %s is incompatible with -f %s", o.diskFormat, o.filesystem)
		}
		o.filesystem = o.diskFormat
	}
	switch o.filesystem {
	case "", "iso", "iso9660":
		o.filesystem = "iso9660"
	case "vfat", "tar", "tar-seed-local", "tar-seed-net":
	default:
		return fmt.Errorf("-f %q: want iso9660 (or iso) or vfat", o.filesystem)
	}
	if o.diskFormat == "" || strings.ContainsAny(o.diskFormat, "/ ") || strings.HasPrefix(o.diskFormat, "-") {
		return fmt.Errorf("-d %q: not a disk format", o.diskFormat)
	}
	switch o.dsmode {
	case "", "local", "net", "pass", "disabled":
	default:
		return fmt.Errorf("-m %q: want local, net, pass or disabled (cloud-init's dsmodes)", o.dsmode)
	}
	if o.meta != "" && (o.hostname != "" || o.iid != "" || o.interfaces != "" || o.dsmode != "") {
		return fmt.Errorf("-H, -i, -m and --instance-id make the meta-data: they cannot go with META-DATA %s (put the keys in it)", o.meta)
	}
	if o.config2 {
		if o.interfaces != "" || o.dsmode != "" {
			return errors.New("-i and -m are NoCloud's: a --config-2 drive has network_data.json (-N) and no dsmode")
		}
		if strings.HasPrefix(o.filesystem, "tar") {
			return errors.New("the tar formats are NoCloud's: not with --config-2")
		}
	}
	return nil
}

// mkseedFiles reads and checks the inputs and lays them out as the seed's
// files. Every problem found is returned, each naming its file, key and
// reason; warnings are printed.
func mkseedFiles(o mkseedOpts) ([]seed.File, []error) {
	in, errs := mkseedReadInputs(o)
	if len(errs) > 0 {
		return nil, errs
	}
	userName := o.user
	if userName == "-" {
		userName = "user-data (stdin)"
	}
	s := &mkseedLayout{errs: append(errs, mkseedCheckUserData(userName, in.user)...)}
	if !o.config2 {
		s.nocloud(o, in)
	} else {
		s.config2(o, in)
	}
	return s.files, s.errs
}

// mkseedInputs are the input files' contents, nil for those not given.
type mkseedInputs struct {
	user, meta, net, vendor, ifaces []byte
}

// mkseedReadInputs reads the input files o names; an error for each one
// that cannot be read.
func mkseedReadInputs(o mkseedOpts) (mkseedInputs, []error) {
	var errs []error
	read := func(name string) []byte {
		if name == "" {
			return nil
		}
		b, err := mkseedRead(name)
		if err != nil {
			errs = append(errs, err)
		}
		return b
	}
	var in mkseedInputs
	in.user, in.meta, in.net, in.vendor, in.ifaces = read(o.user), read(o.meta), read(o.network), read(o.vendor), read(o.interfaces)
	return in, errs
}

// mkseedLayout is the seed's files as they are laid out, and the problems
// found on the way.
type mkseedLayout struct {
	files []seed.File
	errs  []error
}

func (s *mkseedLayout) add(name string, data []byte) {
	s.files = append(s.files, seed.File{Name: name, Data: data, Mode: 0o644})
}

func (s *mkseedLayout) fail(err error) { s.errs = append(s.errs, err) }

// nocloud lays out a NoCloud seed: user-data, meta-data (made from the
// flags when not given), vendor-data, network-config; read back by
// earlyinit's NoCloud reader when all is well.
func (s *mkseedLayout) nocloud(o mkseedOpts, in mkseedInputs) {
	meta := in.meta
	if o.interfaces != "" {
		if _, err := netcfg.Parse(string(instance.NetworkENI), in.ifaces, nil); err != nil {
			s.fail(fmt.Errorf("%s: %w", o.interfaces, err))
		}
	}
	if meta == nil {
		var err error
		if meta, err = mkseedMetaData(o, in.ifaces); err != nil {
			s.fail(err)
		}
	}
	s.add("user-data", in.user)
	s.add("meta-data", meta)
	if o.vendor != "" {
		s.errs = append(s.errs, mkseedCheckUserData(o.vendor, in.vendor)...)
		s.add("vendor-data", in.vendor)
	}
	if o.network != "" {
		if err := mkseedCheckNetwork(o.network, instance.NetworkYAML, in.net); err != nil {
			s.fail(err)
		}
		s.add("network-config", in.net)
	}
	if len(s.errs) == 0 {
		// The seed as earlyinit's NoCloud reader takes it.
		if _, err := nocloud.Read(mkseedFS(s.files)); err != nil {
			s.fail(mkseedReaderError(o, err))
		}
	}
}

// config2 lays out an OpenStack config drive: openstack/latest's
// meta_data.json (made from the flags when not given), user_data,
// vendor_data.json, network_data.json; read back by earlyinit's
// config drive reader when all is well.
func (s *mkseedLayout) config2(o mkseedOpts, in mkseedInputs) {
	const dir = "openstack/latest/"
	meta := in.meta
	if meta == nil {
		var err error
		if meta, err = mkseedMetaDataJSON(o); err != nil {
			s.fail(err)
		}
	}
	s.add(dir+"meta_data.json", meta)
	s.add(dir+"user_data", in.user)
	if o.vendor != "" {
		s.add(dir+"vendor_data.json", s.vendorDataJSON(o.vendor, in.vendor))
	}
	if o.network != "" {
		if !json.Valid(in.net) {
			s.fail(fmt.Errorf("%s: not JSON: a config-2 drive's network config is OpenStack's network_data.json", o.network))
		} else if err := mkseedCheckNetwork(o.network, instance.NetworkDataJSON, in.net); err != nil {
			s.fail(err)
		}
		s.add(dir+"network_data.json", in.net)
	}
	if len(s.errs) == 0 {
		if _, err := configdrive.Read(mkseedFS(s.files)); err != nil {
			s.fail(mkseedReaderError(o, err))
		}
	}
}

// vendorDataJSON is the vendor_data.json of vendor, read from file name,
// once its payload is checked.
func (s *mkseedLayout) vendorDataJSON(name string, vendor []byte) []byte {
	if json.Valid(vendor) {
		// vendor_data.json as is: its payload is checked as
		// user-data is.
		payload, err := configdrive.ConvertVendorData(name, vendor)
		if err != nil {
			s.fail(err)
		} else {
			s.errs = append(s.errs, mkseedCheckUserData(name+" (its cloud-init payload)", payload)...)
		}
		return vendor
	}
	// A payload (cloud-config, script): wrapped as Nova's
	// static vendor data is.
	s.errs = append(s.errs, mkseedCheckUserData(name, vendor)...)
	b, err := json.Marshal(map[string]string{"cloud-init": string(vendor)})
	if err != nil {
		s.fail(fmt.Errorf("%s: %w", name, err))
	}
	return append(b, '\n')
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
	from := "made from the flags"
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

// mkseedMetaData is the NoCloud meta-data made from the flags as
// cloud-localds makes it: JSON (which YAML reads), one key a line in its
// order, instance-id, local-hostname, interfaces (the file less its last
// newline), dsmode, empty ones left out; and network-interfaces after
// interfaces, the key NoCloud reads. The values are checked, and escaped
// as JSON strings (cloud-localds pastes them in as they are).
func mkseedMetaData(o mkseedOpts, ifaces []byte) ([]byte, error) {
	iid, host, err := mkseedIdentity(o)
	if err != nil {
		return nil, err
	}
	eni := strings.TrimSuffix(string(ifaces), "\n")
	var lines []string
	for _, kv := range [][2]string{{"instance-id", iid}, {"local-hostname", host}, {"interfaces", eni}, {"network-interfaces", eni}, {"dsmode", o.dsmode}} {
		if kv[1] == "" {
			continue
		}
		var b strings.Builder
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if err := e.Encode(kv[1]); err != nil {
			return nil, err
		}
		lines = append(lines, fmt.Sprintf("%q: %s", kv[0], strings.TrimSuffix(b.String(), "\n")))
	}
	return []byte("{\n" + strings.Join(lines, ",\n") + "\n}\n"), nil
}

// mkseedMetaDataJSON is config-2's meta_data.json made from --instance-id
// and -H.
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

// mkseedIdentity checks --instance-id and -H.
func mkseedIdentity(o mkseedOpts) (iid, host string, err error) {
	iid = o.iid
	if iid == "" {
		iid = mkseedDefaultIID
	}
	if strings.TrimSpace(iid) == "" || len(iid) > 255 || strings.ContainsFunc(iid, func(r rune) bool { return r < 0x20 || r == 0x7f || r == '/' }) {
		return "", "", fmt.Errorf("--instance-id %s: an instance id is 1 to 255 characters, no control characters or \"/\" (it names a directory under /var/lib/cloud/instances)", strconv.Quote(iid))
	}
	if o.hostname != "" {
		if _, _, err := instance.Hostnames(o.hostname); err != nil {
			return "", "", fmt.Errorf("-H: %w", err)
		}
	}
	return iid, o.hostname, nil
}
