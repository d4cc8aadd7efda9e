package ovf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// The customization's states, errors and events as VMware Tools'
// deployPkg.update.state takes them (cloud-init's guestcust_state,
// guestcust_error and guestcust_event).
const (
	stateRunning = 4
	stateDone    = 5

	errSuccess        = 0
	errScriptDisabled = 6
	errWrongMeta      = 9

	eventCustomizeFailed    = 100
	eventNetworkSetupFailed = 101
	eventEnableNICs         = 103
	eventQueryNICs          = 104
)

// msgParsing is the status message of a customization that cannot be
// read or applied as written (cloud-init's).
const msgParsing = "Error parsing the customization Config File"

// StatusLog is the log the status reports name (cloud-init names
// /var/log/cloud-init.log): the customization runs in the initramfs, whose
// log this is.
const StatusLog = paths.InitramfsLogFile

// IMCDirs are where VMware Tools' deployPkg plugin leaves the customization
// package (cloud-init's /var/run/vmware-imc), as names in the root:
// /var/run is a link to /run in most roots, and links are not followed.
var IMCDirs = []string{"run/vmware-imc", "var/run/vmware-imc"}

// pluginDirs are where cloud-init looks for the deployPkg plugin
// (libdeployPkgPlugin.so, at any depth): without it the package cannot
// come, and the customization is not looked for.
var pluginDirs = []string{
	"usr/lib/vmware-tools", "usr/lib64/vmware-tools",
	"usr/lib/open-vm-tools", "usr/lib64/open-vm-tools",
	"usr/lib/x86_64-linux-gnu/open-vm-tools", "usr/lib/aarch64-linux-gnu/open-vm-tools",
}

const pluginName = "libdeployPkgPlugin.so"

// Names and places of the customization's scripts, as cloud-init's
// config_custom_script has them.
const (
	CustomScript      = "/root/.customization/customize.sh"
	PostScriptName    = "post-customize-guest.sh"
	PostPendingMarker = "/.guest-customization-post-reboot-pending"
	// postScriptDir is earlyinit's scripts/per-instance, which the final
	// stage's scripts_per_instance runs (cloud-init's is
	// /var/lib/cloud/scripts/per-instance).
	postScriptDir = paths.CacheDir + "/scripts/per-instance"
	// MarkerDir holds the customization's marker files
	// (.markerfile-<MARKER-ID>.txt), cloud-init's /var/lib/cloud/data.
	MarkerDir = paths.CloudDataDir
)

// Limits of the package's files.
const (
	maxCustCfg = 1 << 20
	maxNICsTxt = 1024 // cloud-init reads that much of nics.txt
	maxScript  = datasource.MaxFileSize
)

// ErrNoCustomization is returned (wrapped) when there is no customization
// to apply: disabled by the image, no deployPkg plugin, no cust.cfg, or
// a package the image's settings do not allow. The OVF environment is then
// looked for, as cloud-init does.
var ErrNoCustomization = errors.New("no VMware guest customization")

// Tools is VMware Tools as the customization uses them, in the root.
type Tools interface {
	// RPC sends one command over the RPCI channel (vmware-rpctool) and
	// returns its answer without the final line break.
	RPC(ctx context.Context, cmd string) (string, error)
	// ToolsConfig is `vmware-toolbox-cmd config get SECTION KEY`: ok is
	// false when the key is not set or the tool is not there.
	ToolsConfig(ctx context.Context, section, key string) (value string, ok bool, err error)
	// Run runs a program of the root, chrooted in it.
	Run(ctx context.Context, path string, args ...string) error
}

