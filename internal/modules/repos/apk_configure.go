package repos

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/scalar"
)

// apkDefaultMirror is cloud-init's DEFAULT_MIRROR for apk_repos.
const apkDefaultMirror = "https://alpine.global.ssl.fastly.net/alpine"

// apkReposFile is Alpine's repository list.
const apkReposFile = "/etc/apk/repositories"

// ApkConfigure is cc_apk_configure, per instance, on Alpine only:
// apk_repos.alpine_repo (version required; base_url, default cloud-init's
// fastly mirror; community_enabled, testing_enabled) and
// apk_repos.local_repo_base_url make /etc/apk/repositories as cloud-init's
// template renders it (0644). Nothing is done without apk_repos,
// alpine_repo or its version, nor with preserve_repositories true. Every
// value is checked first (URLs: http, https or ftp, or an absolute path;
// no blank nor control character; a version without them either):
// nothing is written when one is wrong.
func ApkConfigure(_ context.Context, e *core.Env) error {
	raw := e.Cfg["apk_repos"]
	if !scalar.Truthy(raw) {
		return nil
	}
	if fam := e.DistroInfo().Family; fam != core.FamilyAlpine {
		e.Logf("apk_configure: the root is not Alpine (%s family): apk_repos ignored", fam)
		return nil
	}
	sec, ok := raw.(map[string]any)
	if !ok {
		return fmt.Errorf("apk_repos: want a map, got %s", core.Kind(raw))
	}
	if core.CfgBool(sec, "preserve_repositories", false) {
		e.Logf("apk_configure: apk_repos.preserve_repositories is set: %s kept", apkReposFile)
		return nil
	}
	ar := sec["alpine_repo"]
	if !scalar.Truthy(ar) {
		e.Logf("apk_configure: no apk_repos.alpine_repo: %s kept", apkReposFile)
		return nil
	}
	repo, ok := ar.(map[string]any)
	if !ok {
		return fmt.Errorf("apk_repos.alpine_repo: want a map, got %s", core.Kind(ar))
	}
	if !scalar.Truthy(repo["version"]) {
		e.Logf("apk_configure: no apk_repos.alpine_repo.version: %s kept", apkReposFile)
		return nil
	}
	text, err := renderAPKRepos(sec, repo)
	if err != nil {
		return err
	}
	e.Logf("apk_configure: writing %s", apkReposFile)
	if err := e.Root.WriteFile(apkReposFile, []byte(text), 0o644, 0, 0); err != nil {
		return fmt.Errorf("apk_configure: %w", err)
	}
	return nil
}

// renderAPKRepos is cloud-init's REPOSITORIES_TEMPLATE rendered by jinja
// (trim_blocks) for apk_repos sec and its alpine_repo repo.
func renderAPKRepos(sec, repo map[string]any) (string, error) {
	version, err := apkValue(repo, "version", "apk_repos.alpine_repo.version", "")
	if err != nil {
		return "", err
	}
	if err := checkAPKWord("apk_repos.alpine_repo.version", version); err != nil {
		return "", err
	}
	base, err := apkValue(repo, "base_url", "apk_repos.alpine_repo.base_url", apkDefaultMirror)
	if err != nil {
		return "", err
	}
	if err := checkAPKURL("apk_repos.alpine_repo.base_url", base); err != nil {
		return "", err
	}
	local, err := apkValue(sec, "local_repo_base_url", "apk_repos.local_repo_base_url", "")
	if err != nil {
		return "", err
	}
	if local != "" {
		if err := checkAPKURL("apk_repos.local_repo_base_url", local); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	b.WriteString("#\n# Created by cloud-init\n#\n# This file is written on first boot of an instance\n#\n\n")
	b.WriteString(base + "/" + version + "/main\n")
	if scalar.Truthy(repo["community_enabled"]) {
		b.WriteString(base + "/" + version + "/community\n")
	}
	if scalar.Truthy(repo["testing_enabled"]) {
		if version != "edge" {
			b.WriteString("#\n# Testing - using with non-Edge installation may cause problems!\n#\n")
		}
		b.WriteString(base + "/edge/testing\n")
	}
	if local != "" {
		b.WriteString("\n#\n# Local repo\n#\n" + local + "/" + version + "\n")
	}
	b.WriteString("\n")
	return b.String(), nil
}

// apkValue is m[key] as jinja prints it: a string, or a number's decimal
// text (version: 3.12 unquoted); def when missing.
func apkValue(m map[string]any, key, name, def string) (string, error) {
	v, ok := m[key]
	if !ok {
		return def, nil
	}
	switch t := v.(type) {
	case string, int:
		return core.ScalarString(v), nil
	case float64:
		if t == math.Trunc(t) && math.Abs(t) < 1e16 {
			return strconv.FormatFloat(t, 'f', 1, 64), nil // Python's str(3.0)
		}
		return strconv.FormatFloat(t, 'g', -1, 64), nil
	}
	return "", fmt.Errorf("%s: want a string, got %s", name, core.Kind(v))
}

// checkAPKWord refuses what would break the repositories file's lines:
// blanks and control characters.
func checkAPKWord(name, s string) error {
	if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return fmt.Errorf("%s: %q has a blank or control character", name, s)
	}
	return nil
}

// checkAPKURL accepts a repository base: an http, https or ftp URL or an
// absolute path, as one word.
func checkAPKURL(name, s string) error {
	if err := checkAPKWord(name, s); err != nil {
		return err
	}
	lower := strings.ToLower(s)
	for _, p := range []string{"http://", "https://", "ftp://"} {
		if strings.HasPrefix(lower, p) && len(s) > len(p) {
			return nil
		}
	}
	if strings.HasPrefix(s, "/") {
		return nil
	}
	return fmt.Errorf("%s: %q is not an http, https or ftp URL nor an absolute path", name, s)
}
