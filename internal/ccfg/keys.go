package ccfg

import (
	"reflect"
	"sync"
)

// Config is cloud-config's top-level map: each field is a key whose shape
// a type declares, tagged as any field (see the package's comment), with
// one more option, nullempty: null is valid and reads as an empty map.
// The keys are grouped by what acts on them; a group's keys are Config's.
// The keys no type declares (cloud-init's that earlyinit ignores, the
// v1/v2 apt keys) are internal/userdata's.
type Config struct {
	ScriptKeys
	AccountKeys
	SystemKeys
	DiskKeys
	PackageKeys
	MgmtKeys
	BootKeys
}

// ScriptKeys are Config's keys of scripts and files.
type ScriptKeys struct {
	Bootcmd      Commands    `yaml:"bootcmd"`
	Runcmd       Commands    `yaml:"runcmd"`
	WriteFiles   WriteFiles  `yaml:"write_files"`
	VendorData   *VendorData `yaml:"vendor_data"`
	PowerState   *PowerState `yaml:"power_state"`
	PhoneHome    *PhoneHome  `yaml:"phone_home"`
	FinalMessage string      `yaml:"final_message"`
}

// AccountKeys are Config's keys of users, groups, ssh and passwords.
type AccountKeys struct {
	Users              Users               `yaml:"users"`
	User               *User               `yaml:"user"`
	Groups             Groups              `yaml:"groups"`
	SSHAuthorizedKeys  []string            `yaml:"ssh_authorized_keys" cc:"min=1"`
	SSHImportID        *PyValue            `yaml:"ssh_import_id"`
	DisableRoot        bool                `yaml:"disable_root" cc:"default=true"`
	DisableRootOpts    string              `yaml:"disable_root_opts"`
	AllowPublicSSHKeys bool                `yaml:"allow_public_ssh_keys" cc:"default=true"`
	SSHDeleteKeys      bool                `yaml:"ssh_deletekeys" cc:"default=true"`
	SSHQuietKeygen     bool                `yaml:"ssh_quiet_keygen"`
	SSHGenKeyTypes     []string            `yaml:"ssh_genkeytypes" cc:"min=1"`
	SSHKeys            HostKeys            `yaml:"ssh_keys"`
	SSHPublishHostkeys *SSHPublishHostkeys `yaml:"ssh_publish_hostkeys"`
	SSHPwauth          *PyValue            `yaml:"ssh_pwauth"`
	Chpasswd           *Chpasswd           `yaml:"chpasswd"`
	Password           string              `yaml:"password"`
	SSH                *SSHConsole         `yaml:"ssh"`
	SSHFpConsoleBL     []string            `yaml:"ssh_fp_console_blacklist" cc:"unique,untrimmed"`
	SSHKeyConsoleBL    []string            `yaml:"ssh_key_console_blacklist" cc:"unique,untrimmed"`
	NoSSHFingerprints  bool                `yaml:"no_ssh_fingerprints"`
	AuthkeyHash        string              `yaml:"authkey_hash" cc:"default=sha256"`
	Earlyinit          *Earlyinit          `yaml:"earlyinit"`
}

// SystemKeys are Config's keys of names, hosts, resolver, time, locale, keyboard.
type SystemKeys struct {
	Hostname               string      `yaml:"hostname"`
	FQDN                   string      `yaml:"fqdn"`
	PreferFQDNOverHostname bool        `yaml:"prefer_fqdn_over_hostname"`
	PreserveHostname       bool        `yaml:"preserve_hostname"`
	ManageEtcHosts         EtcHosts    `yaml:"manage_etc_hosts"`
	ManageResolvConf       bool        `yaml:"manage_resolv_conf"`
	ResolvConf             *ResolvConf `yaml:"resolv_conf"`
	Timezone               string      `yaml:"timezone"`
	Locale                 string      `yaml:"locale"`
	LocaleConfigfile       string      `yaml:"locale_configfile"`
	Keyboard               *Keyboard   `yaml:"keyboard"`
	NTP                    *NTP        `yaml:"ntp" cc:"nullempty"`
	RandomSeed             *RandomSeed `yaml:"random_seed"`
	CACerts                *CACerts    `yaml:"ca_certs"`
	OldCACerts             *CACerts    `yaml:"ca-certs" cc:"deprecated=ca-certs; use ca_certs"`
	Rsyslog                *Rsyslog    `yaml:"rsyslog"`
	Wireguard              *Wireguard  `yaml:"wireguard" cc:"null"`
	DisableEC2Metadata     bool        `yaml:"disable_ec2_metadata"`
}

