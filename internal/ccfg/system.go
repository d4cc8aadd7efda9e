package ccfg

// The keys of write_files, the scripts, mounts and swap, resolv_conf,
// phone_home, power_state, growpart, the late stages and the distribution
// settings (system_info).

// WriteFiles is write_files: each entry read on its own (WriteFile's
// DecodeCC).
type WriteFiles []WriteFile

// Shape: at least one file.
func (WriteFiles) Shape(s *Schema) { s.MinItems = 1 }

// WriteFile is one of write_files.
type WriteFile struct {
	Path        string `yaml:"path" cc:"required"`
	Content     string `yaml:"content"`
	Owner       string `yaml:"owner" cc:"default=root:root"`
	Permissions any    `yaml:"permissions"`
	Encoding    string `yaml:"encoding" cc:"enum=gz|gzip|gz+base64|gzip+base64|gz+b64|gzip+b64|b64|base64|text/plain"`
	Append      bool   `yaml:"append"`
	Defer       bool   `yaml:"defer"`
	// Err: the entry cannot be read (DecodeCC).
	Err error
}

// Shape: permissions is an octal string or an integer (userdata's
// permissions check, with its YAML 1.1 warnings).
func (WriteFile) Shape(s *Schema) { s.Props["permissions"] = &Schema{Check: "permissions"} }

// ResolvConf is cc_resolv_conf's resolv_conf. A resolv_conf that is not
// a map is no error: NotMap names its kind (DecodeCC).
type ResolvConf struct {
	Nameservers   []string       `yaml:"nameservers"`
	SearchDomains []string       `yaml:"searchdomains"`
	Domain        string         `yaml:"domain"`
	SortList      []string       `yaml:"sortlist"`
	Options       map[string]any `yaml:"options"`
	NotMap        string
}

// Shape: 22.4's schema takes any items in the lists (the module writes
// each as text).
func (ResolvConf) Shape(s *Schema) {
	for _, k := range []string{"nameservers", "searchdomains", "sortlist"} {
		s.Props[k].Items = nil
	}
}

// Swap is cc_mounts' swap.
type Swap struct {
	Filename *string `yaml:"filename" cc:"strict"`
	Size     any     `yaml:"size"`
	MaxSize  any     `yaml:"maxsize"`
}

// SizeString is a size with its unit, as cc_mounts reads one.
const SizeString = `^([0-9]+)?\.?[0-9]+[BKMGT]$`

// Shape: size is "auto", a number of bytes or a size with its unit;
// maxsize the last two.
func (Swap) Shape(s *Schema) {
	s.Props["size"] = &Schema{Alts: map[string]*Schema{
		"integer": nil,
		"string":  {Check: "swap_size"},
	}}
	s.Props["maxsize"] = &Schema{Alts: map[string]*Schema{
		"integer": nil,
		"string":  {Types: []string{"string"}, Pattern: SizeString, PatternWhat: "a size like 2G"},
	}}
}

// PhoneHome is cc_phone_home's phone_home.
type PhoneHome struct {
	URL   string         `yaml:"url" cc:"required"`
	Post  PhoneHomePost  `yaml:"post"`
	Tries PhoneHomeTries `yaml:"tries"`
}

// PowerState is cc_power_state_change's power_state.
type PowerState struct {
	Delay   PowerDelay `yaml:"delay"`
	Mode    string     `yaml:"mode" cc:"required,enum=poweroff|reboot|halt"`
	Message string     `yaml:"message"`
	// Timeout is float() of the value, as cloud-init reads it; nil when
	// not given (30).
	Timeout   *float64 `yaml:"timeout"`
	Condition any      `yaml:"condition"`
}

// Shape: timeout is an integer, as 22.4's schema has it (the module
// takes any number); condition a command (a string or an argv) or a
// boolean.
func (PowerState) Shape(s *Schema) {
	s.Props["timeout"].Types = []string{"integer"}
	s.Props["condition"] = &Schema{Alts: map[string]*Schema{
		"string": nil, "boolean": {Types: []string{"boolean"}}, "list": nil,
	}}
}

// VendorData is vendor_data: whether vendor-data runs, and the prefix of
// its scripts. A vendor_data that is not a map has none of its keys
// (DecodeCC).
type VendorData struct {
	Enabled any          `yaml:"enabled"`
	Prefix  VendorPrefix `yaml:"prefix"`
	// Read by cloud-init's stages.py though not in its schema.
	DisabledHandlers VendorHandlers `yaml:"disabled_handlers"`
}

