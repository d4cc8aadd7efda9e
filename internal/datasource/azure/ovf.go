package azure

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
)

// OVFFile is the provisioning ISO's file (and the seed directory's).
const OVFFile = "ovf-env.xml"

// maxOVF bounds ovf-env.xml: custom data is at most 64 KiB before base64.
const maxOVF = 1 << 20

// The namespaces of ovf-env.xml.
const (
	nsOVF = "http://schemas.dmtf.org/ovf/environment/1"
	nsWA  = "http://schemas.microsoft.com/windowsazure"
)

// errNotAzure is an ovf-env.xml without Azure's ProvisioningSection (an
// OVF environment of another platform), as cloud-init's
// NonAzureDataSource.
var errNotAzure = errors.New("not Azure's ovf-env.xml: no ProvisioningSection")

// OVF is what Azure's ovf-env.xml provisions, as cloud-init's OvfEnvXml
// reads it. The admin password is not kept: earlyinit does not set
// passwords from it (HasPassword says one was given).
type OVF struct {
	HostName string
	UserName string
	// HasPassword: UserPassword was given (and is not cloud-init's
	// "REDACTED" placeholder).
	HasPassword bool
	// CustomData is the decoded custom data; nil when there is none.
	CustomData []byte
	// DisableSSHPasswordAuth is DisableSshPasswordAuthentication; nil when
	// absent.
	DisableSSHPasswordAuth *bool
	PublicKeys             []OVFKey

	PreprovisionedVM         bool
	PreprovisionedVMType     string
	ProvisionGuestProxyAgent bool

	// Subplatform says where it was read ("config-disk (/dev/sr0)"), for
	// the instance's subplatform; set by the caller.
	Subplatform string
}

// OVFKey is one SSH public key of ovf-env.xml: its value, or only the
// fingerprint of a certificate the wire server holds.
type OVFKey struct {
	Fingerprint, Path, Value string
}

// ReadOVF reads ovf-env.xml from a provisioning ISO or seed directory.
// A missing file is an error wrapping fs.ErrNotExist.
func ReadOVF(fsys fs.FS) (*OVF, error) {
	b, err := datasource.ReadFile(fsys, OVFFile, maxOVF)
	if err != nil {
		return nil, err
	}
	return ParseOVF(OVFFile, b)
}

// xml shapes: every element a list, so that a repeated one is an error (as
// in cloud-init) rather than silently the last.
type (
	xmlText struct {
		Text string `xml:",chardata"`
	}
	xmlEnvironment struct {
		Provisioning []xmlProvisioning `xml:"http://schemas.microsoft.com/windowsazure ProvisioningSection"`
		Platform     []xmlPlatform     `xml:"http://schemas.microsoft.com/windowsazure PlatformSettingsSection"`
	}
	xmlProvisioning struct {
		Linux []xmlLinux `xml:"http://schemas.microsoft.com/windowsazure LinuxProvisioningConfigurationSet"`
	}
	xmlLinux struct {
		HostName     []xmlText `xml:"http://schemas.microsoft.com/windowsazure HostName"`
		UserName     []xmlText `xml:"http://schemas.microsoft.com/windowsazure UserName"`
		UserPassword []xmlText `xml:"http://schemas.microsoft.com/windowsazure UserPassword"`
		CustomData   []xmlText `xml:"http://schemas.microsoft.com/windowsazure CustomData"`
		DisablePW    []xmlText `xml:"http://schemas.microsoft.com/windowsazure DisableSshPasswordAuthentication"`
		SSH          []xmlSSH  `xml:"http://schemas.microsoft.com/windowsazure SSH"`
	}
	xmlSSH struct {
		PublicKeys []xmlPublicKeys `xml:"http://schemas.microsoft.com/windowsazure PublicKeys"`
	}
	xmlPublicKeys struct {
		Keys []xmlKey `xml:"http://schemas.microsoft.com/windowsazure PublicKey"`
	}
	xmlKey struct {
		Fingerprint []xmlText `xml:"http://schemas.microsoft.com/windowsazure Fingerprint"`
		Path        []xmlText `xml:"http://schemas.microsoft.com/windowsazure Path"`
		Value       []xmlText `xml:"http://schemas.microsoft.com/windowsazure Value"`
	}
	xmlPlatform struct {
		Settings []xmlSettings `xml:"http://schemas.microsoft.com/windowsazure PlatformSettings"`
	}
	xmlSettings struct {
		PreprovisionedVM         []xmlText `xml:"http://schemas.microsoft.com/windowsazure PreprovisionedVm"`
		PreprovisionedVMType     []xmlText `xml:"http://schemas.microsoft.com/windowsazure PreprovisionedVMType"`
		ProvisionGuestProxyAgent []xmlText `xml:"http://schemas.microsoft.com/windowsazure ProvisionGuestProxyAgent"`
	}
)

