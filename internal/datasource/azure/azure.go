// Package azure reads Microsoft Azure's instance metadata service (IMDS)
// and provisioning ISO (ovf-env.xml) into the instance model, and reports
// "ready" to Azure's fabric, as cloud-init's DataSourceAzure does.
//
//   - IMDS: GET /metadata/instance?api-version=2021-08-01&extended=true
//     with "Metadata: true" (api-version 2019-06-01 when that one is
//     refused with a 400); 404, 410 and 429 are tried again, as IMDS gives
//     them while the VM is still being set up. It gives the VM id (the
//     instance id), the computer name, the admin user, SSH keys, user-data
//     (base64) and the NICs (network config v2, see Network).
//   - ovf-env.xml (OVF, ParseOVF), when the caller found the provisioning
//     ISO: host name, admin user, SSH keys and custom data, which wins
//     over IMDS's user-data. IMDS's computer name and admin user win over
//     ovf-env.xml's, as in cloud-init.
//   - The ready report (reporter): GET the wire server's goal state and
//     POST a Ready health report for it. Without it Azure marks
//     provisioning failed; it must run once the instance is read, over the
//     temporary network (see Ready).
//
// The admin user (and ssh_pwauth from DisableSshPasswordAuthentication)
// is cloud-init's datasource configuration: here it is given as
// vendor-data, a cloud-config of system_info.default_user.name and
// ssh_pwauth, which the late stages merge under user-data as cloud-init
// merges the datasource's configuration.
//
// Differences from cloud-init: the instance id is IMDS's vmId (cloud-init
// takes the DMI system UUID, the same on generation 2 VMs and byte-swapped
// on generation 1); IMDS is required (cloud-init can provision from the
// ISO alone); the admin password is not set (it is not stored either);
// keys given in ovf-env.xml only by certificate fingerprint are not
// fetched from the wire server; pre-provisioned VM pools (PPS) are
// refused; the provisioning ISO is not ejected; nothing is reported to
// Hyper-V's KVP pool.
package azure

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/jsondoc"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// DefaultBaseURL is the IMDS address.
const DefaultBaseURL = "http://169.254.169.254"

// AssetTag is the chassis asset tag of every Azure VM (cloud-init's
// ChassisAssetTag.AZURE_CLOUD).
const AssetTag = "7783-7084-3265-9085-8269-3286-77"

// IMDS API versions, as cloud-init asks for them.
const (
	APIVersion         = "2021-08-01"
	fallbackAPIVersion = "2019-06-01"
)

// maxIMDS bounds the instance document (it holds user-data, at most 64
// KiB before base64, and the NICs).
const maxIMDS = 4 << 20

// Platform recognises Azure as ds-identify and cloud-init's ds_detect do:
// the chassis asset tag is AssetTag, exactly.
func Platform(i dmi.Info) bool { return i.ChassisAssetTag == AssetTag }

// Client reads IMDS. The zero value reads http://169.254.169.254 with the
// defaults below.
type Client struct {
	// BaseURL is the service's root; "" means DefaultBaseURL.
	BaseURL string
	// HTTPClient makes the requests. Its Retries and Backoff are this
	// client's own: IMDS is asked again after a 404, 410, 429 or 5xx
	// answer, a timeout or a connection error, and the Getter made when
	// HTTP is nil does not retry.
	datasource.HTTPClient
	// MaxBody bounds the instance document; 0 means maxIMDS.
	MaxBody int64
	// OVF is the provisioning ISO's ovf-env.xml, nil when there is none.
	OVF *OVF
}

// Read reads IMDS and merges OVF in. A failure rejects the source with an
// error naming the URL or the key.
func (c *Client) Read(ctx context.Context) (*instance.Data, error) {
	base := datasource.BaseURL(c.BaseURL, DefaultBaseURL)
	imds, u, err := c.fetch(ctx, base)
	if err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	d, err := c.fromIMDS(u, imds)
	if err != nil {
		return nil, fmt.Errorf("azure: %w", err)
	}
	d.Subplatform = fmt.Sprintf("metadata (%s)", base)
	if c.OVF != nil && c.OVF.Subplatform != "" {
		d.Subplatform = c.OVF.Subplatform
	}
	return d, nil
}

// fetch gets the instance document, trying the fallback API version on a
// 400, and returns it with the URL it came from.
func (c *Client) fetch(ctx context.Context, base string) (map[string]any, string, error) {
	// Retries are this client's: IMDS's 404s are worth one too.
	h := c.HTTPClient
	h.Retries = -1
	g := h.Fetcher()
	limit := datasource.Limit(c.MaxBody, maxIMDS)
	u := base + "/metadata/instance?api-version=" + APIVersion + "&extended=true"
	b, err := c.get(ctx, g, u, limit)
	if httpget.Status(err) == 400 {
		c.Log("azure: %v: trying api-version %s", err, fallbackAPIVersion)
		u = base + "/metadata/instance?api-version=" + fallbackAPIVersion
		b, err = c.get(ctx, g, u, limit)
	}
	if err != nil {
		return nil, "", err
	}
	v, err := jsondoc.Decode(u, b)
	if err != nil {
		return nil, "", err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, "", fmt.Errorf("%s: want a JSON object, got %s", u, scalar.JSONNoun(v))
	}
	return m, u, nil
}

