package ccfg

// Apt is cc_apt_configure's apt. Its keys are read as the module reads
// them (read_repos.go), each on its own: what is wrong with one is
// Err's, for the module to report when it comes to the key.
type Apt struct {
	// PreserveSourcesList is nil when not given: sources.list is kept
	// unless it is false (util.is_false).
	PreserveSourcesList *bool      `yaml:"preserve_sources_list" cc:"notfalse"`
	GenerateMirrorlists bool       `yaml:"generate_mirrorlists"`
	DisableSuites       PyList     `yaml:"disable_suites" cc:"min=1,unique"`
	Primary             AptMirrors `yaml:"primary" cc:"min=1"`
	Security            AptMirrors `yaml:"security" cc:"min=1"`
	AddAptRepoMatch     PyString   `yaml:"add_apt_repo_match"`
	DebconfSelections   AptDebconf `yaml:"debconf_selections"`
	SourcesList         PyString   `yaml:"sources_list"`
	Conf                PyString   `yaml:"conf"`
	HTTPSProxy          PyString   `yaml:"https_proxy"`
	HTTPProxy           PyString   `yaml:"http_proxy"`
	Proxy               PyString   `yaml:"proxy"`
	FTPProxy            PyString   `yaml:"ftp_proxy"`
	Sources             AptSources `yaml:"sources"`
	errs                map[string]error
}

// Shape: at least one key.
func (Apt) Shape(s *Schema) { s.MinProps = 1 }

// AptMirror is one of apt.primary or apt.security.
type AptMirror struct {
	Arches    PyList   `yaml:"arches" cc:"required,min=1"`
	URI       PyString `yaml:"uri"`
	Search    PyList   `yaml:"search" cc:"min=1"`
	SearchDNS bool     `yaml:"search_dns"`
	KeyID     PyString `yaml:"keyid"`
	Key       PyString `yaml:"key"`
	Keyserver PyString `yaml:"keyserver"`
}

// AptDebconf is apt.debconf_selections: debconf-set-selections lines by
// any name.
type AptDebconf map[string]string

// Shape: at least one key.
func (AptDebconf) Shape(s *Schema) { s.MinProps = 1 }

// AptSource is one of apt.sources. Err: the entry is not a map.
type AptSource struct {
	Source    PyString `yaml:"source"`
	KeyID     PyString `yaml:"keyid"`
	Key       PyString `yaml:"key"`
	Keyserver PyString `yaml:"keyserver"`
	Filename  PyString `yaml:"filename"`
	Append    bool     `yaml:"append" cc:"default=true,notfalse"`
	Err       error
}

// Shape: at least one key.
func (AptSource) Shape(s *Schema) { s.MinProps = 1 }

// YumRepos is cc_yum_add_repo's yum_repos: repositories by id, each its
// options as given (YumRepo is their schema).
type YumRepos map[string]FreeForm[YumRepo]

// Shape: at least one repository, ids of letters, digits, blanks and
// the characters between " " and "_" (22.4's pattern, its range
// included).
func (YumRepos) Shape(s *Schema) {
	s.MinProps = 1
	s.KeyPattern = `^[0-9a-zA-Z -_]+$`
}

// YumRepo is the schema of one of yum_repos: its other options are
// written to the repository file as they are (integers, booleans or
// strings).
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
	Repos  []FreeForm[ZypperRepo]   `yaml:"repos" cc:"min=1"`
	Config FreeForm[map[string]any] `yaml:"config"`
}

// Shape: at least one key; any other key.
func (Zypper) Shape(s *Schema) {
	s.MinProps = 1
	s.KeyPattern = AnyKey
}

// ZypperRepo is the schema of one of zypper.repos: its other keys are
// the .repo file's.
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
