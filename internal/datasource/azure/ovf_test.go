package azure

import (
	"errors"
	"io/fs"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ovfEnv is cloud-init's construct_ovf_env() output around set, the
// LinuxProvisioningConfigurationSet's elements, and platform, the
// PlatformSettings' ones.
func ovfEnv(set, platform string) string {
	return `<?xml version="1.0" encoding="utf-8"?>
<ns0:Environment xmlns="http://schemas.dmtf.org/ovf/environment/1"
xmlns:ns0="http://schemas.dmtf.org/ovf/environment/1"
xmlns:ns1="http://schemas.microsoft.com/windowsazure"
xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<ns1:ProvisioningSection>
<ns1:Version>1.0</ns1:Version>
<ns1:LinuxProvisioningConfigurationSet>
<ns1:ConfigurationSetType>LinuxProvisioningConfiguration</ns1:ConfigurationSetType>
` + set + `
</ns1:LinuxProvisioningConfigurationSet>
</ns1:ProvisioningSection>
<ns1:PlatformSettingsSection>
<ns1:Version>1.0</ns1:Version>
<ns1:PlatformSettings>
<ns1:KmsServerHostname>kms.core.windows.net</ns1:KmsServerHostname>
<ns1:ProvisionGuestAgent>false</ns1:ProvisionGuestAgent>
<ns1:GuestAgentPackageName xsi:nil="true" />
` + platform + `
</ns1:PlatformSettings>
</ns1:PlatformSettingsSection>
</ns0:Environment>`
}

func bp(b bool) *bool { return &b }

// TestParseOVF: cloud-init's TestOvfEnvXml.test_valid_ovf_scenarios, on
// construct_ovf_env()'s output.
func TestParseOVF(t *testing.T) {
	const names = "<ns1:HostName>test-host</ns1:HostName>\n<ns1:UserName>test-user</ns1:UserName>"
	for _, tt := range []struct {
		name string
		xml  string
		want OVF
	}{
		{"defaults", string(readFixture(t, "ovf-env-default.xml")), OVF{HostName: "test-host", UserName: "test-user"}},
		{"full", string(readFixture(t, "ovf-env-full.xml")), OVF{
			HostName: "vm-azure-1", UserName: "azureuser", HasPassword: true,
			CustomData:             []byte("#cloud-config\nruncmd: [touch /run/azure]\n"),
			DisableSSHPasswordAuth: bp(true),
			PublicKeys: []OVFKey{
				{Fingerprint: "fp1", Path: "/home/azureuser/.ssh/authorized_keys"},
				{Fingerprint: "fp2", Path: "/home/azureuser/.ssh/authorized_keys", Value: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOvfKey azureuser"},
			},
		}},
		{"pre-provisioned", string(readFixture(t, "ovf-env-pps.xml")), OVF{HostName: "test-host", UserName: "test-user", PreprovisionedVM: true, PreprovisionedVMType: "Running"}},
		{"other user", ovfEnv("<ns1:HostName>test-host</ns1:HostName>\n<ns1:UserName>other-user</ns1:UserName>", ""), OVF{HostName: "test-host", UserName: "other-user"}},
		{"empty password (SSH keys only)", ovfEnv(names+"\n<ns1:UserPassword></ns1:UserPassword>", ""), OVF{HostName: "test-host", UserName: "test-user"}},
		{"redacted password", ovfEnv(names+"\n<ns1:UserPassword>REDACTED</ns1:UserPassword>", ""), OVF{HostName: "test-host", UserName: "test-user"}},
		{"empty public keys", ovfEnv(names+"\n<ns1:SSH>\n<ns1:PublicKeys>\n</ns1:PublicKeys>\n</ns1:SSH>", ""), OVF{HostName: "test-host", UserName: "test-user"}},
		{"custom data foo", ovfEnv(names+"\n<ns1:CustomData>Zm9v</ns1:CustomData>", ""), OVF{HostName: "test-host", UserName: "test-user", CustomData: []byte("foo")}},
		{"custom data wrapped", ovfEnv(names+"\n<ns1:CustomData>\n  Zm9v\n  YmFy\n</ns1:CustomData>", ""), OVF{HostName: "test-host", UserName: "test-user", CustomData: []byte("foobar")}},
		{"password auth allowed", ovfEnv(names+"\n<ns1:DisableSshPasswordAuthentication>false</ns1:DisableSshPasswordAuthentication>", ""), OVF{HostName: "test-host", UserName: "test-user", DisableSSHPasswordAuth: bp(false)}},
		{"preprovisioned false", ovfEnv(names, "<ns1:PreprovisionedVm>false</ns1:PreprovisionedVm>"), OVF{HostName: "test-host", UserName: "test-user"}},
		{"preprovisioned type", ovfEnv(names, "<ns1:PreprovisionedVMType>testpps</ns1:PreprovisionedVMType>"), OVF{HostName: "test-host", UserName: "test-user", PreprovisionedVMType: "testpps"}},
		{"proxy agent", ovfEnv(names, "<ns1:ProvisionGuestProxyAgent>True</ns1:ProvisionGuestProxyAgent>"), OVF{HostName: "test-host", UserName: "test-user", ProvisionGuestProxyAgent: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseOVF("ovf-env.xml", []byte(tt.xml))
			if err != nil {
				t.Fatalf("ParseOVF: %v", err)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("ParseOVF:\n got %+v\nwant %+v", *got, tt.want)
			}
		})
	}
}

// TestParseOVFErrors: cloud-init's test_missing_required_fields,
// test_multiple_sections_fails, test_multiple_properties_fails,
// test_non_azure_ovf and test_invalid_xml.
func TestParseOVFErrors(t *testing.T) {
	const names = "<ns1:HostName>test-host</ns1:HostName>\n<ns1:UserName>test-user</ns1:UserName>"
	twoSections := `<ns0:Environment xmlns="http://schemas.dmtf.org/ovf/environment/1"
 xmlns:ns0="http://schemas.dmtf.org/ovf/environment/1"
 xmlns:ns1="http://schemas.microsoft.com/windowsazure"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<ns1:ProvisioningSection>
<ns1:Version>1.0</ns1:Version>
<ns1:LinuxProvisioningConfigurationSet>
<ns1:ConfigurationSetType>
LinuxProvisioningConfiguration
</ns1:ConfigurationSetType>
</ns1:LinuxProvisioningConfigurationSet>
</ns1:ProvisioningSection>
<ns1:ProvisioningSection>
</ns1:ProvisioningSection>
</ns0:Environment>`
	nonAzure := `<ns0:Environment xmlns="http://schemas.dmtf.org/ovf/environment/1"
 xmlns:ns0="http://schemas.dmtf.org/ovf/environment/1"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
</ns0:Environment>`
	for _, tt := range []struct {
		name, xml, want string
		is              error
	}{
		{"no HostName", string(readFixture(t, "ovf-env-no-hostname.xml")), `ovf-env.xml: missing configuration for "HostName"`, nil},
		{"two ProvisioningSections", twoSections, `multiple configuration matches for "ProvisioningSection" (2)`, nil},
		{"two HostNames", ovfEnv(names+"\n<ns1:HostName>test-host2</ns1:HostName>", ""), `multiple configuration matches for "HostName" (2)`, nil},
		{"two PublicKeys lists", ovfEnv(names+"\n<ns1:SSH><ns1:PublicKeys/><ns1:PublicKeys/></ns1:SSH>", ""), `SSH: multiple configuration matches for "PublicKeys" (2)`, nil},
		{"not Azure's", nonAzure, "no ProvisioningSection", errNotAzure},
		{"empty", "", "parse ovf-env.xml: EOF", nil},
		{"not well-formed", "<!!!!>", "parse ovf-env.xml: ", nil},
		{"not XML", "badxml", "parse ovf-env.xml: EOF", nil},
		{"no PlatformSettingsSection", strings.Replace(ovfEnv(names, ""), "PlatformSettingsSection", "OtherSection", 2), `missing configuration for "PlatformSettingsSection"`, nil},
		{"password breaks the XML", ovfEnv(names+"\n<ns1:UserPassword>pw&s3cret</ns1:UserPassword>", ""), "parse ovf-env.xml: XML syntax error on line ", nil},
		{"custom data not base64", ovfEnv(names+"\n<ns1:CustomData>s3cret!!</ns1:CustomData>", ""), "ovf-env.xml: CustomData: not base64", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, err := ParseOVF("ovf-env.xml", []byte(tt.xml))
			if err == nil {
				t.Fatalf("ParseOVF = %+v, want an error", o)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not say %q", err, tt.want)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q is not %v", err, tt.is)
			}
			if strings.Contains(err.Error(), "s3cret") {
				t.Errorf("error %q quotes the custom data", err)
			}
		})
	}
}

func TestReadOVF(t *testing.T) {
	full := readFixture(t, "ovf-env-full.xml")
	o, err := ReadOVF(fstest.MapFS{"ovf-env.xml": {Data: full}})
	if err != nil || o.UserName != "azureuser" {
		t.Errorf("ReadOVF = %+v, %v", o, err)
	}
	if _, err := ReadOVF(fstest.MapFS{"other": {Data: full}}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadOVF without the file: %v, want fs.ErrNotExist", err)
	}
	big := append(append([]byte{}, full...), make([]byte, maxOVF)...)
	if _, err := ReadOVF(fstest.MapFS{"ovf-env.xml": {Data: big}}); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Errorf("ReadOVF of an oversized file: %v, want the limit", err)
	}
}
