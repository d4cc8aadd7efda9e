package ccfg

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"sort"
	"strconv"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// The readings of the repository and package modules (apt_configure,
// yum_add_repo, zypper_add_repo, apk_configure, wireguard,
// package_update_upgrade_install) that Decode's own do not make. Most of
// these modules check a value only when they come to it, after checks
// that may end them first, as cloud-init's do (an apt key is read only
// when sources.list is rewritten, a repository entry only when its file
// does not exist yet): so these types never fail Decode, and what is
// wrong with a value is their Err (apt's: Apt.Err of the key), naming
// its path, for the module to report where it reads the value, or to
// ignore where cloud-init does. A string or a list of strings read so
// is a PyString or a PyList (read_accounts.go), which the module reads
// when it comes to it (PyValue.Str, str(); PyValue.Strings, ccfg.Strings).

// FreeForm is a map a module takes as given: a repository's options,
// each written to its file as cloud-init formats it (a yum_repos or a
// zypper.repos entry), or zypp.conf's settings (zypper.config). K is
// its schema. A value that is not a map (null, where Decode passes it: a
// list's item) is Err; the module refuses it when it comes to it
// (cloud-init skips an entry whose file exists before it reads it).
type FreeForm[K any] struct {
	Map map[string]any
	Err error
}

// Schema is K's.
func (FreeForm[K]) Schema() *Schema { return Of(reflect.TypeFor[K]()) }

// DecodeCC never fails.
func (f *FreeForm[K]) DecodeCC(v any, path string) error {
	*f = FreeForm[K]{}
	if m, ok := v.(map[string]any); ok {
		f.Map = m
	} else {
		f.Err = wrongType(path, "a map", v)
	}
	return nil
}

// Packages is packages: package names, or [name, version] pairs; a lone
// name is a list of one (cloud-init's get_cfg_option_list). Decode keeps
// the value as given (a list, a name, or what is neither): the root's
// package manager reads it (core's PackageSpecs), checking every name
// and version and refusing the rest, when there is something to do.
type Packages struct {
	Value any
}

// Schema is a list's (Config's Shape says what its items are).
func (Packages) Schema() *Schema { return &Schema{Types: []string{"list"}} }

// DecodeCC never fails.
func (p *Packages) DecodeCC(v any, _ string) error {
	p.Value = v
	return nil
}

// Empty tells whether packages asks for nothing: it is missing, null,
// an empty list or an empty name.
func (p *Packages) Empty() bool {
	if p == nil {
		return true
	}
	switch t := p.Value.(type) {
	case nil:
		return true
	case []any:
		return len(t) == 0
	case string:
		return t == ""
	}
	return false
}

// DecodeCC reads apk_repos as cc_apk_configure does: a value that is
// false as Python takes it ({}, "", null) is nothing (Given is false);
// another that is not a map is an error. local_repo_base_url is the
// template's (APKText).
func (a *APKRepos) DecodeCC(v any, path string) error {
	*a = APKRepos{}
	if !scalar.Truthy(v) {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, "a map", v)
	}
	type plain APKRepos
	if err := decodeStruct(reflect.ValueOf((*plain)(a)).Elem(), m, path); err != nil {
		return err
	}
	if x, ok := m["local_repo_base_url"]; ok && x == nil {
		a.LocalRepoBaseURL.DecodeCC(nil, path+".local_repo_base_url")
	}
	a.given = true
	return nil
}

// Given tells whether apk_repos is given: a map with keys.
func (a *APKRepos) Given() bool { return a != nil && a.given }

// DecodeCC reads apk_repos.alpine_repo as cc_apk_configure does: a value
// that is false as Python takes it is nothing (Given is false); another
// that is not a map is Err, which the module reports past
// preserve_repositories. base_url and version are the template's
// (APKText).
func (a *AlpineRepo) DecodeCC(v any, path string) error {
	*a = AlpineRepo{}
	if !scalar.Truthy(v) {
		return nil
	}
	a.given = true
	m, ok := v.(map[string]any)
	if !ok {
		a.Err = wrongType(path, "a map", v)
		return nil
	}
	type plain AlpineRepo
	if err := decodeStruct(reflect.ValueOf((*plain)(a)).Elem(), m, path); err != nil {
		return err
	}
	if x, ok := m["base_url"]; ok && x == nil {
		a.BaseURL.DecodeCC(nil, path+".base_url")
	}
	return nil
}

