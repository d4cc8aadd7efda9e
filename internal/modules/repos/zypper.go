package repos

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// zyppConf is libzypp's configuration file.
const zyppConf = "/etc/zypp/zypp.conf"

var zyppKeyRE = core.LazyRE{Expr: `^[A-Za-z0-9_.]+$`}

// ZypperAddRepo is cc_zypper_add_repo (run at every boot, as cloud-init):
// with zypper.repos set, zypper.config's settings are added to
// /etc/zypp/zypp.conf under "# Added via cloud.cfg" (configdir refused,
// false or empty values dropped; not added again when the file already
// ends with the same block, where cloud-init would append it at every
// boot), and each repository with an id and a baseurl becomes
// <reposdir>/<id>.repo (spaces in the id made _) unless the file exists,
// with enabled and autorefresh 1 unless given, values quoted as
// cloud-init's configobj writes them. Ids, option names and values are
// checked (no newline) before anything is written. Repositories and
// options are in sorted order, not the YAML order.
func ZypperAddRepo(_ context.Context, e *core.Env) error {
	z, ok, err := ccfg.Decode[*ccfg.Zypper](e.Cfg, "zypper")
	if err != nil || !ok || len(z.Repos) == 0 {
		return err
	}
	// zypp.conf's settings, as given: cloud-init writes them as they
	// come, reposdir among them.
	if err := z.Config.Err; err != nil {
		return err
	}
	conf := z.Config.Map
	d := "/etc/zypp/repos.d/"
	if v := conf["reposdir"]; v != nil {
		d = ccfg.String(v)
	}
	dir, err := checkDir("reposdir", d)
	if err != nil {
		return fmt.Errorf("zypper.config.%w", err)
	}
	block, err := zyppSettings(e, conf)
	if err != nil {
		return err
	}
	todo, err := zyppRepos(e, z.Repos, dir)
	if err != nil {
		return err
	}
	if block != "" {
		old, err := e.Root.ReadFile(zyppConf)
		if err != nil {
			return fmt.Errorf("zypper.config: %s: %w", zyppConf, err)
		}
		if strings.HasSuffix(string(old), block) {
			e.Logf("zypper_add_repo: %s already has the settings", zyppConf)
		} else if err := e.Root.WriteFile(zyppConf, append(old, block...), 0o644, 0, 0); err != nil {
			return err
		}
	}
	for _, r := range todo {
		e.Logf("zypper_add_repo: %s", r.file)
		if err := e.Root.WriteFile(r.file, []byte(r.text), 0o644, 0, 0); err != nil {
			return fmt.Errorf("zypper repo %s: %w", r.id, err)
		}
	}
	return nil
}

// zyppRepo is a .repo file to write.
type zyppRepo struct{ id, file, text string }

// zyppRepos are the .repo files in dir for zypper.repos' entries, but
// those without id or baseurl and those whose file exists or is pending.
func zyppRepos(e *core.Env, repos []ccfg.FreeForm[ccfg.ZypperRepo], dir string) ([]zyppRepo, error) {
	var todo []zyppRepo
	seen := map[string]bool{}
	for i, it := range repos {
		key := fmt.Sprintf("zypper.repos.%d", i)
		if it.Err != nil {
			return nil, it.Err
		}
		// An entry is the .repo file's options as given (id, the
		// section's name, among them).
		r := it.Map
		if r["id"] == nil || r["baseurl"] == nil {
			e.Logf("zypper_add_repo: %s is missing id or baseurl: skipped", key)
			continue
		}
		id := ccfg.String(r["id"])
		canon := strings.ReplaceAll(id, " ", "_")
		if !repoIDRE.Get().MatchString(canon) {
			return nil, fmt.Errorf("%s.id: %q is not a repository id (letters, digits and ._:-)", key, id)
		}
		file := path.Join(dir, canon+".repo")
		if e.Root.Exists(file) {
			e.Logf("zypper_add_repo: skipping repo %s, file %s already exists", id, file)
			continue
		}
		if seen[id] {
			e.Logf("zypper_add_repo: skipping repo %s, file %s already pending", id, file)
			continue
		}
		text, err := zyppRepoText(key, id, r)
		if err != nil {
			return nil, err
		}
		seen[id] = true
		todo = append(todo, zyppRepo{id, file, text})
	}
	return todo, nil
}

// zyppRepoText is repository r's .repo file (zypper.repos entry key):
// section id, its options sorted, enabled and autorefresh 1 unless given.
func zyppRepoText(key, id string, r map[string]any) (string, error) {
	opts, err := repoOptions(key, r, map[string]bool{"id": true})
	if err != nil {
		return "", err
	}
	for _, f := range []string{"enabled", "autorefresh"} {
		if _, ok := opts[f]; !ok {
			opts[f] = "1"
		}
	}
	lines := []string{"[" + id + "]"}
	for _, k := range core.SortedKeys(opts) {
		s, err := repoValue(key+"."+k, opts[k], "\n    ")
		if err != nil {
			return "", err
		}
		lines = append(lines, k+" = "+configobjQuote(s))
	}
	return strings.Join(lines, "\n"), nil
}

// zyppSettings is the block cloud-init appends to zypp.conf for config,
// "" when there is nothing to add.
func zyppSettings(e *core.Env, conf map[string]any) (string, error) {
	lines := []string{"# Added via cloud.cfg"}
	for _, k := range core.SortedKeys(conf) {
		v := conf[k]
		if k == "configdir" {
			e.Logf("zypper_add_repo: changing the location of the zypper configuration is not supported, skipping \"configdir\" setting")
			continue
		}
		if !scalar.Truthy(v) {
			continue
		}
		if !zyppKeyRE.Get().MatchString(k) {
			return "", fmt.Errorf("zypper.config: %q is not a setting name (letters, digits, _ and .)", k)
		}
		switch v.(type) {
		case map[string]any, []any:
			return "", fmt.Errorf("zypper.config.%s: want a string, number or boolean, got %s", k, core.Kind(v))
		}
		s := ccfg.String(v)
		if strings.ContainsAny(s, "\n\r\x00") {
			return "", fmt.Errorf("zypper.config.%s: the value has a newline", k)
		}
		lines = append(lines, k+"="+s)
	}
	if len(lines) == 1 {
		return "", nil
	}
	return strings.Join(lines, "\n"), nil
}

// configobjQuote quotes a value as configobj's ConfigObj._quote does when
// writing: empty as "", a value with a newline, or with both quote
// characters, in triple quotes; one starting or ending with a blank or a
// quote, or with a comma or #, in the quote it does not contain.
func configobjQuote(v string) string {
	if v == "" {
		return `""`
	}
	const wspacePlus = " \r\n\v\t'\""
	hasSQ, hasDQ := strings.Contains(v, "'"), strings.Contains(v, `"`)
	needTriple := hasSQ && hasDQ || strings.Contains(v, "\n")
	single := func() string {
		if hasDQ {
			return "'" + v + "'"
		}
		return `"` + v + `"`
	}
	if needTriple {
		if !strings.Contains(v, `"""`) {
			return "'''" + v + "'''"
		}
		return `"""` + v + `"""`
	}
	if strings.ContainsRune(wspacePlus, rune(v[0])) || strings.ContainsRune(wspacePlus, rune(v[len(v)-1])) || strings.Contains(v, ",") || strings.Contains(v, "#") {
		return single()
	}
	return v
}
