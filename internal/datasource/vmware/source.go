package vmware

import (
	"context"
	"os"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/dmi"
	"github.com/earlyinit/earlyinit/internal/instance"
)

// Source is VMware's guestinfo transport, read with open-vm-tools: the
// image's own (vmware-rpctool or vmtoolsd in the real root, run chrooted
// there), else the initramfs's. It needs no network: its Metadata uses
// only the Service's Root.
var Source = datasource.Source{
	Name:     "vmware",
	Class:    "VMware",
	Platform: Platform,
	Local:    true,
	Metadata: func(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
		tool := RPCTool{}
		if svc.Root != "" && svc.Root != "/" {
			if _, err := (RPCTool{Root: svc.Root}).find(); err == nil {
				tool.Root = svc.Root
			}
		}
		r := &Reader{GuestInfo: tool, UUID: productUUID, Logf: svc.Logf}
		return r.Read(ctx)
	},
}

// Platform recognises a VMware VM: product_name holds "VMware" in any case
// ("VMware Virtual Platform", "VMware7,1", "VMware20,1"), as cloud-init's
// is_vmware_platform checks, or sys_vendor begins with "VMware" ("VMware,
// Inc."), as systemd-detect-virt, which ds-identify asks, finds it.
func Platform(i dmi.Info) bool {
	return strings.Contains(strings.ToLower(i.ProductName), "vmware") || strings.HasPrefix(i.SysVendor, "VMware")
}

// productUUID is the SMBIOS system UUID, as the kernel exports it.
func productUUID() (string, error) {
	b, err := os.ReadFile(dmi.Dir + "/product_uuid")
	return strings.TrimSpace(string(b)), err
}
