package ovf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
)

// What a new customization applies (see Customization): the custom
// script's two halves, the marker file, the password.

// copyScript is cloud-init's prepare_script: the package's script copied
// to CustomScript, its carriage returns removed, mode 0544.
func (c *Customization) copyScript(name string) error {
	p, err := c.member(name)
	if err != nil {
		return fmt.Errorf("custom script: %w", err)
	}
	b, err := datasource.ReadFile(c.FS, p, maxScript)
	if err != nil {
		return err
	}
	if c.Root == nil {
		return errors.New("no root to write the custom script into")
	}
	return c.Root.WriteFile(CustomScript, bytes.ReplaceAll(b, []byte("\r"), nil), 0o544, -1, -1)
}

// runPreScript is cloud-init's PreCustomScript.
func (c *Customization) runPreScript(ctx context.Context, name string) error {
	if err := c.copyScript(name); err != nil {
		return err
	}
	c.logf("ovf: running the pre-customization script %s precustomization", CustomScript)
	return c.Tools.Run(ctx, CustomScript, "precustomization")
}

// setUpPostScript is cloud-init's PostCustomScript: the final stage runs
// the package's post-customize-guest.sh, which runs CustomScript with
// "postcustomization".
func (c *Customization) setUpPostScript(name string) error {
	if err := c.copyScript(name); err != nil {
		return err
	}
	p, err := c.member(PostScriptName)
	if err != nil {
		return err
	}
	b, err := datasource.ReadFile(c.FS, p, maxScript)
	if err != nil {
		return err
	}
	dst := postScriptDir + "/" + PostScriptName
	if err := c.Root.WriteFile(dst, b, 0o700, -1, -1); err != nil {
		return err
	}
	c.logf("ovf: post-customization script %s, for the final stage", dst)
	return c.Root.WriteFile(PostPendingMarker, nil, 0o644, -1, -1)
}

// writeMarker is cloud-init's setup_marker_files: the other marker files
// removed, this one created.
func (c *Customization) writeMarker(name string) error {
	if c.Root == nil {
		return errors.New("no root to write the marker into")
	}
	ents, _ := fs.ReadDir(c.FS, strings.TrimPrefix(MarkerDir, "/"))
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".markerfile") {
			if err := c.Root.Remove(MarkerDir + "/" + e.Name()); err != nil {
				return err
			}
		}
	}
	return c.Root.WriteFile(name, nil, 0o644, -1, -1)
}

// password turns PASSWORD -PASS and RESET into vendor-data cloud-config
// (see Customization). The password is never logged.
func (c *Customization) password(vendor map[string]any) error {
	reset, err := c.cfg.ResetPassword()
	if err != nil {
		return err
	}
	enc := c.cfg.AdminPassword()
	if enc == "" && !reset {
		c.logf("ovf: changing the password is not needed")
		return nil
	}
	if enc != "" {
		b, err := pyB64Decode(enc)
		if err != nil {
			return fmt.Errorf("%s: %w", keyPassword, err)
		}
		// cloud-init gives chpasswd "root:PASSWORD": a final line break
		// (cloud-init's own test data has one) ends the line, one inside
		// would start another.
		pw := strings.TrimRight(string(b), "\n")
		if strings.ContainsAny(pw, "\n\x00") {
			return fmt.Errorf("%s: the password holds a line break or a NUL", keyPassword)
		}
		vendor["chpasswd"] = map[string]any{
			"expire": reset,
			"users":  []any{map[string]any{"name": "root", "password": pw, "type": "text"}},
		}
		c.logf("ovf: root's password from the customization, for the late stage (expire: %v)", reset)
	}
	if !reset {
		return nil
	}
	users, err := c.uid0Users()
	if err != nil {
		return err
	}
	var run []any
	for _, u := range users {
		if enc != "" && u == "root" {
			continue // chpasswd's expire
		}
		run = append(run, []any{"sh", "-c", `passwd --expire "$1" || chage -d 0 "$1"`, "--", u})
	}
	if len(run) > 0 {
		vendor["runcmd"] = run
		c.logf("ovf: the passwords of %s expire (PASSWORD RESET)", strings.Join(users, ", "))
	}
	return nil
}

// uid0Users are the users of uid 0 in /etc/passwd that /etc/shadow has,
// as cloud-init's PasswordConfigurator finds them.
func (c *Customization) uid0Users() ([]string, error) {
	pw, err := datasource.ReadFile(c.FS, "etc/passwd", 4<<20)
	if err != nil {
		return nil, err
	}
	sh, err := datasource.ReadFile(c.FS, "etc/shadow", 4<<20)
	if err != nil {
		return nil, err
	}
	roots := map[string]bool{}
	for _, l := range strings.Split(string(pw), "\n") {
		if f := strings.Split(l, ":"); len(f) > 2 && f[2] == "0" {
			roots[f[0]] = true
		}
	}
	var out []string
	for _, l := range strings.Split(string(sh), "\n") {
		name, _, _ := strings.Cut(l, ":")
		if roots[name] && name != "" && !strings.HasPrefix(name, "-") {
			out = append(out, name)
			delete(roots, name)
		}
	}
	sort.Strings(out)
	return out, nil
}
