package ccfg

import "reflect"

// The configuration management modules' keys: ansible, puppet, chef,
// salt_minion, rh_subscription.

// Ansible is cc_ansible's ansible. It decodes itself (read_cfgmgmt.go):
// cc_ansible tests it, and install_method, package_name, ansible_config,
// galaxy, pull and setup_controller, for Python truth first; a false one
// of these keys reads as missing.
type Ansible struct {
	InstallMethod   string                  `yaml:"install_method" cc:"enum=distro|pip"`
	RunUser         *string                 `yaml:"run_user"`
	AnsibleConfig   string                  `yaml:"ansible_config"`
	SetupController *AnsibleSetupController `yaml:"setup_controller"`
	Galaxy          *AnsibleGalaxy          `yaml:"galaxy"`
	PackageName     string                  `yaml:"package_name"`
	Pull            *AnsiblePull            `yaml:"pull"`
	// Empty: ansible is false in Python: an empty map, which cc_ansible
	// skips (`if ansible_cfg:`), or "", 0, false or an empty list, which
	// earlyinit skips too (cc_ansible fails calling .get on them).
	Empty bool `yaml:"-"`
}

// AnsibleSetupController is ansible.setup_controller.
type AnsibleSetupController struct {
	Repositories []AnsibleRepository `yaml:"repositories"`
	RunAnsible   []AnsibleRun        `yaml:"run_ansible"`
}

// AnsibleRepository is one of ansible.setup_controller.repositories.
type AnsibleRepository struct {
	Path   string `yaml:"path" cc:"required,strict"`
	Source string `yaml:"source" cc:"required,strict"`
}

// AnsibleRun is one of ansible.setup_controller.run_ansible: its other
// keys are ansible-playbook's options. It decodes itself
// (read_cfgmgmt.go), keeping them all in Options.
type AnsibleRun struct {
	PlaybookName           string `yaml:"playbook_name" cc:"strict"`
	PlaybookDir            string `yaml:"playbook_dir" cc:"strict"`
	BecomePasswordFile     string `yaml:"become_password_file"`
	ConnectionPasswordFile string `yaml:"connection_password_file"`
	ListHosts              bool   `yaml:"list_hosts"`
	SyntaxCheck            bool   `yaml:"syntax_check"`
	Timeout                any    `yaml:"timeout"`
	VaultID                string `yaml:"vault_id"`
	VaultPasswordFile      string `yaml:"vault_password_file"`
	Background             any    `yaml:"background"`
	Check                  bool   `yaml:"check"`
	Diff                   bool   `yaml:"diff"`
	ModulePath             string `yaml:"module_path"`
	Poll                   any    `yaml:"poll"`
	Args                   string `yaml:"args"`
	ExtraVars              string `yaml:"extra_vars"`
	Forks                  any    `yaml:"forks"`
	Inventory              string `yaml:"inventory"`
	SCPExtraArgs           string `yaml:"scp_extra_args"`
	SFTPExtraArgs          string `yaml:"sftp_extra_args"`
	PrivateKey             string `yaml:"private_key"`
	Connection             string `yaml:"connection"`
	ModuleName             string `yaml:"module_name"`
	Sleep                  string `yaml:"sleep"`
	Tags                   string `yaml:"tags"`
	SkipTags               string `yaml:"skip_tags"`
	// Options are the entry's keys as given, playbook_name and
	// playbook_dir included: ansible-playbook's options.
	Options map[string]any `yaml:"-"`
}

// Shape: other keys; the counts are numbers, at least 0.
func (AnsibleRun) Shape(s *Schema) {
	s.KeyPattern = AnyKey
	for _, k := range []string{"timeout", "background", "poll", "forks"} {
		s.Props[k] = &Schema{Check: "non_negative"}
	}
}

// AnsibleGalaxy is ansible.galaxy. It decodes itself (read_cfgmgmt.go).
type AnsibleGalaxy struct {
	Actions []Argv `yaml:"actions" cc:"required"`
}

// Shape: each argument a single line.
func (AnsibleGalaxy) Shape(s *Schema) {
	s.Props["actions"].Items.Items.Pattern = `^.*\n?$`
	s.Props["actions"].Items.Items.PatternWhat = "a single line"
}

