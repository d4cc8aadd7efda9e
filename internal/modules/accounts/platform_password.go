package accounts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/datasource/openstack"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/paths"
)

// Passwords from the platform, cloudbase-init's inject_user_password and
// its SetUserPasswordPlugin's post to nova's password endpoint. Both are
// off unless the configuration opts in:
//
//	earlyinit:
//	  inject_user_password: true
//
// in the image's /etc/earlyinit/earlyinit.cfg (or cloud.cfg.d, or
// user-data: the configuration set_passwords reads). Then:
//
//   - set_passwords (boot stage) gives the default user the platform's
//     password, when user-data gives the default user none (neither
//     `password` nor a chpasswd entry naming it): OpenStack's admin_pass
//     (meta_data.json's meta.admin_pass, then admin_pass, as
//     cloudbase-init's get_admin_password), CloudStack's and Exoscale's
//     from their password servers, H3C's from its config drive: whatever
//     the datasource stored as the instance's admin_pass in the sensitive
//     instance data. It goes to chpasswd on stdin with the other text
//     passwords, and chpasswd.expire (default true) expires it, as
//     cloudbase-init's first_logon_behaviour clear_text_injected_only does;
//   - on OpenStack's metadata service (datasource openstack), the default
//     user's password, when set_passwords set it in clear text (given in
//     user-data, RANDOM, or the platform's), is kept for the final stage in
//     pendingPasswordFile (0600, on /run's tmpfs: never on disk), and
//     post_password (final stage, after network-online) posts it
//     encrypted with the instance's first SSH key to the password endpoint
//     if that holds none (see openstack.Client.PostPassword), then removes
//     the file whatever happened. A hashed password cannot be posted.
//
// The password never reaches a log line or an error.

// optInKey is the map of earlyinit's own settings, and injectKey the
// opt-in in it.
const (
	optInKey  = "earlyinit"
	injectKey = "inject_user_password"
)

// pendingPasswordFile keeps, from the boot stage to the final one, the
// default user's clear-text password for post_password.
const pendingPasswordFile = paths.RunDir + "/password-to-post"

// Bounds of post_password: each request, and the whole exchange (GET,
// encrypt, POST, with retries).
const (
	postPasswordTimeout = 5 * time.Second
	postPasswordBudget  = 30 * time.Second
)

// maxSensitiveData bounds the sensitive instance data read for the
// platform's password, as the late stage bounds instance-data.json.
const maxSensitiveData = 64 << 20

// maxPendingPassword bounds pendingPasswordFile (a password is far less).
const maxPendingPassword = 4 << 10

// injectUserPassword tells whether the configuration opts in.
func injectUserPassword(e *core.Env) bool {
	c, _, err := ccfg.Decode[*ccfg.Earlyinit](e.Cfg, optInKey)
	if err != nil {
		e.Logf("%v: %s is off", err, injectKey)
		return false
	}
	return c != nil && c.InjectUserPassword
}

// checkPassword refuses what would break chpasswd's "name:password" line
// protocol: a line break (a second line sets another user's password) or
// a NUL.
func checkPassword(p string) error {
	if strings.ContainsAny(p, "\n\x00") {
		return errors.New("contains a line break or a NUL")
	}
	return nil
}

// addPlatformPassword gives du, the default user, the platform's password
// unless pw already has one for du.
func addPlatformPassword(e *core.Env, pw *passwords, du string) error {
	const what = optInKey + "." + injectKey
	if du == "" {
		e.Logf("%s: no default user to give the platform's password", what)
		return nil
	}
	if pw.has(du) {
		e.Logf("%s: user-data gives %s a password: the platform's is not used", what, du)
		return nil
	}
	p, src, err := platformPassword(e)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if p == "" {
		e.Logf("%s: the platform gave no password", what)
		return nil
	}
	if err := checkPassword(p); err != nil {
		return fmt.Errorf("%s: the platform's password (%s) %w: not set", what, src, err)
	}
	pw.text = append(pw.text, [2]string{du, p})
	e.Logf("%s: %s gets the platform's password (%s)", what, du, src)
	return nil
}

