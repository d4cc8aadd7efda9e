package provision

// The image's configuration in the initramfs: read once per run
// (loadImageConfig), it chooses and tunes the datasources (discoverImage),
// can turn the network config off (networkDisabledBy) and, merged under
// user-data and vendor-data (effectiveConfig), decides preserve_hostname
// and what the grow step does.

import (
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/discover"
	"github.com/earlyinit/earlyinit/internal/imagecfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/instance/cache"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/rootfs"
	"github.com/earlyinit/earlyinit/internal/scalar"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// loadImageConfig reads the image's configuration (internal/imagecfg: cloud.cfg,
// cloud.cfg.d, earlyinit.cfg) from env.Root, without following links,
// logging each file read and each warning. Nothing in it stops the boot: a
// failure is a warning and an empty configuration. earlyinit's own
// cloud.cfg.d drop-in (render.CloudInitDropInPath), written for an
// installed cloud-init after earlyinit configured the network, is not
// read: it is not the image's wish. The result is never nil.
func loadImageConfig(env Env) *imagecfg.Config {
	img, err := imagecfg.LoadRoot(env.Root)
	if err != nil {
		env.Log.Errorf("image configuration: %v: not used", err)
		return &imagecfg.Config{Raw: map[string]any{}}
	}
	for _, f := range img.Files {
		env.Log.Printf("image configuration: read %s", f)
	}
	for _, w := range img.Warnings {
		env.Log.Errorf("image configuration: %s", w)
	}
	return img
}

// effectiveConfig is the cloud-config the initramfs decides with, merged
// as cloud-init merges it: user-data over vendor-data over the image's
// configuration over the built-in defaults (mergeConfig). d is the
// instance found, nil for none; img may be nil. The grow step takes it.
func effectiveConfig(img *imagecfg.Config, d *instance.Data, log Log) map[string]any {
	var image map[string]any
	if img != nil {
		image = img.Raw
	}
	return mergeConfig(image, d, log)
}

// preserveHostname reads preserve_hostname from cfg, the effective
// cloud-config, as the image's configuration reads it (cloud-init's
// get_cfg_option_bool).
func preserveHostname(cfg map[string]any) bool {
	return (&imagecfg.Config{Raw: cfg}).PreserveHostname()
}

// stageNewInstance stages into b what a new instance needs in root
// (cache.StageNewInstance), leaving /etc/hostname and /etc/hosts alone
// when cfg, the effective cloud-config, has preserve_hostname: true.
func stageNewInstance(env Env, b *rootfs.Batch, root *rootfs.Root, d *instance.Data, cfg map[string]any) error {
	opts := cache.NewInstanceOptions{PreserveHostname: preserveHostname(cfg)}
	if opts.PreserveHostname {
		env.Log.Printf("preserve_hostname: /etc/hostname and /etc/hosts left as the image has them")
	}
	return cache.StageNewInstance(b, root, d, opts)
}

// networkDisabledBy says what turns the network config off, "" if
// nothing: network-config=disabled on the kernel command line, or the
// image's network: {config: disabled}, both read as cloud-init reads them
// (cloud-init also reads a whole network config from network-config=,
// which earlyinit does not: that is logged once, and ignored).
func networkDisabledBy(env Env, img *imagecfg.Config) string {
	if v, ok := env.Settings.Params["network-config"]; ok && v != "" {
		if v == "disabled" {
			return "network-config=disabled on the kernel command line"
		}
		env.Log.Errorf("network: network-config= on the kernel command line: not supported but for network-config=disabled: ignored")
	}
	if img != nil && img.NetworkDisabled() {
		return "the image's configuration (network: {config: disabled})"
	}
	return ""
}

// discoverImage gives discovery the image's datasource_list and the
// datasource: settings of the sources earlyinit has, each value
// type-checked (datasourceSettings); every problem is one warning in the
// log, naming its key. Settings of sources earlyinit lacks are one
// warning each.
func discoverImage(img *imagecfg.Config, log Log) discover.Image {
	var di discover.Image
	if img == nil {
		return di
	}
	di.List = img.DatasourceList()
	di.DefaultUser = defaultUserName(img)
	known := map[string]bool{}
	for _, src := range discover.Sources {
		known[strings.ToLower(src.Class)] = true
		m := img.Datasource(src.Class)
		if len(m) == 0 {
			continue
		}
		set, warns := datasourceSettings(src.Class, m)
		for _, w := range warns {
			log.Errorf("image configuration: %s", w)
		}
		if di.Settings == nil {
			di.Settings = map[string]discover.SourceSettings{}
		}
		di.Settings[src.Class] = set
	}
	if m, ok := img.Raw["datasource"].(map[string]any); ok {
		var unknown []string
		for k := range m {
			if !known[strings.ToLower(k)] {
				unknown = append(unknown, k)
			}
		}
		sort.Strings(unknown)
		for _, k := range unknown {
			log.Errorf("image configuration: datasource.%s: not supported: earlyinit has no such datasource", k)
		}
	}
	return di
}

// defaultUserName is the name of the default user the image's
// configuration creates, as cloud-init's normalize_users_groups and
// extract_default find it for a datasource: with a user key, its name (a
// string, or a map's name) or else the default user's; otherwise the
// default user's (system_info.default_user, or the distribution's) when
// users names "default" (in a comma-separated string, a list, or a map
// whose value for it is not false); "" when the image creates none.
func defaultUserName(img *imagecfg.Config) string {
	switch u := img.Raw["user"].(type) {
	case string:
		if s := strings.TrimSpace(u); s != "" {
			return s
		}
	case map[string]any:
		if s, ok := u["name"].(string); ok && strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s)
		}
		if len(u) > 0 {
			return img.DefaultUser().Name
		}
	}
	named := false
	switch us := img.Raw["users"].(type) {
	case string:
		for _, n := range strings.Split(us, ",") {
			named = named || strings.TrimSpace(n) == "default"
		}
	case []any:
		for _, e := range us {
			switch t := e.(type) {
			case string:
				named = named || strings.TrimSpace(t) == "default"
			case map[string]any:
				named = named || t["name"] == "default"
			}
		}
	case map[string]any:
		v, ok := us["default"]
		named = ok && v != false
	}
	if !named {
		return ""
	}
	return img.DefaultUser().Name
}