// get fetches u, asking again, with backoff, after the answers cloud-init's
// IMDS retry handler retries (404, 410, 429, 5xx) and after timeouts and
// connection errors.
func (c *Client) get(ctx context.Context, g httpget.Fetcher, u string, limit int64) ([]byte, error) {
	retries := c.Retries
	switch {
	case retries == 0:
		retries = httpget.DefaultRetries
	case retries < 0:
		retries = 0
	}
	wait := c.Backoff
	if wait <= 0 {
		wait = httpget.DefaultBackoff
	}
	for try := 0; ; try++ {
		b, err := g.Get(ctx, httpget.Request{URL: u, Header: map[string]string{"Metadata": "true"}, Limit: limit})
		if err == nil || try >= retries || ctx.Err() != nil {
			return b, err
		}
		switch s := httpget.Status(err); {
		case s == 0 && !isTooBig(err), s == 404, s == 410, s == 429, s >= 500:
		default:
			return nil, err
		}
		c.Log("azure: %v; retrying in %v", err, wait)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w; then %w", err, ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
}

func isTooBig(err error) bool {
	var tb *httpget.TooBigError
	return errors.As(err, &tb)
}

// fromIMDS builds the instance from the IMDS document read at u (for
// errors) and c.OVF.
func (c *Client) fromIMDS(u string, imds map[string]any) (*instance.Data, error) {
	at := func(path string) string { return u + ": " + path }
	compute, ok := imds["compute"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("%s: want an object, got %s", at("compute"), scalar.JSONNoun(imds["compute"]))
	}
	ovf := c.OVF
	if ovf == nil {
		ovf = &OVF{}
	}
	d := &instance.Data{Datasource: "azure", CloudName: "azure", Platform: "azure"}

	vmID, err := imdsString(at, compute, "compute.", "vmId")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(vmID) == "" {
		return nil, fmt.Errorf("%s: missing or empty (it is required)", at("compute.vmId"))
	}
	d.InstanceID = strings.ToLower(vmID)

	// Pre-provisioned VM pools wait for a reprovisioning that this source
	// does not do.
	ext, _ := imds["extended"].(map[string]any)
	extCompute, _ := ext["compute"].(map[string]any)
	pps, _ := extCompute["ppsType"].(string)
	if (pps != "" && pps != "None") || ovf.PreprovisionedVM || ovf.PreprovisionedVMType != "" {
		return nil, fmt.Errorf("%s %q, ovf-env.xml PreprovisionedVm %v, PreprovisionedVMType %q: a pre-provisioned VM, not supported", at("extended.compute.ppsType"), pps, ovf.PreprovisionedVM, ovf.PreprovisionedVMType)
	}

	if err := c.osProfile(at, compute, ovf, d); err != nil {
		return nil, err
	}

	if d.Region, err = imdsString(at, compute, "compute.", "location"); err != nil {
		return nil, err
	}
	// cloud-init's availability_zone is the platform fault domain.
	if d.AvailabilityZone, err = imdsString(at, compute, "compute.", "platformFaultDomain"); err != nil {
		return nil, err
	}

	if d.PublicKeys, err = c.keys(at, compute, ovf); err != nil {
		return nil, err
	}

	if d.UserData, err = c.userData(at, compute, extCompute, ovf); err != nil {
		return nil, err
	}

	if nw, ok := imds["network"]; ok {
		b, err := Network(at("network"), nw)
		switch {
		case err != nil:
			c.Log("azure: the fallback network configuration applies: %v", err)
		case b != nil:
			d.Network, d.NetworkFormat = b, instance.NetworkYAML
		}
	}

	d.Meta = map[string]any{"imds": imds, "instance-id": d.InstanceID, "local-hostname": d.LocalHostname}
	return d, nil
}

// imdsString is m[key], a string or absent (""); path+key names it in
// errors, after at.
func imdsString(at func(string) string, m map[string]any, path, key string) (string, error) {
	switch v := m[key].(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	default:
		return "", fmt.Errorf("%s: want a string, got %s", at(path+key), scalar.JSONNoun(v))
	}
}

// osProfile sets d's local host name and vendor-data (the admin user and
// ssh_pwauth) from compute.osProfile, falling back to ovf's.
func (c *Client) osProfile(at func(string) string, compute map[string]any, ovf *OVF, d *instance.Data) error {
	var prof map[string]any
	switch v := compute["osProfile"].(type) {
	case nil:
	case map[string]any:
		prof = v
	default:
		return fmt.Errorf("%s: want an object, got %s", at("compute.osProfile"), scalar.JSONNoun(v))
	}
	var err error
	if d.LocalHostname, err = imdsString(at, prof, "compute.osProfile.", "computerName"); err != nil {
		return err
	}
	if d.LocalHostname == "" {
		d.LocalHostname = ovf.HostName
	}
	user, err := imdsString(at, prof, "compute.osProfile.", "adminUsername")
	if err != nil {
		return err
	}
	userFrom := "compute.osProfile.adminUsername"
	if user == "" {
		user, userFrom = ovf.UserName, "ovf-env.xml UserName"
	}
	if user != "" && !validUser(user) {
		return fmt.Errorf("%s %q: not a user name", userFrom, user)
	}
	pwauth := (*bool)(nil)
	if dp, err := imdsString(at, prof, "compute.osProfile.", "disablePasswordAuthentication"); err != nil {
		return err
	} else if _, ok := prof["disablePasswordAuthentication"]; ok {
		v := dp != "true"
		pwauth = &v
	} else if ovf.DisableSSHPasswordAuth != nil {
		v := !*ovf.DisableSSHPasswordAuth
		pwauth = &v
	}
	if ovf.HasPassword {
		c.Log("azure: ovf-env.xml gives the admin user a password: earlyinit does not set it")
	}
	d.VendorData, err = vendorData(user, pwauth)
	return err
}

// userData is ovf-env.xml's custom data, or else IMDS's compute.userData
// decoded from base64 (none when it is not base64, as in cloud-init).
func (c *Client) userData(at func(string) string, compute, extCompute map[string]any, ovf *OVF) ([]byte, error) {
	if len(ovf.CustomData) > 0 {
		return ovf.CustomData, nil
	}
	if has, _ := extCompute["hasCustomData"].(bool); has {
		c.Log("azure: IMDS says the VM has custom data, but no ovf-env.xml gave it")
	}
	ud, err := imdsString(at, compute, "compute.", "userData")
	if err != nil {
		return nil, err
	}
	if ud == "" {
		return nil, nil
	}
	b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(ud), ""))
	if err != nil {
		// cloud-init logs "Bad userdata in IMDS" and goes on.
		c.Log("azure: %s: not base64: no user-data", at("compute.userData"))
		return nil, nil
	}
	return b, nil
}

