package ccfg

// Apt is cc_apt_configure's apt.
type Apt struct {
	PreserveSourcesList bool                 `yaml:"preserve_sources_list"`
	GenerateMirrorlists bool                 `yaml:"generate_mirrorlists"`
	DisableSuites       []string             `yaml:"disable_suites" cc:"min=1,unique"`
	Primary             []AptMirror          `yaml:"primary" cc:"min=1"`
	Security            []AptMirror          `yaml:"security" cc:"min=1"`
	AddAptRepoMatch     string               `yaml:"add_apt_repo_match"`
	DebconfSelections   AptDebconf           `yaml:"debconf_selections"`
	SourcesList         string               `yaml:"sources_list"`
	Conf                string               `yaml:"conf"`
	HTTPSProxy          string               `yaml:"https_proxy"`
	HTTPProxy           string               `yaml:"http_proxy"`
	Proxy               string               `yaml:"proxy"`
	FTPProxy            string               `yaml:"ftp_proxy"`
	Sources             map[string]AptSource `yaml:"sources"`
}

// Shape: at least one key.
func (Apt) Shape(s *Schema) { s.MinProps = 1 }

// AptMirror is one of apt.primary or apt.security.
type AptMirror struct {
	Arches    []string `yaml:"arches" cc:"required,min=1"`
	URI       string   `yaml:"uri"`
	Search    []string `yaml:"search" cc:"min=1"`
	SearchDNS bool     `yaml:"search_dns"`
	KeyID     string   `yaml:"keyid"`
	Key       string   `yaml:"key"`
	Keyserver string   `yaml:"keyserver"`
}

// AptDebconf is apt.debconf_selections: debconf-set-selections lines by
// any name.
type AptDebconf map[string]string

// Shape: at least one key.
func (AptDebconf) Shape(s *Schema) { s.MinProps = 1 }

// AptSource is one of apt.sources.
type AptSource struct {
	Source    string `yaml:"source"`
	KeyID     string `yaml:"keyid"`
	Key       string `yaml:"key"`
	Keyserver string `yaml:"keyserver"`
	Filename  string `yaml:"filename"`
	Append    bool   `yaml:"append" cc:"default=true"`
}

// Shape: at least one key.
func (AptSource) Shape(s *Schema) { s.MinProps = 1 }

// YumRepos is cc_yum_add_repo's yum_repos: repositories by id.
type YumRepos map[string]YumRepo

// Shape: at least one repository, ids of letters, digits, blanks and
// the characters between " " and "_" (22.4's pattern, its range
// included).
func (YumRepos) Shape(s *Schema) {
	s.MinProps = 1
	s.KeyPattern = `^[0-9a-zA-Z -_]+$`
}

// YumRepo is one of yum_repos: its other options are written to the
// repository file as they are (integers, booleans or strings).
type YumRepo struct {
	BaseURL string `yaml:"baseurl" cc:"required"`
	Name    string `yaml:"name"`
	Enabled bool   `yaml:"enabled"`
}

// Shape: other options by name.
func (YumRepo) Shape(s *Schema) {
	s.KeyPattern = `^[0-9a-zA-Z_]+$`
	s.Values = &Schema{Types: []string{"integer", "boolean", "string"}}
}

// Zypper is cc_zypper_add_repo's zypper. Other keys are zypp.conf's
// (zypper.config) in 22.4's schema too: it allows them.
type Zypper struct {
	Repos  []ZypperRepo   `yaml:"repos" cc:"min=1"`
	Config map[string]any `yaml:"config"`
}

// Shape: at least one key; any other key.
func (Zypper) Shape(s *Schema) {
	s.MinProps = 1
	s.KeyPattern = AnyKey
}

// ZypperRepo is one of zypper.repos: its other keys are the .repo
// file's.
type ZypperRepo struct {
	ID      string `yaml:"id" cc:"required"`
	BaseURL string `yaml:"baseurl" cc:"required"`
}

// Shape: any other key.
func (ZypperRepo) Shape(s *Schema) { s.KeyPattern = AnyKey }

// Rsyslog is cc_rsyslog's rsyslog. 22.4's module also takes the list of
// configs it had before the map (with a deprecation warning); its schema
// does not, nor does earlyinit's. Decode reads that list as configs, with
// Legacy set (DecodeCC).
type Rsyslog struct {
	ConfigDir            string                   `yaml:"config_dir" cc:"strict,default=/etc/rsyslog.d"`
	ConfigFilename       string                   `yaml:"config_filename" cc:"strict,default=20-cloud-config.conf"`
	Configs              []RsyslogConfig          `yaml:"configs"`
	Remotes              map[string]RsyslogRemote `yaml:"remotes"`
	ServiceReloadCommand RsyslogReload            `yaml:"service_reload_command"`
	Legacy               bool
}

// Shape: a config is a line of rsyslog configuration or a file; remotes
// a map (its values checked by the module); the reload command is "auto"
// or an argv.
func (Rsyslog) Shape(s *Schema) {
	s.Props["remotes"] = &Schema{Types: []string{"map"}}
	s.Props["configs"].Items = &Schema{Alts: map[string]*Schema{
		"string": nil,
		"map": {Types: []string{"map"}, Required: []string{"content"}, Props: map[string]*Schema{
			"filename": {Types: []string{"string"}}, "content": {Types: []string{"string"}},
		}},
	}}
	s.Props["service_reload_command"] = &Schema{Alts: map[string]*Schema{
		"string": {Types: []string{"string"}, Enum: []any{"auto"}},
		"list":   {Types: []string{"list"}, Items: &Schema{Types: []string{"string"}}},
	}}
}
