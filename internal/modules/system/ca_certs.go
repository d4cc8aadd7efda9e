package system

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// caCertsLayout is cloud-init's ca_certs distribution configuration.
type caCertsLayout struct {
	// Dir holds the local certificates (ca_cert_path), File the one
	// earlyinit writes, relative to it.
	Dir, File string
	// Config is ca_cert_config, the list of enabled certificates ("": none).
	Config string
	// Purge are the directories remove_defaults empties.
	Purge []string
	// Update is the command that rebuilds the bundle.
	Update string
	// Debconf: remove_defaults also tells debconf not to trust new
	// certificates.
	Debconf bool
}

// caCertsLayoutFor is the layout of family: cloud-init's DEFAULT_CONFIG on
// Debian and Alpine, its rhel override on the RHEL family (remove_defaults
// empties the local and the system sources, not /etc/pki/ca-trust as a
// whole: update-ca-trust needs its extracted directories), openSUSE's
// p11-kit anchors (cloud-init 23's layout; remove_defaults not supported).
func caCertsLayoutFor(family string) caCertsLayout {
	switch family {
	case core.FamilyRHEL:
		return caCertsLayout{
			Dir: "/usr/share/pki/ca-trust-source", File: "anchors/cloud-init-ca-certs.crt",
			Purge:  []string{"/usr/share/pki/ca-trust-source", "/etc/pki/ca-trust/source"},
			Update: "update-ca-trust",
		}
	case core.FamilySUSE:
		return caCertsLayout{Dir: "/etc/pki/trust", File: "anchors/cloud-init-ca-certs.crt", Update: "update-ca-certificates"}
	}
	return caCertsLayout{
		Dir: "/usr/share/ca-certificates", File: "cloud-init-ca-certs.crt", Config: "/etc/ca-certificates.conf",
		Purge: []string{"/usr/share/ca-certificates", "/etc/ssl/certs"}, Update: "update-ca-certificates",
		Debconf: family == core.FamilyDebian,
	}
}

// CACerts is cc_ca_certs (ca_certs, or the deprecated ca-certs):
// remove_defaults (or remove-defaults) true empties the distribution's
// certificate directories (and on Debian empties /etc/ca-certificates.conf
// and sets debconf's trust_new_crts to no); trusted, a list of PEM
// certificates, is written, joined by newlines, to the distribution's
// local file (0644) and named in /etc/ca-certificates.conf where there is
// one; then the update tool runs (update-ca-certificates, update-ca-trust).
// Every certificate is checked first (PEM text, printable): nothing is
// changed when one is not.
func CACerts(ctx context.Context, e *core.Env) error {
	// ok is the key given, even null (Decode's error: a map is wanted).
	key := "ca_certs"
	cc, ok, err := ccfg.Decode[ccfg.CACerts](e.Cfg, key)
	if old, isOld, oldErr := ccfg.Decode[ccfg.CACerts](e.Cfg, "ca-certs"); isOld {
		if ok {
			e.Logf("ca_certs: both ca_certs and the deprecated ca-certs are set: ca-certs ignored")
		} else {
			e.Logf("ca_certs: the key ca-certs is deprecated: use ca_certs")
			key, cc, ok, err = "ca-certs", old, isOld, oldErr
		}
	}
	if !ok || err != nil {
		return err
	}
	remove := cc.RemoveDefaults
	if cc.OldRemoveDefaults != nil {
		e.Logf("ca_certs: %s.remove-defaults is deprecated: use remove_defaults", key)
		remove = *cc.OldRemoveDefaults
	}
	certs := cc.Trusted
	for i, c := range certs {
		if err := checkPEM(c); err != nil {
			return fmt.Errorf("%s.trusted.%d: %w", key, i, err)
		}
	}
	l := caCertsLayoutFor(e.DistroInfo().Family)
	if remove {
		if len(l.Purge) == 0 {
			return fmt.Errorf("%s.remove_defaults: not supported on this distribution (openSUSE)", key)
		}
		if err := removeDefaultCerts(ctx, e, l); err != nil {
			return fmt.Errorf("%s.remove_defaults: %w", key, err)
		}
	}
	if len(certs) > 0 {
		e.Logf("ca_certs: adding %d certificates", len(certs))
		if err := e.Root.WriteFile(path.Join(l.Dir, l.File), []byte(strings.Join(certs, "\n")), 0o644, 0, 0); err != nil {
			return fmt.Errorf("%s.trusted: %w", key, err)
		}
		if err := addCertConfig(e, l); err != nil {
			return fmt.Errorf("%s.trusted: %w", key, err)
		}
	}
	if _, err := e.Run(ctx, core.Cmd{Name: l.Update, Output: e.Out()}); err != nil {
		return fmt.Errorf("ca_certs: %w", err)
	}
	return nil
}

// checkPEM accepts a certificate as PEM text: a BEGIN CERTIFICATE line,
// printable ASCII and line breaks only.
func checkPEM(c string) error {
	if !strings.Contains(c, "-----BEGIN CERTIFICATE-----") || !strings.Contains(c, "-----END CERTIFICATE-----") {
		return errors.New("not a PEM certificate (no BEGIN/END CERTIFICATE lines)")
	}
	for _, r := range c {
		if (r < ' ' || r > '~') && r != '\n' && r != '\r' && r != '\t' {
			return fmt.Errorf("not a PEM certificate: character %q", r)
		}
	}
	return nil
}

// addCertConfig is update_cert_config: l.File appended to l.Config (once,
// blank lines dropped, since they end the list for update-ca-certificates).
func addCertConfig(e *core.Env, l caCertsLayout) error {
	if l.Config == "" {
		return nil
	}
	old, err := e.Root.ReadFile(l.Config)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out := l.File + "\n"
	if len(old) > 0 {
		var kept []string
		for _, line := range strings.Split(strings.ReplaceAll(string(old), "\r\n", "\n"), "\n") {
			if line != l.File {
				kept = append(kept, line)
			}
		}
		out = strings.TrimRight(strings.Join(kept, "\n"), " \t\n\r") + "\n" + l.File + "\n"
	}
	return e.Root.WriteFile(l.Config, []byte(out), 0o644, 0, 0)
}

// removeDefaultCerts is remove_default_ca_certs.
func removeDefaultCerts(ctx context.Context, e *core.Env, l caCertsLayout) error {
	e.Logf("ca_certs: removing the default certificates")
	for _, d := range l.Purge {
		if err := emptyDir(e, d); err != nil {
			return err
		}
	}
	if l.Config != "" {
		if err := e.Root.WriteFile(l.Config, nil, 0o644, 0, 0); err != nil {
			return err
		}
	}
	if l.Debconf {
		if _, err := e.Run(ctx, core.Cmd{Name: "debconf-set-selections", Args: []string{"-"}, Stdin: []byte("ca-certificates ca-certificates/trust_new_crts select no")}); err != nil {
			return err
		}
	}
	return nil
}

// emptyDir removes what dir holds (util.delete_dir_contents), never
// following a symlink; a missing dir is empty.
func emptyDir(e *core.Env, dir string) error {
	fi, err := e.Root.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: not a directory", dir)
	}
	ents, err := os.ReadDir(e.Root.Path(dir))
	if err != nil {
		return err
	}
	for _, ent := range ents {
		p := path.Join(dir, ent.Name())
		if ent.IsDir() && ent.Type()&fs.ModeSymlink == 0 {
			if err := emptyDir(e, p); err != nil {
				return err
			}
		}
		if err := e.Root.Remove(p); err != nil {
			return err
		}
	}
	return nil
}