// DiskKeys are Config's keys of disks, mounts, swap.
type DiskKeys struct {
	DeviceAliases      DeviceAliases `yaml:"device_aliases"`
	DiskSetup          DiskSetups    `yaml:"disk_setup"`
	FSSetup            []FSSetup     `yaml:"fs_setup"`
	Mounts             []MountEntry  `yaml:"mounts" cc:"min=1"`
	MountDefaultFields MountFields   `yaml:"mount_default_fields" cc:"min=6,max=6"`
	Swap               *Swap         `yaml:"swap"`
	Growpart           *Growpart     `yaml:"growpart"`
	ResizeRootfs       any           `yaml:"resize_rootfs"`
}

// PackageKeys are Config's keys of repositories and packages.
type PackageKeys struct {
	Apt                     *Apt      `yaml:"apt"`
	YumRepos                YumRepos  `yaml:"yum_repos"`
	YumRepoDir              string    `yaml:"yum_repo_dir"`
	Zypper                  *Zypper   `yaml:"zypper"`
	APKRepos                *APKRepos `yaml:"apk_repos"`
	Packages                *Packages `yaml:"packages" cc:"min=1"`
	PackageUpdate           bool      `yaml:"package_update"`
	PackageUpgrade          bool      `yaml:"package_upgrade"`
	PackageRebootIfRequired bool      `yaml:"package_reboot_if_required"`
	AptUpdate               bool      `yaml:"apt_update" cc:"deprecated=apt_update; use package_update"`
	AptUpgrade              bool      `yaml:"apt_upgrade" cc:"deprecated=apt_upgrade; use package_upgrade"`
	AptRebootIfRequired     bool      `yaml:"apt_reboot_if_required" cc:"deprecated=apt_reboot_if_required; use package_reboot_if_required"`
}

// MgmtKeys are Config's keys of configuration management.
type MgmtKeys struct {
	Ansible        *Ansible        `yaml:"ansible"`
	Puppet         *Puppet         `yaml:"puppet"`
	Chef           *Chef           `yaml:"chef"`
	SaltMinion     *SaltMinion     `yaml:"salt_minion"`
	RHSubscription *RHSubscription `yaml:"rh_subscription"`
}

// BootKeys are Config's keys of the boot: network configuration, merging, module lists, the.
type BootKeys struct {
	// distribution's settings.
	Network            map[string]any `yaml:"network"`
	MergeHow           any            `yaml:"merge_how"`
	MergeType          any            `yaml:"merge_type"`
	CloudInitModules   []any          `yaml:"cloud_init_modules"`
	CloudConfigModules []any          `yaml:"cloud_config_modules"`
	CloudFinalModules  []any          `yaml:"cloud_final_modules"`
	SystemInfo         *SystemInfo    `yaml:"system_info"`
}

// Commands is bootcmd or runcmd: at least one command, a string (run by
// sh) or an argv; runcmd also takes null (skipped).
type Commands []any