// platformPassword is the instance's admin_pass: Data.AdminPass, else from
// the sensitive instance data of this boot (for this instance only):
// ds.meta_data.meta.admin_pass, then ds.meta_data.admin_pass. src says
// which, never the value. No password is "", "", nil.
func platformPassword(e *core.Env) (p, src string, err error) {
	ds := "the datasource"
	if e.Data != nil {
		if e.Data.Datasource != "" {
			ds = e.Data.Datasource
		}
		if e.Data.AdminPass != "" {
			return e.Data.AdminPass, ds + "'s admin_pass", nil
		}
	}
	name := paths.RunDir + "/" + instance.InstanceDataSensitiveFile
	fi, err := e.Root.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", nil
	}
	if err != nil {
		return "", "", err
	}
	if fi.Size() > maxSensitiveData {
		return "", "", fmt.Errorf("%s: %d bytes, more than the limit of %d: not read", name, fi.Size(), maxSensitiveData)
	}
	b, err := e.Root.ReadFile(name)
	if err != nil {
		return "", "", err
	}
	var doc struct {
		V1 struct {
			InstanceID string `json:"instance_id"`
		} `json:"v1"`
		DS struct {
			MetaData map[string]any `json:"meta_data"`
		} `json:"ds"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		// The error of encoding/json names a position, never the text.
		return "", "", fmt.Errorf("%s: %w", name, err)
	}
	if doc.V1.InstanceID != e.InstanceID {
		return "", "", fmt.Errorf("%s: v1.instance_id is %q, not %q: not used", name, doc.V1.InstanceID, e.InstanceID)
	}
	md := doc.DS.MetaData
	if meta, ok := md["meta"].(map[string]any); ok {
		if s, ok := meta["admin_pass"].(string); ok && s != "" {
			return s, ds + "'s meta.admin_pass", nil
		}
	}
	if s, ok := md["admin_pass"].(string); ok && s != "" {
		return s, ds + "'s admin_pass", nil
	}
	return "", "", nil
}

// keepForPost keeps du's clear-text password in pendingPasswordFile for
// post_password, on OpenStack's metadata service only.
func keepForPost(e *core.Env, pw *passwords, du string) error {
	if e.Data == nil || e.Data.Datasource != "openstack" || du == "" {
		return nil
	}
	p, ok := pw.textOf(du)
	if !ok {
		e.Logf("%s.%s: %s has no clear-text password from this run (a hash, or none): nothing to post to the metadata service", optInKey, injectKey, du)
		return nil
	}
	if err := e.Root.WriteFile(pendingPasswordFile, []byte(p), 0o600, 0, 0); err != nil {
		return fmt.Errorf("keep %s's password for post_password: %w", du, err)
	}
	return nil
}

// takePending reads and removes pendingPasswordFile; none is "".
func takePending(e *core.Env) (string, error) {
	fi, err := e.Root.Stat(pendingPasswordFile)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var b []byte
	if fi.Size() <= maxPendingPassword {
		b, err = e.Root.ReadFile(pendingPasswordFile)
	} else {
		err = fmt.Errorf("%s: %d bytes, more than the limit of %d: not read", pendingPasswordFile, fi.Size(), maxPendingPassword)
	}
	if rerr := e.Root.Remove(pendingPasswordFile); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// PostPassword is the post_password module (final stage): the password
// set_passwords kept goes, encrypted with the first of the instance's
// public keys, to the password endpoint of the metadata service the
// instance came from, if that holds none. A key that cannot encrypt (not
// ssh-rsa, too small or too big), an unreachable service or a refused
// post is this module's error; no opt-in, another datasource, no
// password or no key are log lines.
func PostPassword(ctx context.Context, e *core.Env) error {
	p, err := takePending(e)
	if err != nil {
		return fmt.Errorf("post_password: %w", err)
	}
	switch {
	case !injectUserPassword(e):
		e.Logf("post_password: %s.%s is off: nothing posted", optInKey, injectKey)
		return nil
	case e.Data == nil || e.Data.Datasource != "openstack":
		ds := ""
		if e.Data != nil {
			ds = e.Data.Datasource
		}
		e.Logf("post_password: the datasource is %q, not OpenStack's metadata service: no password endpoint", ds)
		return nil
	case p == "":
		e.Logf("post_password: no clear-text password was set for the default user at boot: nothing to post")
		return nil
	case len(e.Data.PublicKeys) == 0:
		e.Logf("post_password: the instance has no SSH public key to encrypt the password with: not posted")
		return nil
	}
	base, err := metadataBase(e.Data.Subplatform)
	if err != nil {
		return fmt.Errorf("post_password: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, postPasswordBudget)
	defer cancel()
	c := &openstack.Client{BaseURL: base}
	c.RequestTimeout, c.Logf = postPasswordTimeout, e.Logf
	if e.HTTP != nil {
		c.HTTP = e.HTTP
	}
	res, err := c.PostPassword(ctx, e.Data.PublicKeys[0], p)
	if err != nil {
		return fmt.Errorf("post_password: %w", err)
	}
	e.Logf("post_password: %s: %s", base, res)
	return nil
}

// metadataBase is the metadata service's URL in an OpenStack instance's
// subplatform, "metadata (http://169.254.169.254)": plain http, a host
// and nothing else.
func metadataBase(sub string) (string, error) {
	s, ok := strings.CutPrefix(sub, "metadata (")
	if ok {
		s, ok = strings.CutSuffix(s, ")")
	}
	if !ok {
		return "", fmt.Errorf("the datasource's subplatform %q names no metadata service URL", sub)
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || u.Host == "" || u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", fmt.Errorf("the datasource's subplatform %q: the metadata service URL is not http://HOST[:PORT]", sub)
	}
	return "http://" + u.Host, nil
}