// Customization reads a VMware guest customization (IMC) package as
// cloud-init 22.4's DataSourceOVF does, applies what cloud-init applies
// while it reads it, and reports to vCenter.
//
// What it does, in cloud-init's order:
//
//   - nothing unless the image allows it: disable_vmware_customization
//     false (AllowVMwareCust) for a customization specification,
//     datasource.OVF.allow_raw_data (AllowRawData, default true) for one
//     that carries cloud-init meta-data; and the root has the deployPkg
//     plugin. cust.cfg is looked for once, not waited for: in the
//     initramfs nothing can bring it later.
//   - "raw data" (CLOUDINIT METADATA and USERDATA): the meta-data (YAML:
//     instance-id, local-hostname, public-keys, network) and user-data
//     files of the package.
//   - a specification: the host name (HOSTNAME.DOMAINNAME), instance id
//     imcInstanceID, the NICs by MAC and the DNS settings as network
//     configuration version 1 (see custConfig.NetworkConfig), the time
//     zone; and when the customization is new (MISC MARKER-ID set, its
//     marker file absent): the pre-customization script run now (see
//     below), the admin password and its expiry, the post-customization
//     script set up for the final stage, the marker file written.
//   - the package removed, the NICs VMware Tools holds disconnected
//     connected (nics.txt), and the result reported:
//     "deployPkg.update.state 5 0 LOG" on success, "4 EVENT LOG" on a
//     failure (100 customize failed, 101 network setup failed, 6 scripts
//     disabled, 9 bad meta-data); guestinfo.gc.status (Started,
//     Successful, or the failure) when MISC POST-GC-STATUS is yes.
//
// The custom script runs only when VMware Tools' configuration allows it:
// deployPkg enable-custom-scripts, whose default is false unless MISC
// DEFAULT-RUN-POST-CUST-SCRIPT is yes; otherwise the customization fails
// with error 6, as in cloud-init. Allowed, it is copied to CustomScript
// (line ends made LF, mode 0544) and run with "precustomization" now,
// chrooted in the root, before the network configuration is made; its
// post-customization half runs in the final stage, from
// post-customize-guest.sh of the package placed in postScriptDir (with
// PostPendingMarker), as cloud-init places it in its scripts/per-instance.
//
// The password (PASSWORD -PASS, base64) and RESET are not applied here,
// where the root's SELinux labels could not be kept: they become
// vendor-data cloud-config (chpasswd for root, expire as RESET says; a
// RESET without password expires every uid-0 user with runcmd), which the
// late stage applies with chpasswd on stdin; the time zone too (timezone).
type Customization struct {
	// FS is the root, read without following links.
	FS fs.FS
	// Root writes into the root (the scripts, the marker, the package's
	// removal).
	Root *rootfs.Root
	// Tools are the root's VMware Tools.
	Tools Tools
	// AllowVMwareCust is !disable_vmware_customization; AllowRawData
	// is datasource.OVF.allow_raw_data.
	AllowVMwareCust, AllowRawData bool
	// MACs returns the live NICs' names by lower-case MAC, to check that
	// every NIC of the specification is there (cloud-init fails the
	// network setup otherwise); nil skips the check.
	MACs func() (map[string]string, error)
	// Logf is told what is done, never a password.
	Logf func(string, ...any)
	// Sleep waits between NIC connection queries; nil sleeps.
	Sleep func(context.Context, time.Duration) error

	dir     string // the package's directory in FS
	cfg     custConfig
	postGC  bool
	removed bool
}

func (c *Customization) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}

// Read finds, reads and applies the customization. A customization that
// fails is reported and returned as an error; none at all is
// ErrNoCustomization.
func (c *Customization) Read(ctx context.Context) (*instance.Data, error) {
	if !c.AllowVMwareCust && !c.AllowRawData {
		return nil, fmt.Errorf("%w: disabled (disable_vmware_customization and datasource.OVF.allow_raw_data)", ErrNoCustomization)
	}
	if p := c.findPlugin(); p == "" {
		return nil, fmt.Errorf("%w: no deployPkg plugin (%s) in the root", ErrNoCustomization, pluginName)
	} else {
		c.logf("ovf: VMware Tools' deployPkg plugin /%s", p)
	}
	for _, d := range IMCDirs {
		if fi, err := fs.Stat(c.FS, d+"/cust.cfg"); err == nil && fi.Mode().IsRegular() {
			c.dir = d
			break
		}
	}
	if c.dir == "" {
		return nil, fmt.Errorf("%w: no cust.cfg in /%s", ErrNoCustomization, strings.Join(IMCDirs, " or /"))
	}
	cfgPath := "/" + c.dir + "/cust.cfg"
	c.logf("ovf: VMware customization %s", cfgPath)
	b, err := datasource.ReadFile(c.FS, c.dir+"/cust.cfg", maxCustCfg)
	if err == nil {
		c.cfg, err = ParseCustConfig(cfgPath, b)
	}
	if err != nil {
		// cloud-init stops here without a word to vCenter; vCenter is
		// told instead of left waiting.
		return nil, c.fail(ctx, msgParsing, err, eventCustomizeFailed)
	}
	c.postGC, _ = c.cfg.PostGCStatus()
	mdName, udName := c.cfg.MetadataName(), c.cfg.UserdataName()
	var md, ud, nicsTxt string
	if mdName != "" {
		if md, err = c.member(mdName); err == nil && udName != "" {
			ud, err = c.member(udName)
		}
		if err != nil {
			return nil, c.fail(ctx, "File(s) missing in directory", err, eventCustomizeFailed)
		}
	} else if fi, err := fs.Stat(c.FS, c.dir+"/nics.txt"); err == nil && fi.Mode().IsRegular() {
		nicsTxt = c.dir + "/nics.txt"
	}
	switch {
	case md != "" && !c.AllowRawData:
		return nil, fmt.Errorf("%w: %s carries cloud-init meta-data, and datasource.OVF.allow_raw_data is false", ErrNoCustomization, cfgPath)
	case md == "" && !c.AllowVMwareCust:
		return nil, fmt.Errorf("%w: %s: disable_vmware_customization is true", ErrNoCustomization, cfgPath)
	}
	c.gcStatus(ctx, "Started")
	var d *instance.Data
	if md != "" {
		d, err = c.rawData(ctx, md, ud)
	} else {
		d, err = c.specification(ctx, nicsTxt)
	}
	if err != nil {
		return nil, err
	}
	c.removePackage()
	c.status(ctx, stateDone, errSuccess, "")
	c.gcStatus(ctx, "Successful")
	c.logf("ovf: VMware customization applied, reported to vCenter")
	return d, nil
}

