package ccfg

import "reflect"

// Key is a top-level cloud-config key whose shape a type declares.
type Key struct {
	Name string
	Type reflect.Type
	// Null, when set, makes null valid: NullSkip (the module does
	// nothing) or NullEmpty (the module runs as for an empty map).
	Null Null
	// Deprecated, when set, is the warning the key gets (an old name).
	Deprecated string
}

// Keys are the top-level keys declared here, and their types: the
// registry internal/userdata's schema and the docs read. A function, not
// a variable, so that nothing is built at package initialisation.
func Keys() []Key {
	return []Key{
		{Name: "keyboard", Type: reflect.TypeFor[Keyboard]()},
		{Name: "ca_certs", Type: reflect.TypeFor[CACerts]()},
		{Name: "ca-certs", Type: reflect.TypeFor[CACerts](), Deprecated: "ca-certs; use ca_certs"},
		{Name: "ntp", Type: reflect.TypeFor[NTP](), Null: NullEmpty},
		{Name: "random_seed", Type: reflect.TypeFor[RandomSeed]()},
		{Name: "apk_repos", Type: reflect.TypeFor[APKRepos]()},
		{Name: "wireguard", Type: reflect.TypeFor[Wireguard](), Null: NullSkip},
		{Name: "apt", Type: reflect.TypeFor[Apt]()},
		{Name: "yum_repos", Type: reflect.TypeFor[YumRepos]()},
		{Name: "yum_repo_dir", Type: reflect.TypeFor[string]()},
		{Name: "zypper", Type: reflect.TypeFor[Zypper]()},
		{Name: "rsyslog", Type: reflect.TypeFor[Rsyslog]()},
		{Name: "device_aliases", Type: reflect.TypeFor[map[string]string]()},
		{Name: "disk_setup", Type: reflect.TypeFor[map[string]DiskSetup]()},
		{Name: "fs_setup", Type: reflect.TypeFor[[]FSSetup]()},
	}
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

// lookup is the registered key name, if any.
func lookup(name string) (Key, bool) {
	for _, k := range Keys() {
		if k.Name == name {
			return k, true
		}
	}
	return Key{}, false
}

// KeySchema is the schema of a registered key, its Null and Deprecated
// applied.
func KeySchema(k Key) *Schema {
	s := *Of(k.Type)
	if k.Null != NullInvalid {
		s.Types = append(append([]string(nil), s.Types...), "null")
	}
	s.Deprecated = k.Deprecated
	return &s
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
	Enabled   bool     `yaml:"enabled" cc:"default=true"`
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

// APKRepos is cc_apk_configure's apk_repos.
type APKRepos struct {
	PreserveRepositories bool        `yaml:"preserve_repositories"`
	AlpineRepo           *AlpineRepo `yaml:"alpine_repo" cc:"null"`
	LocalRepoBaseURL     *string     `yaml:"local_repo_base_url"`
}

// Shape: at least one key.
func (APKRepos) Shape(s *Schema) { s.MinProps = 1 }

// AlpineRepo is apk_repos.alpine_repo.
type AlpineRepo struct {
	BaseURL          *string `yaml:"base_url"`
	CommunityEnabled bool    `yaml:"community_enabled" cc:"truthy"`
	TestingEnabled   bool    `yaml:"testing_enabled" cc:"truthy"`
	Version          string  `yaml:"version" cc:"required"`
}

// Wireguard is cc_wireguard's wireguard.
type Wireguard struct {
	Interfaces     []WireguardInterface `yaml:"interfaces" cc:"required,min=1"`
	ReadinessProbe []string             `yaml:"readinessprobe" cc:"unique"`
}

// WireguardInterface is one of wireguard.interfaces. 22.4's schema leaves
// its keys optional, but its module refuses an interface without all
// three (supplemental_schema_validation): so does earlyinit's schema.
type WireguardInterface struct {
	Name       string `yaml:"name" cc:"required"`
	ConfigPath string `yaml:"config_path" cc:"required"`
	Content    string `yaml:"content" cc:"required"`
}
