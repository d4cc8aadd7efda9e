package ovf

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/datasource/vmware"
	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/scalar"
	"github.com/earlyinit/earlyinit/internal/selinux"
)

// Labels are the OVF environment ISO's labels ds-identify knows (vSphere
// writes "OVF ENV").
var Labels = []string{"OVF ENV", "ovf env", "OVFENV", "ovfenv", "OVF-TRANSPORT", "ovf-transport"}

// Source is cloud-init's DataSourceOVF: the OVF environment (ovf-env.xml)
// in its seed directory or on its ISO, and on a VMware VM the guest
// customization (IMC) VMware Tools' deployPkg plugin left in the root,
// else the OVF environment in guestinfo.ovfEnv, both through the image's
// own open-vm-tools run chrooted in the root (as the vmware source reads
// guestinfo), without the temporary network.
var Source = datasource.Source{
	Name:     "ovf",
	Class:    "OVF",
	Labels:   Labels,
	SeedDirs: []string{"/var/lib/cloud/seed/ovf"},
	ReadFS:   ReadFS,
	Platform: vmware.Platform,
	Local:    true,
	Metadata: metadata,
}

// ReadFS reads a drive or seed directory holding an OVF environment (the
// first of EnvFiles); its network-config is read too (cloud-init reads it
// from the ISO, not from a seed directory).
func ReadFS(fsys fs.FS) (*instance.Data, error) {
	for _, name := range EnvFiles {
		b, err := datasource.ReadFile(fsys, name, maxEnv)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		e, err := ReadEnv(b, true)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return fromEnv(e, "iso")
	}
	return nil, fmt.Errorf("none of %s", strings.Join(EnvFiles, ", "))
}

// ErrNoData is returned (wrapped) when a VMware VM has neither a guest
// customization nor guestinfo.ovfEnv.
var ErrNoData = datasource.Absent("no VMware guest customization and no OVF environment in guestinfo.ovfEnv")

// metadata reads what VMware Tools bring: the guest customization, then
// guestinfo.ovfEnv.
func metadata(ctx context.Context, svc datasource.Service) (*instance.Data, error) {
	root := svc.Root
	if root == "" {
		root = "/"
	}
	tool := vmware.RPCTool{}
	if root != "/" {
		tool.Root = root
	}
	fsys := datasource.DriveFS(root, 0)
	img, err := imagecfg.LoadRoot(root)
	if err != nil {
		return nil, err
	}
	c := &Customization{
		FS:              fsys,
		Tools:           tools{tool},
		AllowVMwareCust: !cfgBool(img.Raw, "disable_vmware_customization", true),
		AllowRawData:    cfgBool(img.Datasource("OVF"), "allow_raw_data", true),
		MACs:            liveMACs,
		Logf:            svc.Logf,
	}
	if r, err := selinux.OpenRoot(root, nil); err == nil {
		c.Root = r
	}
	d, err := c.Read(ctx)
	if err == nil {
		return d, nil
	}
	if !errors.Is(err, ErrNoCustomization) {
		return nil, err
	}
	if svc.Logf != nil {
		svc.Logf("ovf: %v", err)
	}
	v, ok, gerr := tool.Get(ctx, "ovfEnv")
	if gerr != nil || !ok || strings.TrimSpace(v) == "" {
		if gerr != nil && svc.Logf != nil {
			svc.Logf("ovf: guestinfo.ovfEnv: %v", gerr)
		}
		return nil, fmt.Errorf("%w (%v)", ErrNoData, err)
	}
	e, err := ReadEnv([]byte(v), true)
	if err != nil {
		return nil, fmt.Errorf("guestinfo.ovfEnv: %w", err)
	}
	return fromEnv(e, "com.vmware.guestInfo")
}

// tools are VMware Tools through vmware.RPCTool.
type tools struct{ t vmware.RPCTool }

func (t tools) RPC(ctx context.Context, cmd string) (string, error) { return t.t.Send(ctx, cmd) }
func (t tools) ToolsConfig(ctx context.Context, section, key string) (string, bool, error) {
	return t.t.ToolsConfig(ctx, section, key)
}
func (t tools) Run(ctx context.Context, path string, args ...string) error {
	_, _, err := vmware.RunInRoot(ctx, t.t.Root, strings.Join(args, " "), path, args...)
	return err
}

// cfgBool is cloud-init's get_cfg_option_bool.
func cfgBool(m map[string]any, key string, def bool) bool {
	v, ok := m[key]
	if !ok {
		return def
	}
	switch t := v.(type) {
	case bool:
		return t
	case string:
		return scalar.IsTrue(t)
	}
	return false
}

// liveMACs are the NICs' names by MAC, from /sys/class/net.
func liveMACs() (map[string]string, error) {
	ents, err := os.ReadDir("/sys/class/net")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/sys/class/net", e.Name(), "address"))
		if err != nil {
			continue
		}
		if mac := strings.ToLower(strings.TrimSpace(string(b))); mac != "" && mac != "00:00:00:00:00:00" {
			out[mac] = e.Name()
		}
	}
	return out, nil
}