// member is the name of a file of the package, which must be there.
func (c *Customization) member(name string) (string, error) {
	if name == "" || strings.Contains(name, "/") || name == "." || name == ".." {
		return "", fmt.Errorf("%q: not a file name of the package", name)
	}
	p := c.dir + "/" + name
	fi, err := fs.Stat(c.FS, p)
	if err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("/%s: not found in the package", p)
	}
	return p, nil
}

// findPlugin is where the deployPkg plugin is ("" for nowhere), searched
// as cloud-init's search_file does, a few levels deep.
func (c *Customization) findPlugin() string {
	budget := 4096
	var walk func(dir string, depth int) string
	walk = func(dir string, depth int) string {
		ents, err := fs.ReadDir(c.FS, dir)
		if err != nil {
			return ""
		}
		for _, e := range ents {
			if e.Name() == pluginName && e.Type().IsRegular() {
				return dir + "/" + e.Name()
			}
		}
		for _, e := range ents {
			if budget--; budget < 0 {
				return ""
			}
			if e.IsDir() && depth < 4 {
				if p := walk(dir+"/"+e.Name(), depth+1); p != "" {
					return p
				}
			}
		}
		return ""
	}
	for _, d := range pluginDirs {
		if p := walk(d, 0); p != "" {
			return p
		}
	}
	return ""
}

// rawData reads the package's cloud-init meta-data and user-data, as
// cloud-init's load_cloudinit_data.
func (c *Customization) rawData(ctx context.Context, mdPath, udPath string) (*instance.Data, error) {
	b, err := datasource.ReadFile(c.FS, mdPath, datasource.MaxFileSize)
	if err != nil {
		return nil, c.fail(ctx, "Error loading cloud-init configuration", err, eventCustomizeFailed)
	}
	meta, text, network, err := metaMapping(b)
	if err != nil {
		return nil, c.fail(ctx, "Error parsing the cloud-init meta data", fmt.Errorf("/%s: %w", mdPath, err), errWrongMeta)
	}
	d := &instance.Data{Datasource: "ovf", DatasourceClass: "OVF", CloudName: "ovf", Platform: "ovf",
		Subplatform: "ovf (vmware-tools)", Meta: meta}
	if d.InstanceID = strings.TrimSpace(text["instance-id"]); d.InstanceID == "" {
		d.InstanceID = DefaultInstanceID
		meta["instance-id"] = DefaultInstanceID
	}
	d.LocalHostname = strings.TrimSpace(text["local-hostname"])
	if v, ok := meta["public-keys"]; ok {
		if d.PublicKeys, err = datasource.PublicKeys(v); err != nil {
			return nil, c.fail(ctx, "Error loading cloud-init configuration", fmt.Errorf("/%s: public-keys: %w", mdPath, err), eventCustomizeFailed)
		}
	}
	if network != nil {
		d.Network, d.NetworkFormat = network, instance.NetworkYAML
	}
	if udPath != "" {
		u, err := datasource.ReadFile(c.FS, udPath, datasource.MaxFileSize)
		if err != nil {
			return nil, c.fail(ctx, "Error loading cloud-init configuration", err, eventCustomizeFailed)
		}
		d.UserData = bytes.ReplaceAll(u, []byte("\r"), nil)
	}
	return d, nil
}

