package provision

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/pkg/instance"
	"github.com/earlyinit/earlyinit/pkg/late"
	"github.com/earlyinit/earlyinit/pkg/nic"
)

// TestInstallRunnerLateBinary: with an installed earlyinit named (mode
// distro, where /run may be noexec), the units run it and init is exec'd
// as it is.
func TestInstallRunnerLateBinary(t *testing.T) {
	root, run := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(root, "lib/systemd"), 0o755)
	os.WriteFile(filepath.Join(root, "lib/systemd/systemd"), nil, 0o755)
	os.MkdirAll(filepath.Join(root, "sbin"), 0o755)
	os.Symlink("/lib/systemd/systemd", filepath.Join(root, "sbin/init"))
	log := &testLog{}
	env := Env{Root: root, RunRoot: run, Log: log, LateBinary: "/usr/bin/earlyinit"}
	path, argv := InstallRunner(env, "/sbin/init", []string{"splash"})
	if path != "/sbin/init" || len(argv) != 1 || argv[0] != "splash" {
		t.Errorf("InstallRunner = %s %q, want /sbin/init [splash]", path, argv)
	}
	unit, err := os.ReadFile(filepath.Join(run, late.SystemDir, "earlyinit-boot.service"))
	if err != nil {
		t.Fatalf("%v\nlog:\n%s", err, log)
	}
	if !strings.Contains(string(unit), "ExecStart=/usr/bin/earlyinit ") {
		t.Errorf("the boot unit does not run the installed binary:\n%s", unit)
	}
	if !strings.Contains(log.String(), "(running /usr/bin/earlyinit)") {
		t.Errorf("log:\n%s", log)
	}
}

// TestNetworkNoNIC: with no network config (the None source) and no NIC,
// the network step writes nothing and is no error.
func TestNetworkNoNIC(t *testing.T) {
	log := &testLog{}
	env := testEnv(t, log)
	env.Netlink = &fakeNL{links: []nic.Link{{Index: 1, Name: "lo", Kind: "loopback", Up: true}}}
	if _, err := networkStep(env, &instance.Data{InstanceID: "iid-datasource-none"}, true, nil); err != nil {
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