// mergeConfig is the cloud-config as cloud-init merges it: user-data over
// vendor-data (unless user-data turns vendor-data off) over image, the
// image's configuration, over core.BaseConfig. #include parts are left
// out (the final stage fetches them) and nothing is schema-checked here:
// the late stage decodes the same bytes again and reports their problems,
// so the initramfs only logs them at debug level. d may be nil (no
// instance), image nil (no configuration). The result is never nil.
func mergeConfig(image map[string]any, d *instance.Data, log Log) map[string]any {
	var user, vendor, vendor2 []userdata.Part
	if d != nil {
		user = decodeForMerge("user-data", d.UserData, log)
		vendor = decodeForMerge("vendor-data", d.VendorData, log)
		vendor2 = decodeForMerge("vendor-data2", d.VendorData2, log)
	}
	cfg, ws := userdata.MergeVendor2(user, vendor, vendor2)
	for _, w := range ws {
		log.Debugf("cloud-config: merge: %s", w)
	}
	cfg, ws = userdata.MergeConfigs(cfg, image, core.BaseConfig())
	for _, w := range ws {
		log.Debugf("cloud-config: merge: %s", w)
	}
	return cfg
}

// decodeForMerge decodes user-data or vendor-data for mergeConfig.
func decodeForMerge(what string, raw []byte, log Log) []userdata.Part {
	if len(raw) == 0 {
		return nil
	}
	parts, ws, err := userdata.Decode(raw)
	for _, w := range ws {
		log.Debugf("cloud-config: %s: %s", what, w)
	}
	if err != nil {
		log.Debugf("cloud-config: %s: %v: not used in the initramfs", what, err)
		return nil
	}
	kept := parts[:0]
	for _, p := range parts {
		if p.Type == userdata.TypeInclude {
			log.Debugf("cloud-config: %s: #include is fetched in the final stage, not in the initramfs", what)
			continue
		}
		kept = append(kept, p)
	}
	return kept
}

// maxWaitLimit bounds max_wait and timeout: a day, as earlyinit.timeout.
const maxWaitLimit = 24 * time.Hour