// Given tells whether apk_repos.alpine_repo is given: true as Python
// takes it.
func (a *AlpineRepo) Given() bool { return a != nil && a.given }

// APKText is a value cc_apk_configure's template prints (a version, a
// URL): a string, or a number as the module prints it (version: 3.12
// unquoted; a float's integer value as 3.0). Another value given, null
// too, is Text's error: the module reads the value only past its checks
// of the keys before it.
type APKText struct {
	given, truthy bool
	text          string
	err           error
}

// Schema is a string's.
func (APKText) Schema() *Schema { return &Schema{Types: []string{"string"}} }

// DecodeCC never fails.
func (t *APKText) DecodeCC(v any, path string) error {
	*t = APKText{given: true, truthy: scalar.Truthy(v)}
	switch x := v.(type) {
	case string, int:
		t.text = String(x)
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			t.text = strconv.FormatFloat(x, 'f', 1, 64) // Python's str(3.0)
		} else {
			t.text = strconv.FormatFloat(x, 'g', -1, 64)
		}
	default:
		t.err = wrongType(path, "a string", v)
	}
	return nil
}

// Truthy tells whether the value is true as Python (jinja) takes it.
func (t APKText) Truthy() bool { return t.truthy }

// Text is the value as the template prints it, def when the key is not
// given.
func (t APKText) Text(def string) (string, error) {
	if !t.given {
		return def, nil
	}
	return t.text, t.err
}

// DecodeCC reads a wireguard.interfaces entry as cloud-init's
// supplemental_schema_validation checks one: name, config_path and
// content each a string (no number read as its str()). What is wrong is
// Err, each key's, so that the module reports every entry's errors
// together, its own checks' among them, as cloud-init does.
func (w *WireguardInterface) DecodeCC(v any, path string) error {
	*w = WireguardInterface{}
	m, ok := v.(map[string]any)
	if !ok {
		w.Err = wrongType(path, "a map", v)
		return nil
	}
	var errs []error
	for _, k := range []struct {
		key string
		dst *string
	}{{"name", &w.Name}, {"config_path", &w.ConfigPath}, {"content", &w.Content}} {
		switch s, ok := m[k.key].(string); {
		case ok:
			*k.dst = s
		case m[k.key] == nil:
			errs = append(errs, fmt.Errorf("%s.%s: missing", path, k.key))
		default:
			errs = append(errs, wrongType(path+"."+k.key, "a string", m[k.key]))
		}
	}
	w.Err = errors.Join(errs...)
	return nil
}

// DecodeCC reads apt: a value that is not a map is an error; then each
// key on its own, what is wrong with one being Err's (the module reads
// each key only when it comes to it, as cloud-init does).
// add_apt_repo_match given null is Given, as "": matching is off (where
// a key missing is the default pattern).
func (a *Apt) DecodeCC(v any, path string) error {
	*a = Apt{}
	type plain Apt
	errs, err := decodeEachKey((*plain)(a), v, path) // none of apt's keys has a default
	if err != nil {
		return err
	}
	a.errs = errs
	if x, ok := v.(map[string]any)["add_apt_repo_match"]; ok && x == nil {
		a.AddAptRepoMatch = PyString{PyValueOf(nil)}
	}
	return nil
}

// Err is what is wrong with apt's key (its name in the YAML), nil when
// Decode could read it.
func (a *Apt) Err(key string) error { return a.errs[key] }

// AptMirrors is apt.primary or apt.security: mirror entries by
// architecture, an entry that is not a map nil (the module skips it).
type AptMirrors []*AptMirror

// DecodeCC reads the list; a value that is not a list is an error.
func (l *AptMirrors) DecodeCC(v any, path string) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("%s: want a list of mirror entries", path)
	}
	out := make(AptMirrors, len(list))
	for i, it := range list {
		if _, ok := it.(map[string]any); ok {
			out[i] = &AptMirror{}
			if err := decodeStruct(reflect.ValueOf(out[i]).Elem(), it, path+"."+strconv.Itoa(i)); err != nil {
				return err
			}
		}
	}
	*l = out
	return nil
}

