package late

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/scripts"
	"github.com/earlyinit/earlyinit/internal/paths"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// maxIncludeDepth bounds #include nesting in the final stage.
const maxIncludeDepth = 5

// Size caps of what the late stage reads from the cache. User-data and
// vendor-data are capped as the boot step caps them (userdata.MaxSize); a
// bigger file (not written by earlyinit) is refused before it is read.
const (
	maxUserData     = userdata.MaxSize
	maxInstanceData = 64 << 20
	maxSmallFile    = 1 << 20
)

// readCapped reads name in r if it is at most max bytes; a missing file is
// nil, nil. The size is checked before the file is read.
func readCapped(r *rootfs.Root, name string, max int64) ([]byte, error) {
	fi, err := r.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the limit of %d: not read", name, fi.Size(), max)
	}
	b, err := r.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: grew past the limit of %d bytes while read: not used", name, max)
	}
	if b == nil {
		b = []byte{} // exists, empty
	}
	return b, nil
}

// loadInstance reads the instance the boot step cached: its id
// (data/instance-id), user-data and vendor-data (instances/<iid>/), the
// datasource line, and from instance-data.json the public keys, host
// name and the datasource's metadata (ds.meta_data, as Data.Meta).
// User-data or vendor-data that cannot be read (too big, say) is left
// out, with a problem in probs: the stage goes on without it.
func loadInstance(r *rootfs.Root) (d *instance.Data, probs []string, err error) {
	b, err := readCapped(r, paths.DataDir+"/instance-id", maxSmallFile)
	if err == nil && b == nil {
		err = fs.ErrNotExist
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("no cached instance (%s/instance-id): the boot step did not find a datasource", paths.DataDir)
	}
	if err != nil {
		return nil, nil, err
	}
	d = &instance.Data{InstanceID: strings.TrimSpace(string(b))}
	if d.InstanceID == "" {
		return nil, nil, fmt.Errorf("%s/instance-id is empty", paths.DataDir)
	}
	idir := paths.InstancesDir + "/" + instance.InstanceDirName(d.InstanceID)
	if d.UserData, err = readCapped(r, idir+"/user-data.txt", maxUserData); err != nil {
		probs = append(probs, fmt.Sprintf("user-data: %v: ignored", err))
	}
	if d.VendorData, err = readCapped(r, idir+"/vendor-data.txt", maxUserData); err != nil {
		probs = append(probs, fmt.Sprintf("vendor-data: %v: ignored", err))
	}
	if d.VendorData2, err = readCapped(r, idir+"/vendor-data2.txt", maxUserData); err != nil {
		probs = append(probs, fmt.Sprintf("vendor-data2: %v: ignored", err))
	}
	if ds, _ := readCapped(r, idir+"/datasource", maxSmallFile); len(ds) > 0 {
		name, sub, _ := strings.Cut(strings.TrimSpace(string(ds)), ": ")
		d.DatasourceClass = strings.TrimPrefix(name, "DataSource")
		d.Datasource = strings.ToLower(d.DatasourceClass)
		d.Subplatform = sub
	}
	if b, err := readCapped(r, paths.RunDir+"/"+instance.InstanceDataFile, maxInstanceData); err != nil {
		probs = append(probs, fmt.Sprintf("%v: public keys and host name not known", err))
	} else if b != nil {
		var id struct {
			V1 struct {
				PublicSSHKeys []string `json:"public_ssh_keys"`
				LocalHostname *string  `json:"local_hostname"`
				Platform      string   `json:"platform"`
				InstanceID    string   `json:"instance_id"`
			} `json:"v1"`
			DS struct {
				MetaData map[string]any `json:"meta_data"`
			} `json:"ds"`
		}
		if err := json.Unmarshal(b, &id); err != nil {
			return nil, nil, fmt.Errorf("parse %s/%s: %w", paths.RunDir, instance.InstanceDataFile, err)
		}
		if id.V1.InstanceID == d.InstanceID {
			d.PublicKeys = id.V1.PublicSSHKeys
			d.Platform = id.V1.Platform
			// The datasource's own metadata, redacted as the 0644
			// file is (disk_setup reads EC2's block-device-mapping).
			d.Meta = id.DS.MetaData
			// The metadata keeps the fully qualified name v1 shortens.
			for _, k := range []string{"local-hostname", "local_hostname", "hostname"} {
				if s, ok := id.DS.MetaData[k].(string); ok && s != "" {
					d.LocalHostname = s
					break
				}
			}
			if d.LocalHostname == "" && id.V1.LocalHostname != nil {
				d.LocalHostname = *id.V1.LocalHostname
			}
		}
	}
	return d, probs, nil
}

// processed is user-data made ready for the modules.
type processed struct {
	cfg map[string]any
	// userKeys are the top-level keys user-data or vendor-data set (not
	// the image's configuration nor the defaults).
	userKeys map[string]bool
	parts    []userdata.Part
	warnings []string
	// includeWarnings are the warnings of fetching #include URLs.
	includeWarnings []string
}