// datasourceKey tells whether the initramfs reads the datasource.<Class>
// key, and the class it is read for ("" for every source).
func datasourceKey(k string) (only string, ok bool) {
	switch k {
	case "metadata_urls", "max_wait", "timeout":
		return "", true
	case "seedfrom":
		return "NoCloud", true
	case "configure_secondary_nics":
		return "Oracle", true
	case "allow_raw_data", "vmware_cust_file_max_wait":
		// Read by the ovf source itself (ovf.Pending, metadata).
		return "OVF", true
	}
	return "", false
}

// datasourceSettings type-checks one source's datasource.<class> settings,
// m, as cloud-init reads them: metadata_urls a list of http:// URLs,
// max_wait and timeout whole or fractional seconds above 0 (a number, or a
// string of one, as cloud-init's int() takes), seedfrom a string. A bad
// value, or a key the initramfs does not read, is one warning naming it
// (datasource.OpenStack.max_wait) and is left out; warnings never show a
// URL's password.
func datasourceSettings(class string, m map[string]any) (discover.SourceSettings, []string) {
	var set discover.SourceSettings
	var warns []string
	warn := func(key, format string, args ...any) {
		warns = append(warns, fmt.Sprintf("datasource.%s.%s: %s", class, key, fmt.Sprintf(format, args...)))
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := m[k]
		if only, ok := datasourceKey(k); !ok || (only != "" && only != class) {
			warn(k, "not supported: ignored")
			continue
		}
		switch k {
		case "metadata_urls":
			list, ok := v.([]any)
			if !ok {
				warn(k, "want a list of http:// URLs, got %s: ignored", scalar.YAMLNoun(v))
				continue
			}
			for i, e := range list {
				s, ok := e.(string)
				if !ok {
					warn(fmt.Sprintf("%s[%d]", k, i), "want an http:// URL, got %s: skipped", scalar.YAMLNoun(e))
					continue
				}
				if why := checkMetadataURL(s); why != "" {
					warn(fmt.Sprintf("%s[%d]", k, i), "%s: skipped", why)
					continue
				}
				set.MetadataURLs = append(set.MetadataURLs, s)
			}
		case "max_wait", "timeout":
			d, err := seconds(v)
			if err != nil {
				warn(k, "%v: the default is used", err)
				continue
			}
			if k == "max_wait" {
				set.MaxWait = d
			} else {
				set.Timeout = d
			}
		case "seedfrom":
			s, ok := v.(string)
			if !ok || s == "" {
				warn(k, "want a directory or an http:// URL, got %s: ignored", scalar.YAMLNoun(v))
				continue
			}
			set.SeedFrom = s
		case "configure_secondary_nics":
			b, ok := v.(bool)
			if !ok {
				warn(k, "want a boolean, got %s: false", scalar.YAMLNoun(v))
			}
			set.SecondaryNICs = b
		}
	}
	return set, warns
}

// checkMetadataURL says what is wrong with a metadata_urls entry, "" if
// nothing: earlyinit's HTTP client speaks plain http to an IP address (or
// a name it is told how to resolve), without credentials.
func checkMetadataURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "not a URL"
	case u.User != nil:
		return "a user or password in the URL is not supported"
	case strings.EqualFold(u.Scheme, "https"):
		return "https is not supported (plain http only)"
	case !strings.EqualFold(u.Scheme, "http") || u.Host == "":
		return fmt.Sprintf("want an http:// URL with a host, got scheme %q", u.Scheme)
	}
	return ""
}

// seconds reads a max_wait or timeout: a number of seconds, or a string
// of one, above 0 and at most a day.
func seconds(v any) (time.Duration, error) {
	var n float64
	switch t := v.(type) {
	case int:
		n = float64(t)
	case int64:
		n = float64(t)
	case uint64:
		n = float64(t)
	case float64:
		n = t
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil {
			return 0, fmt.Errorf("want a number of seconds, got a string that is not one")
		}
		n = f
	default:
		return 0, fmt.Errorf("want a number of seconds, got %s", scalar.YAMLNoun(v))
	}
	if math.IsNaN(n) || n <= 0 || n > maxWaitLimit.Seconds() {
		return 0, fmt.Errorf("want a number of seconds above 0 and at most %v", maxWaitLimit.Seconds())
	}
	return time.Duration(n * float64(time.Second)), nil
}
