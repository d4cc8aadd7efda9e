package repos

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

const aptGet = "apt-get --option=Dpkg::Options::=--force-confold --option=Dpkg::options::=--force-unsafe-io --assume-yes --quiet"

// TestPackagesCommands: per package manager found in the root, the
// commands, argv exactly (TestPackagesAsCloudInit holds them to
// cloud-init's own distribution classes).
func TestPackagesCommands(t *testing.T) {
	const cfg = "package_update: true\npackage_upgrade: true\npackages: [pwgen, [libfoo, 1.2-3]]\n"
	for _, tc := range []struct {
		name  string
		tools []string
		cfg   string
		want  []string
	}{
		{"apt", []string{"/usr/bin/apt-get"}, cfg, []string{aptGet + " update", aptGet + " dist-upgrade", aptGet + " install pwgen libfoo=1.2-3"}},
		{"apt eatmydata", []string{"/usr/bin/apt-get", "/usr/bin/eatmydata"}, "packages: [pwgen]", []string{"eatmydata " + aptGet + " update", "eatmydata " + aptGet + " install pwgen"}},
		{"apt system_info", []string{"/usr/bin/apt-get", "/usr/bin/eatmydata"}, "packages: [a]\npackage_upgrade: true\nsystem_info: {apt_get_wrapper: {enabled: false}, apt_get_command: [apt-get, -y], apt_get_upgrade_subcommand: upgrade}", []string{"apt-get -y update", "apt-get -y upgrade", "apt-get -y install a"}},
		{"dnf", []string{"/usr/bin/dnf", "/usr/bin/yum"}, cfg, []string{"dnf -y makecache", "dnf -y upgrade", "dnf -y install pwgen libfoo-1.2-3"}},
		{"yum", []string{"/usr/bin/yum"}, cfg, []string{"yum -t -y makecache", "yum -t -y upgrade", "yum -t -y install pwgen libfoo-1.2-3"}},
		{"zypper", []string{"/usr/bin/zypper"}, cfg, []string{"zypper --non-interactive refresh", "zypper --non-interactive update", "zypper --non-interactive install --auto-agree-with-licenses pwgen libfoo-1.2-3"}},
		{"apk", []string{"/sbin/apk"}, cfg, []string{"apk --quiet update", "apk --quiet upgrade --update-cache --available", "apk --quiet add pwgen libfoo=1.2-3"}},
		{"update only", []string{"/usr/bin/apt-get"}, "apt_update: true", []string{aptGet + " update"}},
		{"nothing", []string{"/usr/bin/apt-get"}, "package_reboot_if_required: true\npackages: []", nil},
		{"single string", []string{"/usr/bin/dnf"}, "packages: htop", []string{"dnf -y makecache", "dnf -y install htop"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := coretest.NewEnv(t, tc.cfg)
			for _, p := range tc.tools {
				te.Write(p, "", 0o755)
			}
			if err := PackageUpdateUpgradeInstall(context.Background(), te.Env); err != nil {
				t.Fatal(err)
			}
			if got := te.Calls(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("commands:\n got %q\nwant %q", got, tc.want)
			}
			for _, c := range te.Fake.Calls {
				if tc.name == "apt" && !reflect.DeepEqual(c.Env, []string{"DEBIAN_FRONTEND=noninteractive"}) {
					t.Errorf("%s: env %q", c, c.Env)
				}
			}
		})
	}
}

// TestPackagesHostile: option injection, files, URLs and several words
// are refused naming the entry, before anything runs.
func TestPackagesHostile(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{"packages: [ok, -oAPT::Update::Pre-Invoke::=touch/tmp/x]", "packages.1"},
		{"packages: [--reinstall]", "packages.0"},
		{"packages: ['a b']", "packages.0"},
		{"packages: [./evil.deb]", "packages.0"},
		{"packages: [/tmp/evil.rpm]", "packages.0"},
		{"packages: ['http://x/evil.rpm']", "packages.0"},
		{"packages: [[foo, -1]]", "packages.0"},
		{"packages: [[foo, '1 2']]", "packages.0"},
		{"packages: [[a, b, c]]", "packages.0"},
		{"packages: [\"a\\nb\"]", "packages.0"},
		{"packages: {apt: [a]}", "per-manager form"},
		{"packages: [{a: 1}]", "packages.0"},
	} {
		te := coretest.NewEnv(t, tc.cfg+"\npackage_update: true")
		te.Write("/usr/bin/apt-get", "", 0o755)
		err := PackageUpdateUpgradeInstall(context.Background(), te.Env)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %s", tc.cfg, err, tc.want)
		}
		te.WantCalls()
	}
	te := coretest.NewEnv(t, "packages: [a]")
	if err := PackageUpdateUpgradeInstall(context.Background(), te.Env); err == nil || !strings.Contains(err.Error(), "no package manager") {
		t.Errorf("no manager: %v", err)
	}
}

