package provision

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/httpget"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/nic"
	"github.com/earlyinit/earlyinit/internal/rootfs"
)

// TestInstallRunner: the late stages run the root's installed earlyinit
// when it is an executable there (symlinks resolved inside the root), as
// units under systemd or through `late --exec` otherwise; without it, a
// copy of the running binary in /run/earlyinit.
func TestInstallRunner(t *testing.T) {
	for _, tc := range []struct {
		name      string
		init      string            // the real init
		installed func(root string) // makes the root's /usr/bin/earlyinit
		wantBin   string
		wantPath  string // what switch_root execs; "" means init
	}{
		{"systemd, installed", "/sbin/init", func(root string) {
			os.WriteFile(filepath.Join(root, "usr/bin/earlyinit"), []byte("#!"), 0o755)
		}, "/usr/bin/earlyinit", ""},
		{"systemd, installed through a link", "/sbin/init", func(root string) {
			os.MkdirAll(filepath.Join(root, "usr/lib/earlyinit"), 0o755)
			os.WriteFile(filepath.Join(root, "usr/lib/earlyinit/real"), []byte("#!"), 0o755)
			os.Symlink("/usr/lib/earlyinit/real", filepath.Join(root, "usr/bin/earlyinit"))
		}, "/usr/bin/earlyinit", ""},
		{"systemd, not installed", "/sbin/init", func(string) {}, "/run/earlyinit/earlyinit", ""},
		{"systemd, not executable", "/sbin/init", func(root string) {
			os.WriteFile(filepath.Join(root, "usr/bin/earlyinit"), []byte("#!"), 0o644)
		}, "/run/earlyinit/earlyinit", ""},
		{"systemd, a link out of the root", "/sbin/init", func(root string) {
			os.Symlink("/proc/self/exe", filepath.Join(root, "usr/bin/earlyinit"))
		}, "/run/earlyinit/earlyinit", ""},
		{"no systemd, installed", "/sbin/openrc-init", func(root string) {
			os.WriteFile(filepath.Join(root, "usr/bin/earlyinit"), []byte("#!"), 0o755)
		}, "/usr/bin/earlyinit", "/usr/bin/earlyinit"},
		{"no systemd, not installed", "/sbin/openrc-init", func(string) {}, "/run/earlyinit/earlyinit", "/run/earlyinit/earlyinit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, run := t.TempDir(), t.TempDir()
			for _, d := range []string{"lib/systemd", "sbin", "usr/bin"} {
				os.MkdirAll(filepath.Join(root, d), 0o755)
			}
			os.WriteFile(filepath.Join(root, "lib/systemd/systemd"), nil, 0o755)
			os.Symlink("/lib/systemd/systemd", filepath.Join(root, "sbin/init"))
			os.WriteFile(filepath.Join(root, "sbin/openrc-init"), nil, 0o755)
			tc.installed(root)
			log := &testLog{}
			env := Env{Root: root, RunRoot: run, Log: log}
			path, argv := InstallRunner(env, tc.init, []string{"splash"})
			if !LateRunner && tc.wantBin != "/usr/bin/earlyinit" {
				// The package's initramfs build (tags initrd,nolate) has
				// no runner to copy: no late stages, said so, and init
				// as it is.
				if path != tc.init || !slices.Equal(argv, []string{"splash"}) {
					t.Errorf("InstallRunner = %s %q, want %s [splash]", path, argv, tc.init)
				}
				if _, err := os.Stat(filepath.Join(run, late.SystemDir, "earlyinit-boot.service")); err == nil {
					t.Errorf("units written without a runner")
				}
				if steps := strings.Join(log.steps, "\n"); !strings.Contains(steps, "has no late-stage runner: user-data is not applied this boot") {
					t.Errorf("the runner step's error: %s", steps)
				}
				return
			}
			copied := filepath.Join(run, "run/earlyinit/earlyinit")
			_, err := os.Stat(copied)
			if copiedWant := tc.wantBin == "/run/earlyinit/earlyinit"; (err == nil) != copiedWant {
				t.Errorf("the running binary copied to %s: %v, want %v", copied, err == nil, copiedWant)
			}
			if tc.wantPath == "" {
				if path != tc.init || !slices.Equal(argv, []string{"splash"}) {
					t.Errorf("InstallRunner = %s %q, want %s [splash]", path, argv, tc.init)
				}
				unit, err := os.ReadFile(filepath.Join(run, late.SystemDir, "earlyinit-boot.service"))
				if err != nil {
					t.Fatalf("%v\nlog:\n%s", err, log)
				}
				if !strings.Contains(string(unit), "ExecStart="+tc.wantBin+" ") {
					t.Errorf("the boot unit does not run %s:\n%s", tc.wantBin, unit)
				}
				if !strings.Contains(log.String(), "(running "+tc.wantBin+")") {
					t.Errorf("log:\n%s", log)
				}
			} else if want := []string{"late", "--exec", tc.init, "--", "splash"}; path != tc.wantPath || !slices.Equal(argv, want) {
				t.Errorf("InstallRunner = %s %q, want %s %q", path, argv, tc.wantPath, want)
			}
			// The initramfs build (tag initrd) says when https is lost.
			noTLS := "without TLS, and the root has no /usr/bin/earlyinit"
			if want := !httpget.TLS && tc.wantBin != "/usr/bin/earlyinit"; strings.Contains(log.String(), noTLS) != want {
				t.Errorf("log says %q: %v, want %v:\n%s", noTLS, !want, want, log)
			}
		})
	}
}

// TestNetworkNoNIC: with no network config (the None source) and no NIC,
// the network step writes nothing and is no error.
func TestNetworkNoNIC(t *testing.T) {
	log := &testLog{}
	env := testEnv(t, log)
	env.Netlink = &fakeNL{links: []nic.Link{{Index: 1, Name: "lo", Kind: "loopback", Up: true}}}
	root, err := rootfs.Open(env.Root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := networkStep(env, root, &instance.Data{InstanceID: "iid-datasource-none"}, true, nil); err != nil {
		t.Errorf("networkStep = %v\n%s", err, log)
	}
	if !strings.Contains(log.String(), "network: no network config and no NIC: nothing written") {
		t.Errorf("log:\n%s", log)
	}
}

// TestRunBadHostname: a host name /etc/hostname cannot take (Vultr's
// "CLOUDINIT_2") is one error line; the instance is stored and its
// network still written.
func TestRunBadHostname(t *testing.T) {
	log := &testLog{}
	env := testEnv(t, log)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "openstack/latest"), 0o755)
	os.WriteFile(filepath.Join(dir, "openstack/latest/meta_data.json"), []byte(`{"uuid": "iid-bad-host", "hostname": "CLOUDINIT_2"}`), 0o644)
	env.System = driveSys{dir}
	res := Run(env)
	if !res.Instance {
		t.Fatalf("no instance:\n%s", log)
	}
	if !strings.Contains(log.String(), `E instance "iid-bad-host": local-hostname "CLOUDINIT_2": invalid character '_'; the rest of the instance is applied`) {
		t.Errorf("log:\n%s", log)
	}
	if !strings.Contains(log.String(), "network:") {
		t.Errorf("the network step did not run:\n%s", log)
	}
}