// Shape is the top-level keys' that tags cannot say: several kinds of
// value, and userdata's own checks.
func (Config) Shape(s *Schema) {
	str := &Schema{Types: []string{"string"}}
	s.Props["bootcmd"].MinItems = 1
	s.Props["bootcmd"].Items = StrOrList(0)
	s.Props["runcmd"].MinItems = 1
	s.Props["runcmd"].Items = &Schema{Alts: map[string]*Schema{
		"string": nil, "null": nil, "list": {Types: []string{"list"}, Items: str},
	}}
	s.Props["user"] = &Schema{Alts: map[string]*Schema{"string": nil, "map": Of(reflect.TypeFor[User]())}}
	s.Props["groups"] = &Schema{Alts: map[string]*Schema{
		"string": nil,
		"map":    groupsByName(),
		"list": {Types: []string{"list"}, MinItems: 1, Items: &Schema{Alts: map[string]*Schema{
			"string": nil, "map": groupsByName(),
		}}},
	}}
	// ssh_import_id is read by its kind, as cloud-init does (a string
	// is one ID); the schema wants a list of strings.
	s.Props["ssh_import_id"] = &Schema{Types: []string{"list"}, Items: str}
	s.Props["ssh_genkeytypes"].Items.Enum = []any{"dsa", "ecdsa", "ed25519", "rsa"}
	s.Props["ssh_keys"].KeyPattern = `^(dsa|ecdsa|ed25519|rsa)_(public|private|certificate)$`
	// Publishing host keys to the platform is not done.
	s.Props["ssh_publish_hostkeys"].Unsupported = true
	s.Props["ssh_pwauth"] = &Schema{Alts: map[string]*Schema{
		"boolean": {Types: []string{"boolean"}},
		"string":  {Deprecated: `ssh_pwauth as a string; use a boolean (or leave it out for "unchanged")`},
	}}
	s.Props["manage_etc_hosts"] = &Schema{Alts: map[string]*Schema{
		"boolean": {Types: []string{"boolean"}},
		"string":  {Check: "manage_etc_hosts"},
	}}
	// cloud-init's code takes null mount fields (drop the entry), its
	// schema does not; we follow the code.
	field := &Schema{Alts: map[string]*Schema{"string": nil, "null": nil}}
	s.Props["mounts"].Items.Items, s.Props["mounts"].Items.MinItems, s.Props["mounts"].Items.MaxItems = field, 1, 6
	s.Props["mount_default_fields"].Items = field
	s.Props["resize_rootfs"] = &Schema{Alts: map[string]*Schema{
		"boolean": {Types: []string{"boolean"}},
		"string":  {Types: []string{"string"}, Enum: []any{"noblock"}},
	}}
	s.Props["packages"].Items = &Schema{Alts: map[string]*Schema{
		"string": nil, "list": {Types: []string{"list"}, Items: str, MinItems: 2, MaxItems: 2},
	}}
	s.Props["merge_how"] = &Schema{Check: "merge_how"}
	s.Props["merge_type"] = &Schema{Check: "merge_how"}
	for _, k := range []string{"cloud_init_modules", "cloud_config_modules", "cloud_final_modules"} {
		s.Props[k] = &Schema{Check: "module_list"}
	}
}

// Key is a top-level key Config declares.
type Key struct {
	Name string
	Type reflect.Type
	// Null: what null means for the key (NullInvalid: the schema refuses
	// it).
	Null Null
	opts options
}

// Keys are Config's keys, in its order: the registry internal/userdata's
// schema and the docs read. Derived on each call, so that nothing is
// built at package initialisation.
func Keys() []Key {
	var out []Key
	for _, f := range fields(reflect.TypeFor[Config]()) {
		k := Key{Name: f.key, Type: f.Type, opts: f.opts}
		switch {
		case f.opts.nullEmpty:
			k.Null = NullEmpty
		case f.opts.null:
			k.Null = NullSkip
		}
		out = append(out, k)
	}
	return out
}

// Schemas are the top-level keys' schemas, by name.
func Schemas() map[string]*Schema {
	return Of(reflect.TypeFor[Config]()).Props
}

// Null is what null means for a key that may be null.
type Null int

const (
	// NullInvalid: the schema refuses null; Decode reads it as missing.
	NullInvalid Null = iota
	// NullSkip: null is valid, and the module does nothing.
	NullSkip
	// NullEmpty: null is valid, and the module runs as for an empty map
	// (cc_ntp: "Allow empty config which will install the package").
	NullEmpty
)

// keyIndex is Keys by name, built on the first lookup: deriving Keys
// walks Config's fields and parses their tags (about 300 allocations),
// which every Decode would otherwise repeat. Zero values: nothing is
// built at package initialisation.
var (
	keyIndexOnce sync.Once
	keyIndex     map[string]Key
)

// lookup is the registered key name, if any.
func lookup(name string) (Key, bool) {
	keyIndexOnce.Do(func() {
		keyIndex = map[string]Key{}
		for _, k := range Keys() {
			keyIndex[k.Name] = k
		}
	})
	k, ok := keyIndex[name]
	return k, ok
}