// TestPackagesFailure: no reachable mirror. apt-get update failing, or
// exiting 0 with "Failed to fetch" warnings, is a failure naming the
// command, its status and apt's line; the install is still tried, and the
// refresh is not marked done.
func TestPackagesFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  string
		err  error
		want []string
	}{
		{"exit", "Err:1 http://deb.example bookworm InRelease\nE: The repository 'http://deb.example bookworm Release' does not have a Release file.\n", coretest.ExitErr(100),
			[]string{"package update failed", "apt-get", " update: exit status 100", "E: The repository"}},
		{"warnings", "Err:1 http://deb.example bookworm InRelease\n  Could not connect\nW: Failed to fetch http://deb.example/dists/bookworm/InRelease  Could not connect\nW: Some index files failed to download.\n", nil,
			[]string{"package update failed", "W: Failed to fetch http://deb.example"}},
	} {
		te := coretest.NewEnv(t, "package_update: true\npackages: [pwgen]")
		te.Write("/usr/bin/apt-get", "", 0o755)
		te.Fake.Handlers["apt-get"] = func(c core.Cmd) ([]byte, error) {
			if c.Args[len(c.Args)-1] == "update" {
				io.WriteString(c.Output, tc.out)
				return nil, tc.err
			}
			io.WriteString(c.Output, "E: Unable to locate package pwgen\n")
			return nil, coretest.ExitErr(100)
		}
		err := PackageUpdateUpgradeInstall(context.Background(), te.Env)
		if err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
		for _, w := range append(tc.want, "failed to install packages [pwgen]", "E: Unable to locate package pwgen") {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", tc.name, err, w)
			}
		}
		if te.Root.Exists(te.UpdateSourcesSem()) {
			t.Errorf("%s: failed refresh marked done", tc.name)
		}
		if len(te.Calls()) != 2 || !strings.Contains(te.OutBuf.String(), "Failed") && tc.err == nil {
			t.Errorf("%s: calls %q, output %q", tc.name, te.Calls(), te.OutBuf.String())
		}
	}
}

// TestPackagesUpdateOnce: the refresh is done once per instance, shared
// with apt_configure.
func TestPackagesUpdateOnce(t *testing.T) {
	te := coretest.NewEnv(t, "package_update: true\npackages: [a]")
	te.Write("/usr/bin/dnf", "", 0o755)
	for i := 0; i < 2; i++ {
		if err := PackageUpdateUpgradeInstall(context.Background(), te.Env); err != nil {
			t.Fatal(err)
		}
	}
	te.WantCalls("dnf -y makecache", "dnf -y install a", "dnf -y install a")
}

// TestPackagesReboot: package_reboot_if_required asks the runner for a
// reboot when the reboot file is there (Debian) or needs-restarting -r
// exits 1 (RHEL), after an install or upgrade only.
func TestPackagesReboot(t *testing.T) {
	te := coretest.NewEnv(t, "package_reboot_if_required: true\npackages: [a]")
	te.Write("/usr/bin/apt-get", "", 0o755)
	te.Write("/var/run/reboot-required", "*** System restart required ***\n", 0o644)
	err := PackageUpdateUpgradeInstall(context.Background(), te.Env)
	var inc *core.Incomplete
	if !errors.As(err, &inc) || !inc.Reboot || inc.Rerun || inc.Err != nil {
		t.Errorf("reboot file: %v", err)
	}

	te = coretest.NewEnv(t, "package_reboot_if_required: true\npackage_update: true")
	te.Write("/usr/bin/apt-get", "", 0o755)
	te.Write("/var/run/reboot-required", "", 0o644)
	if err := PackageUpdateUpgradeInstall(context.Background(), te.Env); err != nil {
		t.Errorf("update only: %v", err)
	}

	for _, tc := range []struct {
		exit   error
		reboot bool
	}{{coretest.ExitErr(1), true}, {nil, false}} {
		te = coretest.NewEnv(t, "package_reboot_if_required: true\npackage_upgrade: true")
		te.Write("/usr/bin/dnf", "", 0o755)
		te.Write("/usr/bin/needs-restarting", "", 0o755)
		te.Fake.Handlers["needs-restarting"] = func(core.Cmd) ([]byte, error) { return nil, tc.exit }
		err := PackageUpdateUpgradeInstall(context.Background(), te.Env)
		if got := errors.As(err, &inc) && inc.Reboot; got != tc.reboot {
			t.Errorf("needs-restarting %v: %v", tc.exit, err)
		}
		te.WantCalls("dnf -y makecache", "dnf -y upgrade", "needs-restarting -r")
	}
}