// ParseOVF parses ovf-env.xml (name is for errors) as cloud-init's
// OvfEnvXml.parse_text does: ProvisioningSection,
// LinuxProvisioningConfigurationSet, its HostName and
// PlatformSettingsSection/PlatformSettings are required; every element at
// most once; an empty element is an absent one; CustomData is base64
// (blanks ignored). Without a ProvisioningSection it returns errNotAzure.
// Errors never quote the password or the custom data.
func ParseOVF(name string, b []byte) (*OVF, error) {
	var env xmlEnvironment
	if err := xml.Unmarshal(b, &env); err != nil {
		// A syntax error's message quotes the text at fault ("invalid
		// character entity &s3cret"), which may be the password: only
		// its line is given.
		var se *xml.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("parse %s: XML syntax error on line %d (the text is not shown: it may hold the password)", name, se.Line)
		}
		return nil, fmt.Errorf("parse %s: %w", name, err)
	}
	if len(env.Provisioning) == 0 {
		return nil, fmt.Errorf("%s: %w", name, errNotAzure)
	}
	o := &OVF{}
	if err := o.readProvisioning(env.Provisioning); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if err := o.readPlatform(env.Platform); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return o, nil
}

// oneText is the trimmed text of the only element of l (see one).
func oneText(l []xmlText, elem string, required bool) (string, error) {
	t, err := one(l, elem, required)
	return strings.TrimSpace(t.Text), err
}

// readProvisioning reads ProvisioningSection's
// LinuxProvisioningConfigurationSet into o.
func (o *OVF) readProvisioning(l []xmlProvisioning) error {
	prov, err := one(l, "ProvisioningSection", true)
	if err != nil {
		return err
	}
	lin, err := one(prov.Linux, "LinuxProvisioningConfigurationSet", true)
	if err != nil {
		return err
	}
	if o.HostName, err = oneText(lin.HostName, "HostName", true); err != nil {
		return err
	}
	if o.UserName, err = oneText(lin.UserName, "UserName", false); err != nil {
		return err
	}
	pw, err := one(lin.UserPassword, "UserPassword", false)
	if err != nil {
		return err
	}
	o.HasPassword = pw.Text != "" && pw.Text != "REDACTED"
	cd, err := oneText(lin.CustomData, "CustomData", false)
	if err != nil {
		return err
	}
	if cd != "" {
		if o.CustomData, err = base64.StdEncoding.DecodeString(strings.Join(strings.Fields(cd), "")); err != nil {
			return errors.New("CustomData: not base64")
		}
	}
	dpw, err := one(lin.DisablePW, "DisableSshPasswordAuthentication", false)
	if err != nil {
		return err
	}
	if len(lin.DisablePW) > 0 {
		v := translateBool(dpw.Text)
		o.DisableSSHPasswordAuth = &v
	}
	o.PublicKeys, err = ovfKeys(lin.SSH)
	return err
}

// ovfKeys are the keys of SSH/PublicKeys.
func ovfKeys(l []xmlSSH) ([]OVFKey, error) {
	ssh, err := one(l, "SSH", false)
	if err != nil {
		return nil, err
	}
	pks, err := one(ssh.PublicKeys, "PublicKeys", false)
	if err != nil {
		return nil, fmt.Errorf("SSH: %v", err)
	}
	var keys []OVFKey
	for i, k := range pks.Keys {
		var key OVFKey
		for _, f := range []struct {
			l    []xmlText
			elem string
			to   *string
		}{{k.Fingerprint, "Fingerprint", &key.Fingerprint}, {k.Path, "Path", &key.Path}, {k.Value, "Value", &key.Value}} {
			if *f.to, err = oneText(f.l, f.elem, false); err != nil {
				return nil, fmt.Errorf("SSH PublicKey %d: %v", i, err)
			}
		}
		keys = append(keys, key)
	}
	return keys, nil
}

// readPlatform reads PlatformSettingsSection/PlatformSettings into o.
func (o *OVF) readPlatform(l []xmlPlatform) error {
	plat, err := one(l, "PlatformSettingsSection", true)
	if err != nil {
		return err
	}
	set, err := one(plat.Settings, "PlatformSettings", true)
	if err != nil {
		return err
	}
	pv, err := oneText(set.PreprovisionedVM, "PreprovisionedVm", false)
	if err != nil {
		return err
	}
	o.PreprovisionedVM = translateBool(pv)
	if o.PreprovisionedVMType, err = oneText(set.PreprovisionedVMType, "PreprovisionedVMType", false); err != nil {
		return err
	}
	pa, err := oneText(set.ProvisionGuestProxyAgent, "ProvisionGuestProxyAgent", false)
	if err != nil {
		return err
	}
	o.ProvisionGuestProxyAgent = translateBool(pa)
	return nil
}

// one is the only element of l, the zero value when there is none (an
// error if required), an error when there are several.
func one[T any](l []T, elem string, required bool) (T, error) {
	var zero T
	switch {
	case len(l) == 0 && required:
		return zero, fmt.Errorf("missing configuration for %q", elem)
	case len(l) == 0:
		return zero, nil
	case len(l) > 1:
		return zero, fmt.Errorf("multiple configuration matches for %q (%d)", elem, len(l))
	}
	return l[0], nil
}

// translateBool is cloud-init's util.translate_bool on text.
func translateBool(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "yes", "true", "on":
		return true
	}
	return false
}
