package repos

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// repoIDRE is a repository id dnf, yum and zypper take: letters, digits
// and ._:- (after cloud-init turned spaces into - or _).
var repoIDRE = core.LazyRE{Expr: `^[A-Za-z0-9][A-Za-z0-9._:-]*$`}

// repoKeyRE is a repository option name once cloud-init lower-cased it and
// turned - into _.
var repoKeyRE = core.LazyRE{Expr: `^[a-z0-9_.]+$`}

// YumAddRepo is cc_yum_add_repo: each yum_repos entry becomes
// <yum_repo_dir>/<id>.repo (spaces in the id made -), an INI section of
// the entry's options (names lower-cased, - made _; true/false as 1/0,
// lists one item a line), unless the file exists. An entry with no
// baseurl, metalink or mirrorlist is skipped with a log line (cloud-init
// 22.4 wants baseurl; later versions take the other two). Everything is
// checked before anything is written: an id or option name that is not
// one, or a value with a newline (which would start a new option or
// section), fails the module naming the key. Unlike cloud-init, entries
// and options are written in sorted order (the YAML order is not kept),
// and the header says earlyinit.
func YumAddRepo(_ context.Context, e *core.Env) error {
	repos, _, err := ccfg.Decode[ccfg.YumRepos](e.Cfg, "yum_repos")
	if err != nil || len(repos) == 0 {
		return err
	}
	d, ok, err := ccfg.Decode[string](e.Cfg, "yum_repo_dir")
	if err != nil {
		return err
	}
	if !ok {
		d = "/etc/yum.repos.d/"
	}
	dir, err := checkDir("yum_repo_dir", d)
	if err != nil {
		return err
	}
	type repo struct{ id, file, text string }
	var todo []repo
	pending := map[string]bool{}
	for _, id := range slices.Sorted(maps.Keys(repos)) {
		canon := strings.ReplaceAll(id, " ", "-")
		key := "yum_repos." + id
		if !repoIDRE.Get().MatchString(canon) {
			return fmt.Errorf("%s: %q is not a repository id (letters, digits and ._:-)", key, id)
		}
		file := path.Join(dir, canon+".repo")
		if e.Root.Exists(file) {
			e.Logf("yum_add_repo: skipping repo %s, file %s already exists", id, file)
			continue
		}
		if pending[canon] {
			e.Logf("yum_add_repo: skipping repo %s, file %s already pending", id, file)
			continue
		}
		if err := repos[id].Err; err != nil {
			return err
		}
		opts, err := repoOptions(key, repos[id].Map, nil)
		if err != nil {
			return err
		}
		if opts["baseurl"] == nil && opts["metalink"] == nil && opts["mirrorlist"] == nil {
			e.Logf("yum_add_repo: repository %s has no baseurl: skipped", id)
			continue
		}
		var b strings.Builder
		fmt.Fprintf(&b, "# Created by earlyinit on %s\n[%s]\n", now(e).UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700"), canon)
		for _, k := range core.SortedKeys(opts) {
			v, err := repoValue(key+"."+k, opts[k], "\n")
			if err != nil {
				return err
			}
			// ConfigParser's continuation lines.
			fmt.Fprintf(&b, "%s = %s\n", k, strings.ReplaceAll(v, "\n", "\n\t"))
		}
		b.WriteString("\n")
		pending[canon] = true
		todo = append(todo, repo{id, file, b.String()})
	}
	for _, r := range todo {
		e.Logf("yum_add_repo: %s", r.file)
		if err := e.Root.WriteFile(r.file, []byte(r.text), 0o644, 0, 0); err != nil {
			return fmt.Errorf("yum_repos.%s: %w", r.id, err)
		}
	}
	return nil
}

func now(e *core.Env) time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

// checkDir checks the directory d a key names: absolute, no "..".
func checkDir(key, d string) (string, error) {
	if !path.IsAbs(d) || strings.Contains(d, "..") || strings.ContainsAny(d, "\x00\n\r") {
		return "", fmt.Errorf("%s: %q: want an absolute directory without ..", key, d)
	}
	return path.Clean(d), nil
}

// repoOptions is a repository entry's options (ccfg.FreeForm: as given),
// names as cloud-init normalises them (lower case, stripped, - as _;
// empty names dropped, and the names in drop), each name checked.
func repoOptions(key string, m map[string]any, drop map[string]bool) (map[string]any, error) {
	out := map[string]any{}
	for k, x := range m {
		if drop[k] {
			continue
		}
		n := strings.ReplaceAll(strings.TrimSpace(strings.ToLower(k)), "-", "_")
		if n == "" {
			continue
		}
		if !repoKeyRE.Get().MatchString(n) {
			return nil, fmt.Errorf("%s: %q is not an option name (letters, digits, _ and .)", key, k)
		}
		out[n] = x
	}
	return out, nil
}

// repoValue is cloud-init's _format_repo_value (yum and zypper alike): a
// boolean as 1 or 0, a list's items joined by sep (a newline for yum; a
// newline and four spaces, configobj's continuation, for zypper),
// anything else as Python's str() would give it. A newline in a value is
// refused.
func repoValue(key string, v any, sep string) (string, error) {
	switch t := v.(type) {
	case bool:
		if t {
			return "1", nil
		}
		return "0", nil
	case []any:
		items := make([]string, len(t))
		for i, x := range t {
			s, err := repoValue(fmt.Sprintf("%s.%d", key, i), x, sep)
			if err != nil {
				return "", err
			}
			items[i] = s
		}
		return strings.Join(items, sep), nil
	case map[string]any:
		return "", fmt.Errorf("%s: want a string, number, boolean or list, got a map", key)
	case nil:
		return "None", nil
	}
	s := ccfg.String(v)
	if strings.ContainsAny(s, "\n\r\x00") {
		return "", fmt.Errorf("%s: the value has a newline: a list gives several lines", key)
	}
	return s, nil
}