// Keyboard is cc_keyboard's keyboard.
type Keyboard struct {
	Layout  string `yaml:"layout" cc:"required"`
	Model   string `yaml:"model" cc:"default=pc105"`
	Variant string `yaml:"variant"`
	Options string `yaml:"options"`
}

// CACerts is cc_ca_certs's ca_certs (or ca-certs).
type CACerts struct {
	RemoveDefaults    bool     `yaml:"remove_defaults"`
	OldRemoveDefaults *bool    `yaml:"remove-defaults" cc:"deprecated=remove-defaults; use remove_defaults"`
	Trusted           []string `yaml:"trusted" cc:"min=1,untrimmed"`
}

// Shape: at least one key.
func (CACerts) Shape(s *Schema) { s.MinProps = 1 }

// NTP is cc_ntp's ntp.
type NTP struct {
	Pools     []string `yaml:"pools" cc:"unique"`
	Servers   []string `yaml:"servers" cc:"unique"`
	NTPClient string   `yaml:"ntp_client"`
	Enabled   bool     `yaml:"enabled" cc:"default=true,notfalse"`
	// UseDHCP is earlyinit's own: the DHCP lease's NTP servers too. 22.4's
	// schema refuses the key.
	UseDHCP bool       `yaml:"ntp_use_dhcp_config"`
	Config  *NTPConfig `yaml:"config"`
}

// NTPConfig is ntp.config: the client's overrides.
type NTPConfig struct {
	ConfPath    *string  `yaml:"confpath"`
	CheckExe    *string  `yaml:"check_exe"`
	ServiceName *string  `yaml:"service_name"`
	Template    *string  `yaml:"template"`
	Packages    []string `yaml:"packages" cc:"unique"`
}

// Shape: at least one key.
func (NTPConfig) Shape(s *Schema) { s.MinProps = 1 }

// RandomSeed is cc_seed_random's random_seed.
type RandomSeed struct {
	File            string   `yaml:"file" cc:"default=/dev/urandom"`
	Data            *string  `yaml:"data" cc:"strict"`
	Encoding        string   `yaml:"encoding" cc:"enum=raw|b64|base64|gz|gzip|b64-gz|gz+b64|gzip+base64|gz+base64|gzip+b64"`
	CommandRequired bool     `yaml:"command_required"`
	Command         []string `yaml:"command" cc:"strict"`
}

// APKRepos is cc_apk_configure's apk_repos, read as the module reads it
// (read_repos.go).
type APKRepos struct {
	PreserveRepositories bool        `yaml:"preserve_repositories"`
	AlpineRepo           *AlpineRepo `yaml:"alpine_repo" cc:"null"`
	LocalRepoBaseURL     APKText     `yaml:"local_repo_base_url"`
	given                bool
}

// Shape: at least one key.
func (APKRepos) Shape(s *Schema) { s.MinProps = 1 }

// AlpineRepo is apk_repos.alpine_repo. Err: it is not a map.
type AlpineRepo struct {
	BaseURL          APKText `yaml:"base_url"`
	CommunityEnabled bool    `yaml:"community_enabled" cc:"truthy"`
	TestingEnabled   bool    `yaml:"testing_enabled" cc:"truthy"`
	Version          APKText `yaml:"version" cc:"required"`
	Err              error
	given            bool
}

// Wireguard is cc_wireguard's wireguard.
type Wireguard struct {
	Interfaces     []WireguardInterface `yaml:"interfaces" cc:"required,min=1"`
	ReadinessProbe PyList               `yaml:"readinessprobe" cc:"unique"`
}

// WireguardInterface is one of wireguard.interfaces. 22.4's schema leaves
// its keys optional, but its module refuses an interface without all
// three (supplemental_schema_validation): so does earlyinit's schema.
// Err: what is wrong with the entry (read_repos.go).
type WireguardInterface struct {
	Name       string `yaml:"name" cc:"required"`
	ConfigPath string `yaml:"config_path" cc:"required"`
	Content    string `yaml:"content" cc:"required"`
	Err        error
}
