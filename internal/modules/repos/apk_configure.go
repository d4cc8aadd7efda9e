package repos

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
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
	// Decode fails only on a value that is not a map and is true as
	// Python takes it: an error past the distribution's check.
	sec, _, err := ccfg.Decode[*ccfg.APKRepos](e.Cfg, "apk_repos")
	if err == nil && !sec.Given() {
		return nil
	}
	if fam := e.DistroInfo().Family; fam != core.FamilyAlpine {
		e.Logf("apk_configure: the root is not Alpine (%s family): apk_repos ignored", fam)
		return nil
	}
	if err != nil {
		return err
	}
	if sec.PreserveRepositories {
		e.Logf("apk_configure: apk_repos.preserve_repositories is set: %s kept", apkReposFile)
		return nil
	}
	repo := sec.AlpineRepo
	if !repo.Given() {
		e.Logf("apk_configure: no apk_repos.alpine_repo: %s kept", apkReposFile)
		return nil
	}
	if repo.Err != nil {
		return repo.Err
	}
	if !repo.Version.Truthy() {
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
func renderAPKRepos(sec *ccfg.APKRepos, repo *ccfg.AlpineRepo) (string, error) {
	version, err := repo.Version.Text("")
	if err != nil {
		return "", err
	}
	if err := checkAPKWord("apk_repos.alpine_repo.version", version); err != nil {
		return "", err
	}
	base, err := repo.BaseURL.Text(apkDefaultMirror)
	if err != nil {
		return "", err
	}
	if err := checkAPKURL("apk_repos.alpine_repo.base_url", base); err != nil {
		return "", err
	}
	local, err := sec.LocalRepoBaseURL.Text("")
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
	if repo.CommunityEnabled {
		b.WriteString(base + "/" + version + "/community\n")
	}
	if repo.TestingEnabled {
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
