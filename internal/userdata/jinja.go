//go:build !initrd

package userdata

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/jinja"
)

// Jinja templates are rendered as cloud-init 22.4's
// JinjaTemplatePartHandler and cloudinit/templater.py render them, with
// earlyinit's Jinja subset (internal/jinja): the first line must be
// "## template: jinja"; the rest is rendered with the instance data's
// variables (JinjaVars); the output must be cloud-config or a #! script
// (cloud-init's two sub-handlers), else the part is dropped. A template
// that fails (outside the subset, an undefined name used as an object, a
// cost bound) is dropped whole, with a warning naming the line: never
// rendered half.

// maxInstanceJSONDepth bounds the nesting of the instance data read.
const maxInstanceJSONDepth = 512

// mergedCfgDoc is cloud-init's merged_cfg._doc.
const mergedCfgDoc = "Merged cloud-init system config from /etc/cloud/cloud.cfg and /etc/cloud/cloud.cfg.d/"

// JinjaVars are the variables of a template, as cloud-init's
// convert_jinja_instance_data makes them from instance data (the JSON of
// instance-data-sensitive.json, or the redacted file): every key of a
// "vN" object (v1) also at the top, every key with a Jinja operator in
// its name also under its alias with "_" for each operator
// (local-hostname: local_hostname; ds.meta_data["x.y"]: x_y), keys in
// sorted order, and the paths cloud-init's "base64-encoded-keys" lists
// decoded. mergedCfg, when the instance data has no merged_cfg (earlyinit
// does not write one), is the image's configuration put there as
// cloud-init puts its merged system configuration.
func JinjaVars(instanceData []byte, mergedCfg map[string]any) (*jinja.Dict, error) {
	v, err := jinja.DecodeJSON(instanceData, maxInstanceJSONDepth)
	if err != nil {
		return nil, fmt.Errorf("instance data: %w", err)
	}
	top, ok := v.(*jinja.Dict)
	if !ok {
		return nil, errors.New("instance data: not a JSON object")
	}
	if _, ok := top.Get("merged_cfg"); !ok && mergedCfg != nil {
		m := jinjaValue(mergedCfg).(*jinja.Dict)
		m.Set("_doc", mergedCfgDoc)
		top.Set("merged_cfg", m)
	}
	var decode []string
	if l, ok := top.Get("base64-encoded-keys"); ok {
		if l, ok := l.([]any); ok {
			for _, p := range l {
				if s, ok := p.(string); ok {
					decode = append(decode, strings.ReplaceAll(s, "-", "_"))
				}
			}
		}
	}
	return convertJinja(top, "", decode)
}

// jinjaValue turns a YAML value (LoadYAML's) into a template's: maps as
// dicts with their keys sorted (as instance-data.json has them), binary
// as cloud-init's JSON writes it ("ci-b64:" and its base64).
func jinjaValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d := jinja.NewDict()
		for _, k := range keys {
			d.Set(k, jinjaValue(x[k]))
		}
		return d
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jinjaValue(e)
		}
		return out
	case int:
		return int64(x)
	case uint64:
		if x > 1<<63-1 {
			return float64(x)
		}
		return int64(x)
	case []byte:
		return "ci-b64:" + base64.StdEncoding.EncodeToString(x)
	}
	return v
}

// convertJinja is convert_jinja_instance_data(include_key_aliases=True).
func convertJinja(d *jinja.Dict, prefix string, decode []string) (*jinja.Dict, error) {
	var keys []string
	for _, k := range d.Keys() {
		if s, ok := k.(string); ok {
			keys = append(keys, s)
		}
	}
	sort.Strings(keys)
	out := jinja.NewDict()
	for _, k := range keys {
		path := k
		if prefix != "" {
			path = prefix + "/" + k
		}
		v, _ := d.Get(k)
		for _, p := range decode {
			if p != path {
				continue
			}
			s, ok := v.(string)
			b, err := base64.StdEncoding.DecodeString(s)
			if !ok || err != nil {
				return nil, fmt.Errorf("instance data: %s is listed as base64 but does not decode", path)
			}
			v = string(b)
		}
		if sub, ok := v.(*jinja.Dict); ok {
			c, err := convertJinja(sub, path, decode)
			if err != nil {
				return nil, err
			}
			out.Set(k, c)
			if isVersionKey(k) {
				for _, sk := range c.Keys() {
					sv, _ := c.Get(sk)
					out.Set(sk, sv)
				}
			}
		} else {
			out.Set(k, v)
		}
		if a := jinjaAlias(k); a != k {
			av, _ := out.Get(k)
			out.Set(a, av)
		}
	}
	return out, nil
}

// isVersionKey is cloud-init's re.match(r"v\d+$", key).
func isVersionKey(k string) bool {
	k = strings.TrimSuffix(k, "\n")
	return len(k) > 1 && k[0] == 'v' && strings.Trim(k[1:], "0123456789") == ""
}