// AnsiblePull is ansible.pull: its keys are ansible-pull's options. It
// decodes itself (read_cfgmgmt.go), keeping them all in Options.
type AnsiblePull struct {
	AcceptHostKey bool   `yaml:"accept_host_key"`
	Clean         bool   `yaml:"clean"`
	Full          bool   `yaml:"full"`
	Diff          bool   `yaml:"diff"`
	SSHCommonArgs string `yaml:"ssh_common_args"`
	SCPExtraArgs  string `yaml:"scp_extra_args"`
	SFTPExtraArgs string `yaml:"sftp_extra_args"`
	PrivateKey    string `yaml:"private_key"`
	Checkout      string `yaml:"checkout"`
	ModulePath    string `yaml:"module_path"`
	Timeout       string `yaml:"timeout"`
	URL           string `yaml:"url" cc:"required"`
	Connection    string `yaml:"connection"`
	VaultID       string `yaml:"vault_id"`
	VaultPassword string `yaml:"vault_password_file"`
	ModuleName    string `yaml:"module_name"`
	Sleep         string `yaml:"sleep"`
	Tags          string `yaml:"tags"`
	SkipTags      string `yaml:"skip_tags"`
	PlaybookName  string `yaml:"playbook_name" cc:"required,strict"`
	// Options are pull's keys as given, playbook_name included:
	// ansible-pull's options.
	Options map[string]any `yaml:"-"`
}

// Puppet is cc_puppet's puppet. It decodes itself (read_cfgmgmt.go):
// Install, Cleanup and StartService are true when missing and false when
// null (util.get_cfg_option_bool with True); a null exec_args is Args'
// Other; a null conf or csr_attributes is an error. A string pointer is
// nil when missing or null.
type Puppet struct {
	Install           bool            `yaml:"install"`
	Version           string          `yaml:"version"`
	InstallType       *string         `yaml:"install_type" cc:"enum=packages|aio"`
	Collection        string          `yaml:"collection"`
	AIOInstallURL     *string         `yaml:"aio_install_url"`
	Cleanup           bool            `yaml:"cleanup"`
	ConfFile          *string         `yaml:"conf_file"`
	SSLDir            *string         `yaml:"ssl_dir"`
	CSRAttributesPath *string         `yaml:"csr_attributes_path"`
	PackageName       *string         `yaml:"package_name"`
	Exec              bool            `yaml:"exec"`
	ExecArgs          Args            `yaml:"exec_args"`
	StartService      bool            `yaml:"start_service"`
	Conf              *PuppetConf     `yaml:"conf"`
	CSRAttributes     *PuppetCSRAttrs `yaml:"csr_attributes"`
}

// PuppetConf is puppet.conf: puppet.conf's sections, written as given,
// and the CA's certificate. It decodes itself (read_cfgmgmt.go): each
// key but ca_cert is a section, maps all (null refused, as cloud-init's
// .items() fails on None), and ca_cert must be a string.
type PuppetConf struct {
	Main   map[string]any `yaml:"main"`
	Server map[string]any `yaml:"server"`
	Agent  map[string]any `yaml:"agent"`
	User   map[string]any `yaml:"user"`
	CACert *string        `yaml:"ca_cert"`
	// Sections are all the sections by name, main, server, agent, user
	// and any other (cc_puppet writes each), as given.
	Sections map[string]map[string]any `yaml:"-"`
}

// PuppetCSRAttrs is puppet.csr_attributes, written to csr_attributes.yaml
// as given. It decodes itself (read_cfgmgmt.go): All is the map as given;
// the two keys are set when they are maps.
type PuppetCSRAttrs struct {
	CustomAttributes  map[string]any `yaml:"custom_attributes"`
	ExtensionRequests map[string]any `yaml:"extension_requests"`
	All               map[string]any `yaml:"-"`
}