// processUserData decodes user-data and vendor-data, fetches #include
// URLs (final stage only, with get; without it they are dropped), renders
// `## template: jinja` parts with the instance data instanceData reads
// (and image as merged_cfg), merges the cloud-config (vendor under user,
// then the image's configuration, image, then core.BaseConfig under
// both: baseConfig) and validates each cloud-config part. Every problem is
// a warning.
func processUserData(ctx context.Context, d *instance.Data, get userdata.Getter, instanceData func() ([]byte, error), image map[string]any, logf func(string, ...any)) *processed {
	p := &processed{}
	warn := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		p.warnings = append(p.warnings, msg)
		logf("WARNING: %s", msg)
	}
	decode := func(what string, raw []byte) []userdata.Part {
		parts, ws, err := userdata.Decode(raw)
		for _, w := range ws {
			warn("%s: %s", what, w)
		}
		if err != nil {
			warn("%s: %v: ignored", what, err)
			return nil
		}
		if hasInclude(parts) {
			if get == nil {
				logf("%s: #include URLs are fetched in the final stage", what)
				kept := parts[:0]
				for _, p := range parts {
					if p.Type != userdata.TypeInclude {
						kept = append(kept, p)
					}
				}
				parts = kept
			} else {
				var fws []userdata.Warning
				parts, fws = userdata.FetchIncludes(ctx, parts, get, maxIncludeDepth)
				for _, w := range fws {
					warn("%s: %s", what, w)
					p.includeWarnings = append(p.includeWarnings, fmt.Sprintf("%s: %s", what, w))
				}
			}
		}
		var jws []userdata.Warning
		parts, jws = userdata.RenderJinja(parts, instanceData, image)
		for _, w := range jws {
			warn("%s: %s", what, w)
		}
		for _, part := range parts {
			if part.Type != userdata.TypeCloudConfig {
				continue
			}
			for _, se := range userdata.ValidatePart(part) {
				if se.Warning {
					logf("%s: schema: %s", what, se.Error())
				} else {
					warn("%s: schema: %s", what, se.Error())
				}
			}
		}
		return parts
	}
	user := decode("user-data", d.UserData)
	vendor := decode("vendor-data", d.VendorData)
	vendor2 := decode("vendor-data2", d.VendorData2)
	ucfg, _ := userdata.MergeParts(user)
	cfg, ws := userdata.MergeVendor2(user, vendor, vendor2)
	for _, w := range ws {
		warn("merge: %s", w)
	}
	// The user's own keys decide which vendor parts run, as they decide
	// the merge.
	v2parts, _ := userdata.Vendor2Parts(ucfg, vendor2)
	vparts, _ := userdata.VendorParts(ucfg, vendor)
	p.parts = append(append(user, v2parts...), vparts...)
	p.userKeys = map[string]bool{}
	for k := range cfg {
		p.userKeys[k] = true
	}
	cfg, ws = userdata.MergeConfigs(cfg, baseConfig(image, warn))
	for _, w := range ws {
		warn("merge: %s", w)
	}
	p.cfg = cfg
	return p
}

// sensitiveInstanceData reads the instance data Jinja templates render
// with: instance-data-sensitive.json, which cloud-init's stages (root)
// read too; once, the first time a template asks.
func sensitiveInstanceData(r *rootfs.Root) func() ([]byte, error) {
	var b []byte
	var err error
	done := false
	return func() ([]byte, error) {
		if !done {
			done = true
			name := paths.RunDir + "/" + instance.InstanceDataSensitiveFile
			if b, err = readCapped(r, name, maxInstanceData); err == nil && b == nil {
				err = fmt.Errorf("%s: %w", name, fs.ErrNotExist)
			}
		}
		return b, err
	}
}

func hasInclude(parts []userdata.Part) bool {
	for _, p := range parts {
		if p.Type == userdata.TypeInclude {
			return true
		}
	}
	return false
}

// partName is a part's file name, made safe: its base name, no leading
// dots.
func partName(p userdata.Part) string {
	n := strings.TrimLeft(path.Base("/"+p.Filename), ".")
	if n == "" || n == "/" {
		n = "part"
	}
	return n
}

// writeScripts writes the shell-script parts where the script modules
// find them: #! parts into instances/<iid>/scripts/ (scripts_user), or
// scripts/vendor/ for vendor-data's (scripts.VendorScriptsDir),
// per-boot/instance/once parts into /var/lib/earlyinit/scripts/per-*/, all
// 0700. It returns the boothooks, written to instances/<iid>/boothooks/
// without their #cloud-boothook line.
func writeScripts(r *rootfs.Root, iid string, parts []userdata.Part) ([]string, error) {
	idir := paths.InstancesDir + "/" + instance.InstanceDirName(iid)
	var hooks []string
	var errs []error
	for _, p := range parts {
		dir := ""
		content := p.Content
		switch p.Type {
		case userdata.TypeShellScript:
			dir = core.ScriptsDir(iid)
			if p.Vendor {
				dir = scripts.VendorScriptsDir(iid)
			}
		case userdata.TypeShellScriptPerBoot:
			dir = scripts.ScriptsPerBootDir
		case userdata.TypeShellScriptPerInst:
			dir = scripts.ScriptsPerInstanceDir
		case userdata.TypeShellScriptPerOnce:
			dir = scripts.ScriptsPerOnceDir
		case userdata.TypeBoothook:
			dir = idir + "/boothooks"
			s := strings.ReplaceAll(string(content), "\r\n", "\n")
			if t := strings.TrimLeft(s, " \t\r\n"); strings.HasPrefix(strings.ToLower(t), "#cloud-boothook") {
				s = t[len("#cloud-boothook"):]
				s = strings.TrimPrefix(s, "\n")
			}
			content = []byte(s)
		default:
			continue
		}
		name := dir + "/" + partName(p)
		if err := r.WriteFile(name, content, 0o700, 0, 0); err != nil {
			errs = append(errs, err)
			continue
		}
		if p.Type == userdata.TypeBoothook {
			hooks = append(hooks, name)
		}
	}
	return hooks, errors.Join(errs...)
}