// jinjaAlias is cloud-init's get_jinja_variable_alias: each of Jinja's
// operators (its lexer's operator_re, two-character ones first) made "_".
func jinjaAlias(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		if i+1 < len(k) {
			switch k[i : i+2] {
			case "//", "**", "==", "!=", ">=", "<=":
				b.WriteByte('_')
				i++
				continue
			}
		}
		if strings.IndexByte("+-/*%~[](){}><=.:|,;", k[i]) >= 0 {
			b.WriteByte('_')
			continue
		}
		b.WriteByte(k[i])
	}
	return b.String()
}

// ErrNotJinja is a payload whose first line is not "## template: jinja".
var ErrNotJinja = errors.New("payload is not a jinja template: its first line is not '## template: jinja'")

// RenderJinjaPayload is cloud-init's render_jinja_payload: payload's first
// line must be "## template: jinja" (else ErrNotJinja); the rest is
// rendered with vars (JinjaVars), its trailing newline kept; an error's
// line is the payload's (the header is line 1). missing are
// the undefined names the output shows (CI_MISSING_JINJA_VAR/<name>), for
// cloud-init's warning.
func RenderJinjaPayload(payload []byte, vars *jinja.Dict) (out []byte, missing []string, err error) {
	ident, rest, _ := bytes.Cut(payload, []byte("\n"))
	if !isJinjaHeader(ident) {
		return nil, nil, ErrNotJinja
	}
	t, err := jinja.Parse(string(rest), jinja.DefaultLimits)
	var s string
	if err == nil {
		s, missing, err = t.Render(vars)
	}
	if err != nil {
		// Jinja counts lines from the one after the header; the
		// payload's own numbers are the ones its author sees.
		var je *jinja.Error
		if errors.As(err, &je) && je.Line > 0 {
			e := *je
			e.Line++
			err = &e
		}
		return nil, nil, err
	}
	if bytes.HasSuffix(rest, []byte("\n")) {
		s += "\n"
	}
	return []byte(s), missing, nil
}

// isJinjaHeader is templater.py's TYPE_MATCHER (##\s*template:(.*), any
// case) naming jinja.
func isJinjaHeader(line []byte) bool {
	l := strings.ToLower(string(line))
	if !strings.HasPrefix(l, "##") {
		return false
	}
	l = strings.TrimLeft(l[2:], " \t\r\v\f")
	typ, ok := strings.CutPrefix(l, "template:")
	return ok && strings.TrimSpace(typ) == "jinja"
}

// MissingWarning is cloud-init's warning about undefined names, for part
// (its file name).
func MissingWarning(part string, missing []string) string {
	return fmt.Sprintf("could not render jinja template variables in %s: '%s'", part, strings.Join(missing, "', '"))
}

// RenderJinja renders the TypeJinja parts of parts in place, as cloud-init's
// JinjaTemplatePartHandler: the rendered part is typed by its first line
// and kept when it is cloud-config or a #! script (with the template's
// file name and merge type), dropped otherwise; an empty result is dropped
// silently; a template that fails to render is dropped with a warning.
// instanceData reads the instance data, once and only when there is a
// template (instance-data-sensitive.json for the late stages, which run as
// root); mergedCfg is the image's configuration, for merged_cfg.
func RenderJinja(parts []Part, instanceData func() ([]byte, error), mergedCfg map[string]any) ([]Part, []Warning) {
	var warns []Warning
	warnf := func(format string, args ...any) { warns = append(warns, Warning(fmt.Sprintf(format, args...))) }
	var vars *jinja.Dict
	var varsErr error
	loaded := false
	out := parts[:0:0]
	for _, p := range parts {
		if p.Type != TypeJinja {
			out = append(out, p)
			continue
		}
		if !loaded {
			loaded = true
			var b []byte
			if b, varsErr = instanceData(); varsErr == nil {
				vars, varsErr = JinjaVars(b, mergedCfg)
			}
		}
		if varsErr != nil {
			warnf("part %s: jinja template: cannot render without the instance data (%v): skipped", p.Filename, varsErr)
			continue
		}
		rendered, missing, err := RenderJinjaPayload(p.Content, vars)
		if err != nil {
			warnf("part %s: jinja template: %v: skipped", p.Filename, err)
			continue
		}
		if len(missing) > 0 {
			warnf("part %s: %s", p.Filename, MissingWarning("the template", missing))
		}
		if len(rendered) == 0 {
			continue
		}
		switch t := sniff(rendered); t {
		case TypeCloudConfig, TypeShellScript:
			p.Type, p.Content = t, rendered
			out = append(out, p)
		case typeJSONPatch:
			warnf("part %s: jinja template renders #cloud-config-jsonp, which earlyinit does not support: skipped", p.Filename)
		default:
			what := "no known #type line"
			if t != "" {
				what = t
			}
			warnf("part %s: jinja template renders %s (%d bytes): cloud-init renders templates into cloud-config or a #! script only: skipped", p.Filename, what, len(rendered))
		}
	}
	return out, warns
}