// Chef is cc_chef's chef. It decodes itself (read_cfgmgmt.go): Given
// holds the keys given, null included (client.rb's template writes a
// null key's line not at all, a missing key's with its default); a
// string pointer is nil when missing or null; a null exec_arguments is
// Args' Other; a null initial_attributes is an error.
type Chef struct {
	Directories            []string       `yaml:"directories" cc:"min=1"`
	ValidationCert         TruthyString   `yaml:"validation_cert"`
	ValidationKey          *string        `yaml:"validation_key"`
	FirstbootPath          *string        `yaml:"firstboot_path"`
	Exec                   bool           `yaml:"exec"`
	ClientKey              string         `yaml:"client_key"`
	EncryptedDataBagSecret string         `yaml:"encrypted_data_bag_secret"`
	Environment            *string        `yaml:"environment"`
	FileBackupPath         string         `yaml:"file_backup_path"`
	FileCachePath          string         `yaml:"file_cache_path"`
	JSONAttribs            string         `yaml:"json_attribs"`
	LogLevel               string         `yaml:"log_level"`
	LogLocation            string         `yaml:"log_location"`
	NodeName               *string        `yaml:"node_name"`
	OmnibusURL             *string        `yaml:"omnibus_url"`
	OmnibusURLRetries      *int           `yaml:"omnibus_url_retries"`
	OmnibusVersion         string         `yaml:"omnibus_version"`
	PIDFile                string         `yaml:"pid_file"`
	ServerURL              string         `yaml:"server_url"`
	ShowTime               bool           `yaml:"show_time"`
	SSLVerifyMode          string         `yaml:"ssl_verify_mode"`
	ValidationName         string         `yaml:"validation_name"`
	ForceInstall           bool           `yaml:"force_install"`
	InitialAttributes      map[string]any `yaml:"initial_attributes"`
	InstallType            *string        `yaml:"install_type" cc:"enum=packages|gems|omnibus"`
	// RunList goes to firstboot.json as given, of any kind (cc_chef's
	// json.dumps).
	RunList     any    `yaml:"run_list"`
	ChefLicense string `yaml:"chef_license"`
	// Keys the module's code reads that 22.4's schema lacks: refused.
	ExecArguments            Args    `yaml:"exec_arguments"`
	RubyVersion              *string `yaml:"ruby_version"`
	Version                  string  `yaml:"version"`
	DeleteValidationPostExec bool    `yaml:"delete_validation_post_exec"`
	Given                    Given   `yaml:"-"`
}

// Shape: directories unique by their text; run_list a list of strings;
// the keys 22.4's schema lacks refused; at least one key.
func (Chef) Shape(s *Schema) {
	s.Props["directories"].Check = "unique_scalars"
	s.Props["run_list"] = Of(reflect.TypeFor[[]string]())
	for _, k := range []string{"exec_arguments", "ruby_version", "version", "delete_validation_post_exec"} {
		s.Props[k] = &Schema{Check: "code_only"}
	}
	s.Check = "nonempty_map"
}

// SaltMinion is cc_salt_minion's salt_minion.
type SaltMinion struct {
	PkgName     string         `yaml:"pkg_name" cc:"default=salt-minion"`
	ServiceName string         `yaml:"service_name" cc:"default=salt-minion"`
	ConfigDir   string         `yaml:"config_dir" cc:"default=/etc/salt"`
	Conf        map[string]any `yaml:"conf"`
	Grains      map[string]any `yaml:"grains"`
	PublicKey   *string        `yaml:"public_key" cc:"strict"`
	PrivateKey  *string        `yaml:"private_key" cc:"strict"`
	PKIDir      *string        `yaml:"pki_dir"`
}

// RHSubscription is cc_rh_subscription's rh_subscription. Its values are
// Later: cc_rh_subscription checks them (and refuses a key it does not
// know, Unknown) only once subscription-manager says the system is not
// registered, and each where it uses it.
type RHSubscription struct {
	Username       Later[string] `yaml:"username"`
	Password       Later[string] `yaml:"password"`
	ActivationKey  Later[string] `yaml:"activation-key"`
	Org            Later[string] `yaml:"org"`
	AutoAttach     BoolWord      `yaml:"auto-attach"`
	ServiceLevel   Later[string] `yaml:"service-level"`
	AddPool        Later[Argv]   `yaml:"add-pool"`
	EnableRepo     Later[Argv]   `yaml:"enable-repo"`
	DisableRepo    Later[Argv]   `yaml:"disable-repo"`
	RHSMBaseURL    Later[string] `yaml:"rhsm-baseurl"`
	ServerHostname Later[string] `yaml:"server-hostname"`
	// Unknown are the keys given that the type does not declare, sorted.
	Unknown []string `yaml:"-"`
}

// Shape: org is a number, or (22.4's schema wants an integer; its module,
// and later schemas, take an organization's name or number as text) a
// string with a warning.
func (RHSubscription) Shape(s *Schema) {
	s.Props["org"] = &Schema{Alts: map[string]*Schema{
		"integer": nil,
		"string":  {Check: "org_string"},
	}}
}
