package provision

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/late"
	"github.com/earlyinit/earlyinit/internal/paths"
)

// vmwareSys is a VMware VM where no source answers.
type vmwareSys struct{ noSourceSys }

func (vmwareSys) DMI() (dmi.Info, error) {
	return dmi.Info{SysVendor: "VMware, Inc.", ProductName: "VMware7,1"}, nil
}

// TestRunDefersToCustomization: on a VMware VM's first boot whose image
// allows a guest customization and has VMware Tools' deployPkg plugin,
// the initramfs, which cannot see the package yet, stores no instance (not
// even None): it leaves the boot stage a wait marker and orders that stage
// after VMware Tools. The boot stage, when nothing came in time, stores
// what the initramfs would have (None here). A root that already has an
// instance, or a VM that is not VMware's, is not waited for.
func TestRunDefersToCustomization(t *testing.T) {
	image := func(root string) {
		writeIn(t, root, "etc/cloud/cloud.cfg.d/90.cfg", []byte("datasource_list: [NoCloud, None]\ndisable_vmware_customization: false\ndatasource: {OVF: {vmware_cust_file_max_wait: 0}}\n"))
		writeIn(t, root, "usr/lib/open-vm-tools/plugins/vmsvc/libdeployPkgPlugin.so", nil)
	}
	log := &testLog{}
	env := testEnv(t, log)
	image(env.Root)
	env.System = vmwareSys{}
	res := Run(env)
	if !res.Instance {
		t.Errorf("no late stages for the customization to come:\n%s", log.String())
	}
	if !strings.Contains(log.String(), "the boot stage waits up to 0s") {
		t.Errorf("the wait is not said:\n%s", log.String())
	}
	if _, err := os.Stat(filepath.Join(env.Root, paths.DataDir, "instance-id")); err == nil {
		t.Errorf("an instance was stored before the customization could come")
	}
	if b, err := os.ReadFile(filepath.Join(env.RunRoot, IMCWaitFile)); err != nil || string(b) != "0 none\n" {
		t.Errorf("%s = %q, %v\n%s", IMCWaitFile, b, err, log.String())
	}
	drop := late.VMwareToolsDropIn()
	if b, err := os.ReadFile(filepath.Join(env.RunRoot, drop.Path)); err != nil || !strings.Contains(string(b), "After=vmtoolsd.service open-vm-tools.service\n") {
		t.Errorf("%s = %q, %v", drop.Path, b, err)
	}

	// The boot stage: nothing came within 0 s: None, as the initramfs
	// would have stored.
	log2 := &testLog{}
	env.Log, env.Netlink = log2, newNL()
	waited, ok := AwaitCustomization(context.Background(), env)
	if !waited || !ok {
		t.Fatalf("AwaitCustomization = %v, %v:\n%s", waited, ok, log2.String())
	}
	if b, err := os.ReadFile(filepath.Join(env.Root, paths.DataDir, "instance-id")); err != nil || string(b) != "iid-datasource-none\n" {
		t.Errorf("instance-id after the wait: %q, %v\n%s", b, err, log2.String())
	}
	if _, err := os.Stat(filepath.Join(env.RunRoot, IMCWaitFile)); err == nil {
		t.Errorf("the wait marker is still there")
	}
	if strings.Contains(log2.String(), "grow:") || strings.Contains(strings.Join(log2.steps, " "), "grow") {
		t.Errorf("the running system's root was grown again: %v", log2.steps)
	}
	// Without the marker: no wait.
	if waited, _ := AwaitCustomization(context.Background(), env); waited {
		t.Errorf("waited without a marker")
	}

	// A later boot (an instance cached) or another platform: no wait.
	log3 := &testLog{}
	env.Log, env.Netlink = log3, newNL()
	Run(env)
	if _, err := os.Stat(filepath.Join(env.RunRoot, IMCWaitFile)); err == nil {
		t.Errorf("waited on a root with an instance:\n%s", log3.String())
	}
	log4 := &testLog{}
	env4 := testEnv(t, log4)
	image(env4.Root)
	env4.System = noSourceSys{}
	Run(env4)
	if _, err := os.Stat(filepath.Join(env4.RunRoot, IMCWaitFile)); err == nil {
		t.Errorf("waited on a VM that is not VMware's:\n%s", log4.String())
	}
}
