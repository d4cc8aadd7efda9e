//go:build qemu

package qemutests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/earlyinit/earlyinit/internal/vm"
)

// imcToolsUnit stands in for VMware Tools' daemon as a vSphere first boot
// sees it: it starts with the system (DefaultDependencies=no, before
// cloud-init-local.service, as vmtoolsd.service) and its deployPkg plugin
// delivers the customization package into /run/vmware-imc some seconds
// later, long after the initramfs.
const imcToolsUnit = `[Unit]
Description=stand-in for VMware Tools: deployPkg delivers the customization package
DefaultDependencies=no
Before=cloud-init-local.service
After=systemd-remount-fs.service systemd-tmpfiles-setup.service

[Service]
ExecStart=/bin/sh -c 'sleep 3; mkdir -p /run/vmware-imc; cp /var/lib/imc-staged/* /run/vmware-imc/; echo IMC-DELIVERED > /dev/console; exec sleep infinity'

[Install]
WantedBy=multi-user.target
`

const imcRecordScript = `#!/bin/sh
exec > /var/log/e2e-record.log 2>&1
echo "multi-user.target: $(systemctl is-active multi-user.target)"
echo "hostname: $(hostname)"
ip -o -4 addr show
timeout 120 /run/earlyinit/earlyinit status --wait --format json > /var/log/e2e-status.json
echo "status exit: $?"
sync
echo "E2E-RECORDED" > /dev/console
systemctl poweroff --no-block
`

// TestVMwareCustomizationAfterBoot is a vSphere guest customization as a
// real first boot gets it: nothing in the root when the initramfs looks
// (VMware Tools are not running yet), the package delivered by the tools'
// daemon once systemd starts it. The initramfs leaves the instance to the
// boot stage and orders it after VMware Tools; the boot stage waits for
// cust.cfg (datasource.OVF vmware_cust_file_max_wait, 15 s), then
// provisions the running system before network-pre.target: the host name,
// the static NIC by MAC that networkd brings up, the report to vCenter,
// and the late stages for the new instance.
func TestVMwareCustomizationAfterBoot(t *testing.T) {
	parallel(t, time.Minute)
	const mac = "00:50:56:aa:bb:08"
	cust := custCfg("imc-live", mac, "192.0.2.61", "7a1e7c2a-0b3d-4e8f-9a6b-7c5d4e3f2a1c", "")
	dir := debianDir(t)
	withVMwareTools(t, dir, map[string]string{
		"etc/cloud/cloud.cfg.d/99-vmware.cfg":                       "disable_vmware_customization: false\n",
		"usr/lib/open-vm-tools/plugins/vmsvc/libdeployPkgPlugin.so": "stand-in",
		"var/lib/imc-staged/cust.cfg":                               cust,
		"var/lib/imc-staged/nics.txt":                               "ethernet0\n",
		"etc/systemd/system/vmtoolsd.service":                       imcToolsUnit,
		"etc/systemd/system/e2e-record.service":                     recordUnit,
		"usr/local/sbin/e2e-record":                                 imcRecordScript,
	})
	for link, target := range map[string]string{
		"etc/systemd/system/multi-user.target.wants/vmtoolsd.service":   "../vmtoolsd.service",
		"etc/systemd/system/multi-user.target.wants/e2e-record.service": "../e2e-record.service",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	img := filepath.Join(t.TempDir(), "root.img")
	if err := vm.Ext4(img, dir, "root", "", 1024); err != nil {
		t.Fatal(err)
	}
	defer dumpLogs(t, img)
	res := boot(t, vm.Config{
		Append:   "root=LABEL=root rw earlyinit.timeout=20",
		Disks:    []vm.Disk{{Path: img}},
		NICs:     []vm.NIC{{MAC: mac}},
		SMBIOS:   []string{vmwareDMI},
		RNG:      true,
		MemoryMB: 1024,
		Timeout:  6 * time.Minute,
	})
	con := res.Console
	mustContain(t, "console", con,
		"VMware guest customization allowed, not delivered yet",
		"IMC-DELIVERED",
		"VMware guest customization: /run/vmware-imc/cust.cfg after",
		`datasource ovf: instance "iid-vmware-imc", hostname "imc-live.example.com"`,
		"E2E-RECORDED")
	// The order: delivered after the initramfs, provisioned before the
	// boot stage's modules.
	if i, j := strings.Index(con, "not delivered yet"), strings.Index(con, "IMC-DELIVERED"); i < 0 || j < i {
		t.Errorf("the package was there before the initramfs looked")
	}
	rec := catRoot(t, img, "/var/log/e2e-record.log")
	mustContain(t, "recorder", rec, "multi-user.target: active\n", "hostname: imc-live\n", "inet 192.0.2.61/24", "status exit: 0\n")
	wantFile(t, img, "/var/lib/earlyinit/data/instance-id", "iid-vmware-imc\n")
	wantFile(t, img, "/var/lib/cloud/data/.markerfile-7a1e7c2a-0b3d-4e8f-9a6b-7c5d4e3f2a1c.txt", "")
	rpc := catRoot(t, img, "/guestinfo/rpc.log")
	mustContain(t, "reported to vCenter", rpc, "info-set guestinfo.gc.status Started\n", "deployPkg.update.state 5 0 ", "info-set guestinfo.gc.status Successful\n")
	mustContain(t, "status", catRoot(t, img, "/var/log/e2e-status.json"), `"status": "done"`)
}