// metaMapping decodes YAML (or JSON) meta-data that must be a mapping (or
// empty) as cloud-init's safeyaml does (YAML 1.1): the mapping, the text
// of its scalar values and its "network" value as written, as YAML, when
// that is a mapping.
func metaMapping(b []byte) (map[string]any, map[string]string, []byte, error) {
	v, err := userdata.LoadYAML(b)
	if err != nil {
		return nil, nil, nil, err
	}
	meta, text := map[string]any{}, map[string]string{}
	if v == nil {
		return meta, text, nil, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, nil, nil, errors.New("want a mapping")
	}
	meta = m
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil || len(doc.Content) == 0 {
		return meta, text, nil, nil
	}
	root := doc.Content[0]
	var network []byte
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, val := root.Content[i], root.Content[i+1]
		for val.Kind == yaml.AliasNode && val.Alias != nil {
			val = val.Alias
		}
		if val.Kind == yaml.ScalarNode && val.Tag != "!!null" {
			text[k.Value] = val.Value
		}
		if k.Value == "network" && val.Kind == yaml.MappingNode {
			if network, err = yaml.Marshal(val); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	return meta, text, network, nil
}

// specification applies a customization specification, as cloud-init's
// read_vmware_imc and what follows it in DataSourceOVF._get_data.
func (c *Customization) specification(ctx context.Context, nicsTxt string) (*instance.Data, error) {
	cfg := c.cfg
	d := c.specInstance()
	vendor := map[string]any{}
	if tz := cfg.Timezone(); tz != "" {
		vendor["timezone"] = tz
	}
	var nics string
	if nicsTxt != "" {
		if b, err := c.head(nicsTxt, maxNICsTxt); err == nil {
			nics = string(b)
		} else {
			return nil, c.fail(ctx, msgParsing, err, eventCustomizeFailed)
		}
	}
	markerFile, special, err := c.marker(ctx)
	if err != nil {
		return nil, err
	}
	script := cfg.CustomScript()
	if special && script != "" {
		if err := c.preCustomization(ctx, script); err != nil {
			return nil, err
		}
	}
	if d.Network, err = c.specNetwork(ctx); err != nil {
		return nil, err
	}
	d.NetworkFormat = instance.NetworkYAML
	if special {
		if err := c.password(vendor); err != nil {
			return nil, c.fail(ctx, "Error applying Password Configuration", err, eventCustomizeFailed)
		}
		if script != "" {
			if err := c.setUpPostScript(script); err != nil {
				return nil, c.fail(ctx, "Error executing post-customization script", err, eventCustomizeFailed)
			}
		}
	}
	if markerFile != "" {
		if err := c.writeMarker(markerFile); err != nil {
			return nil, c.fail(ctx, "Error creating marker files", err, eventCustomizeFailed)
		}
	}
	if len(vendor) > 0 {
		if d.VendorData, err = vendorConfig(vendor); err != nil {
			return nil, c.fail(ctx, msgParsing, err, eventCustomizeFailed)
		}
	}
	c.removePackage()
	c.enableNICs(ctx, nics)
	return d, nil
}

// specInstance is the instance a specification describes: imcInstanceID
// and the host name (HOSTNAME.DOMAINNAME).
func (c *Customization) specInstance() *instance.Data {
	meta := map[string]any{"instance-id": imcInstanceID}
	d := &instance.Data{Datasource: "ovf", DatasourceClass: "OVF", CloudName: "ovf", Platform: "ovf",
		Subplatform: "ovf (vmware-tools)", InstanceID: imcInstanceID, Meta: meta}
	if h := c.cfg.HostName(); h != "" {
		if dom := c.cfg.DomainName(); dom != "" {
			h += "." + dom
		}
		d.LocalHostname = h
		meta["local-hostname"] = h
	}
	return d
}

// marker is MISC MARKER-ID's marker file ("" without a marker) and whether
// the customization is new (special): a marker whose file is absent.
// Errors are reported (see fail).
func (c *Customization) marker(ctx context.Context) (markerFile string, special bool, err error) {
	marker := c.cfg.MarkerID()
	if strings.Contains(marker, "/") {
		return "", false, c.fail(ctx, msgParsing, fmt.Errorf("%s: not a file name", keyMarker), eventCustomizeFailed)
	}
	if marker == "" {
		return "", false, nil
	}
	markerFile = MarkerDir + "/.markerfile-" + marker + ".txt"
	_, err = fs.Stat(c.FS, strings.TrimPrefix(markerFile, "/"))
	special = err != nil
	if !special {
		c.logf("ovf: customization marker %s is there: the password and the scripts were applied before", markerFile)
	}
	return markerFile, special, nil
}

// preCustomization runs the custom script's pre-customization half when
// VMware Tools' deployPkg enable-custom-scripts allows it (its default
// from MISC DEFAULT-RUN-POST-CUST-SCRIPT). Errors are reported.
func (c *Customization) preCustomization(ctx context.Context, script string) error {
	defRun, err := c.cfg.DefaultRunPostScript()
	if err != nil {
		return c.fail(ctx, msgParsing, err, eventCustomizeFailed)
	}
	def := "false"
	if defRun {
		def = "true"
	}
	v, ok, err := c.Tools.ToolsConfig(ctx, "deployPkg", "enable-custom-scripts")
	if err != nil {
		c.logf("ovf: VMware Tools' deployPkg enable-custom-scripts: %v: default %s", err, def)
	}
	if !ok || err != nil {
		v = def
	}
	if strings.ToLower(v) != "true" {
		// As cloud-init: reported once as it is found, and again as
		// the failure it is.
		c.status(ctx, stateRunning, errScriptDisabled, "")
		return c.fail(ctx, msgParsing, errors.New("custom script is disabled by VM Administrator (VMware Tools' deployPkg enable-custom-scripts)"), errScriptDisabled)
	}
	if err := c.runPreScript(ctx, script); err != nil {
		return c.fail(ctx, "Error executing pre-customization script", err, eventCustomizeFailed)
	}
	return nil
}

// specNetwork is the specification's network configuration (version 1,
// as YAML), its NICs checked against the live ones when c.MACs is set.
// Errors are reported.
func (c *Customization) specNetwork(ctx context.Context) ([]byte, error) {
	const preparing = "Error preparing Network Configuration"
	var names map[string]string
	if c.MACs != nil {
		var err error
		if names, err = c.MACs(); err != nil {
			return nil, c.fail(ctx, preparing, err, eventNetworkSetupFailed)
		}
	}
	netCfg, err := c.cfg.NetworkConfig(names)
	if err == nil && names != nil {
		// Checked against the live NICs, written by MAC alone: the
		// initramfs's names are not the system's.
		netCfg, err = c.cfg.NetworkConfig(nil)
	}
	if err != nil {
		return nil, c.fail(ctx, preparing, err, eventNetworkSetupFailed)
	}
	b, err := yaml.Marshal(netCfg)
	if err != nil {
		return nil, c.fail(ctx, preparing, err, eventNetworkSetupFailed)
	}
	return b, nil
}

// head reads at most n bytes of a file of FS.
func (c *Customization) head(name string, n int) ([]byte, error) {
	f, err := c.FS.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, n)
	k := 0
	for k < n {
		m, err := f.Read(buf[k:])
		k += m
		if err != nil {
			break
		}
	}
	return buf[:k], nil
}

// removePackage removes the package's directory, as cloud-init does once
// it read it, so that the next boot does not apply it again.
func (c *Customization) removePackage() {
	if c.removed || c.Root == nil || c.dir == "" {
		return
	}
	c.removed = true
	var rm func(dir string, depth int) error
	rm = func(dir string, depth int) error {
		ents, err := fs.ReadDir(c.FS, dir)
		if err != nil {
			return err
		}
		for _, e := range ents {
			p := dir + "/" + e.Name()
			if e.IsDir() && depth < 8 {
				if err := rm(p, depth+1); err != nil {
					return err
				}
				continue
			}
			if err := c.Root.Remove("/" + p); err != nil {
				return err
			}
		}
		return c.Root.Remove("/" + dir)
	}
	if err := rm(c.dir, 0); err != nil {
		c.logf("ovf: removing the customization package /%s: %v", c.dir, err)
	}
}