// keys are IMDS's compute.publicKeys (CRLF inside a key removed), or, when
// IMDS has none or one is not an OpenSSH key, ovf-env.xml's key values, as
// cloud-init's get_public_ssh_keys.
func (c *Client) keys(at func(string) string, compute map[string]any, ovf *OVF) ([]string, error) {
	if list, ok := compute["publicKeys"].([]any); ok {
		var keys []string
		good := true
		for i, v := range list {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: want an object, got %s", at(fmt.Sprintf("compute.publicKeys[%d]", i)), scalar.JSONNoun(v))
			}
			k, _ := m["keyData"].(string)
			k = strings.ReplaceAll(strings.TrimSpace(k), "\r\n", "")
			if !openSSHKey(k) {
				good = false
				break
			}
			keys = append(keys, k)
		}
		if good {
			return keys, nil
		}
		c.Log("azure: %s: not all OpenSSH keys: using ovf-env.xml's", at("compute.publicKeys"))
	}
	var keys []string
	for _, k := range ovf.PublicKeys {
		switch {
		case k.Value != "":
			keys = append(keys, k.Value)
		case k.Fingerprint != "":
			c.Log("azure: ovf-env.xml key %s (for %s) is only a certificate fingerprint: not fetched", k.Fingerprint, k.Path)
		}
	}
	return keys, nil
}

// openSSHKey tells whether k looks like an authorized_keys key: a key
// type, then base64.
func openSSHKey(k string) bool {
	f := strings.Fields(k)
	if len(f) < 2 {
		return false
	}
	t := f[0]
	return strings.HasPrefix(t, "ssh-") || strings.HasPrefix(t, "ecdsa-sha2-") || strings.HasPrefix(t, "sk-")
}

// validUser accepts the admin user names Azure allows: a letter or "_",
// then letters, digits, ".", "_" or "-", at most 64 in all.
func validUser(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '_':
		case i > 0 && (r >= '0' && r <= '9' || r == '.' || r == '-'):
		default:
			return false
		}
	}
	return true
}

// vendorData is the datasource's configuration as a cloud-config: the
// default user's name and ssh_pwauth; nil when there is neither.
func vendorData(user string, pwauth *bool) ([]byte, error) {
	cfg := map[string]any{}
	if user != "" {
		cfg["system_info"] = map[string]any{"default_user": map[string]any{"name": user}}
	}
	if pwauth != nil {
		cfg["ssh_pwauth"] = *pwauth
	}
	if len(cfg) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	return append([]byte("#cloud-config\n"), append(b, '\n')...), nil
}

// Ready reports ready to Azure's fabric for the instance discovery chose
// (d), over the temporary network: it is what a source's "after it was
// chosen" step would call, bounded by ctx (earlyinit.timeout). svc.HTTP,
// if set, makes the requests; svc.Logf is told of the attempts.
func Ready(ctx context.Context, svc datasource.Service, d *instance.Data) error {
	if d == nil || d.CloudName != "azure" {
		return nil
	}
	r := &reporter{HTTP: svc.HTTP, Logf: svc.Logf}
	return r.Report(ctx)
}