// AptSources is apt.sources: entries by name. An entry that is not a map
// (null too) is its Err.
type AptSources map[string]AptSource

// DecodeCC reads the map; a value that is not a map is an error.
func (s *AptSources) DecodeCC(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: want a map of entries, got %s", path, scalar.YAMLNoun(v))
	}
	out := make(AptSources, len(m))
	for name, it := range m {
		var src AptSource
		if _, ok := it.(map[string]any); ok {
			if err := decodeStruct(reflect.ValueOf(&src).Elem(), it, path+"."+name); err != nil {
				return err
			}
		} else {
			src.Err = wrongType(path+"."+name, "a map", it)
		}
		out[name] = src
	}
	*s = out
	return nil
}

// DecodeCC reads apt.debconf_selections: a map of strings (null is not
// one; no number read as its str()), the first that is not by name the
// error.
func (d *AptDebconf) DecodeCC(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, "a map", v)
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make(AptDebconf, len(m))
	for _, k := range names {
		s, ok := m[k].(string)
		if !ok {
			return wrongType(path+"."+k, "a string", m[k])
		}
		out[k] = s
	}
	*d = out
	return nil
}

// PackageMirrors is system_info.package_mirrors, read as cloud-init's
// distro reads the image's settings, without a check of its entries: an
// entry that is not a map is left out, and what an entry holds is read
// leniently (LooseStrings, MirrorURLs, MirrorSearch).
type PackageMirrors []PackageMirror

// DecodeCC reads the list; a value that is not a list is an error
// (SystemInfo.Err: apt_configure has no mirrors from it, with
// core.SystemInfo's warning).
func (l *PackageMirrors) DecodeCC(v any, path string) error {
	*l = nil
	list, ok := v.([]any)
	if !ok {
		return wrongType(path, "a list", v)
	}
	for i, it := range list {
		if _, ok := it.(map[string]any); !ok {
			continue
		}
		var m PackageMirror
		if err := decodeStruct(reflect.ValueOf(&m).Elem(), it, path+"."+strconv.Itoa(i)); err != nil {
			return err
		}
		*l = append(*l, m)
	}
	return nil
}

// LooseStrings is a list of strings read as PyList.Strings reads one, a
// value it cannot read being none (a package mirror's arches). Its
// schema takes any value.
type LooseStrings []string

// Schema takes any value.
func (LooseStrings) Schema() *Schema { return nil }

// DecodeCC never fails.
func (l *LooseStrings) DecodeCC(v any, path string) error {
	*l, _ = Strings(path, v, false)
	return nil
}

// MirrorURLs is a package mirror's failsafe: its mirrors by kind
// (primary, security, and any other key, a parameter of the sources
// templates too), each value's str(), null's too. A value that is not a
// map is none.
type MirrorURLs map[string]string

// Schema is MirrorsByKind's.
func (MirrorURLs) Schema() *Schema { return Of(reflect.TypeFor[MirrorsByKind]()) }

// DecodeCC never fails.
func (u *MirrorURLs) DecodeCC(v any, _ string) error {
	*u = nil
	if m, ok := v.(map[string]any); ok {
		*u = make(MirrorURLs, len(m))
		for k, x := range m {
			(*u)[k] = String(x)
		}
	}
	return nil
}

// MirrorSearch is a package mirror's search: templates of mirrors to try
// by kind (LooseStrings). A value that is not a map is none.
type MirrorSearch map[string]LooseStrings

// Schema is MirrorsByKind's.
func (MirrorSearch) Schema() *Schema { return Of(reflect.TypeFor[MirrorsByKind]()) }

// DecodeCC never fails.
func (s *MirrorSearch) DecodeCC(v any, path string) error {
	*s = nil
	if m, ok := v.(map[string]any); ok {
		*s = make(MirrorSearch, len(m))
		for k, x := range m {
			l, _ := Strings(path+"."+k, x, false)
			(*s)[k] = l
		}
	}
	return nil
}