// Shape: enabled a boolean (a string deprecated).
func (VendorData) Shape(s *Schema) {
	s.Props["enabled"] = &Schema{Alts: map[string]*Schema{
		"boolean": {Types: []string{"boolean"}},
		"string":  {Deprecated: "vendor_data.enabled as a string; use a boolean"},
	}}
}

// Growpart is cc_growpart's growpart, done in the initramfs
// (internal/provision/grow.go).
type Growpart struct {
	Mode                   any      `yaml:"mode"`
	Devices                []string `yaml:"devices"`
	IgnoreGrowrootDisabled bool     `yaml:"ignore_growroot_disabled"`
}

// Shape: mode is auto, growpart or off (false deprecated).
func (Growpart) Shape(s *Schema) {
	s.Props["mode"] = &Schema{Alts: map[string]*Schema{
		"string":  {Types: []string{"string"}, Enum: []any{"auto", "growpart", "off"}},
		"boolean": {Types: []string{"boolean"}, Enum: []any{false}, Deprecated: "growpart.mode false; use off"},
	}}
}

// SystemInfo is system_info: the default user, and the distribution's
// settings earlyinit reads (cloud-init's distros, which 22.4's schema
// leaves unchecked: so does earlyinit's, past their names); its other
// keys are distribution internals earlyinit does not act on.
type SystemInfo struct {
	DefaultUser             *User          `yaml:"default_user"`
	Distro                  any            `yaml:"distro"`
	NTPClient               any            `yaml:"ntp_client"`
	SSHSvcname              any            `yaml:"ssh_svcname"`
	RsyslogSvcname          any            `yaml:"rsyslog_svcname"`
	AptGetCommand           any            `yaml:"apt_get_command"`
	AptGetUpgradeSubcommand any            `yaml:"apt_get_upgrade_subcommand"`
	AptGetWrapper           *AptGetWrapper `yaml:"apt_get_wrapper"`
	PackageMirrors          PackageMirrors `yaml:"package_mirrors"`

	errs map[string]error // by key: what Decode could not read
}

// DecodeCC reads each key on its own, as cloud-init's distro reads each
// setting when it wants it (get_option): a key of the wrong kind is its
// Err, and leaves the others. Only a system_info that is not a map is an
// error.
func (si *SystemInfo) DecodeCC(v any, path string) error {
	*si = SystemInfo{}
	type plain SystemInfo
	errs, err := decodeEachKey((*plain)(si), v, path) // none of system_info's keys has a default
	si.errs = errs
	return err
}

// Err is what is wrong with system_info's key (its name in the YAML), nil
// when Decode could read it.
func (si *SystemInfo) Err(key string) error { return si.errs[key] }

// Shape: other keys, ignored with a warning.
func (SystemInfo) Shape(s *Schema) {
	s.KeyPattern = AnyKey
	s.Values = &Schema{Unsupported: true}
}

// AptGetWrapper is system_info.apt_get_wrapper.
type AptGetWrapper struct {
	Command any `yaml:"command"`
	Enabled any `yaml:"enabled"`
}

// Shape: other keys.
func (AptGetWrapper) Shape(s *Schema) { s.KeyPattern = AnyKey }

// DecodeCC reads the wrapper as cloud-init's Debian distro does
// (wcfg.get("enabled", "auto")): enabled not given is "auto", given as
// null is None, which turns the wrapper off.
func (w *AptGetWrapper) DecodeCC(v any, path string) error {
	m, ok := v.(map[string]any)
	if !ok {
		return wrongType(path, "a map", v)
	}
	enabled, given := m["enabled"]
	if !given {
		enabled = "auto"
	}
	*w = AptGetWrapper{Command: m["command"], Enabled: enabled}
	return nil
}

// PackageMirror is one of system_info.package_mirrors.
type PackageMirror struct {
	Arches   LooseStrings `yaml:"arches"`
	Failsafe MirrorURLs   `yaml:"failsafe"`
	Search   MirrorSearch `yaml:"search"`
}

// Shape: other keys.
func (PackageMirror) Shape(s *Schema) { s.KeyPattern = AnyKey }

// MirrorsByKind is the schema of a package mirror's failsafe and search:
// its primary and security mirrors (MirrorURLs, MirrorSearch).
type MirrorsByKind struct {
	Primary  any `yaml:"primary"`
	Security any `yaml:"security"`
}

// Shape: other keys.
func (MirrorsByKind) Shape(s *Schema) { s.KeyPattern = AnyKey }
