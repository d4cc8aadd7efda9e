package ccfg

import "reflect"

// The keys of users_groups, ssh, set_passwords, ssh_import_id and the
// console's key modules.

// User is an entry of users, user or system_info.default_user. Its keys
// are read as cloud-init's Distro.create_user and add_user read their
// keyword arguments, by the kind of the value given (PyValue): the schema
// says what is valid, the module what each kind does.
type User struct {
	Name              PyString `yaml:"name"`
	ExpireDate        PyString `yaml:"expiredate"`
	Gecos             PyString `yaml:"gecos"`
	Groups            PyValue  `yaml:"groups"`
	HomeDir           PyString `yaml:"homedir"`
	Inactive          PyString `yaml:"inactive"`
	OldLockPasswd     PyBool   `yaml:"lock-passwd" cc:"deprecated=lock-passwd; use lock_passwd"`
	LockPasswd        PyBool   `yaml:"lock_passwd"`
	NoCreateHome      PyBool   `yaml:"no_create_home"`
	NoLogInit         PyBool   `yaml:"no_log_init"`
	NoUserGroup       PyBool   `yaml:"no_user_group"`
	Passwd            PyString `yaml:"passwd"`
	HashedPasswd      PyString `yaml:"hashed_passwd"`
	PlainTextPasswd   PyString `yaml:"plain_text_passwd"`
	CreateGroups      PyBool   `yaml:"create_groups"`
	PrimaryGroup      PyString `yaml:"primary_group"`
	SELinuxUser       PyString `yaml:"selinux_user"`
	Shell             PyString `yaml:"shell"`
	SnapUser          PyString `yaml:"snapuser"`
	SSHAuthorizedKeys PyList   `yaml:"ssh_authorized_keys" cc:"min=1"`
	SSHImportID       PyList   `yaml:"ssh_import_id" cc:"min=1"`
	SSHRedirectUser   PyBool   `yaml:"ssh_redirect_user"`
	System            PyBool   `yaml:"system"`
	Sudo              PyValue  `yaml:"sudo"`
	UID               PyValue  `yaml:"uid"`

	truthy, declined bool // Truthy, Declined
}

// Shape: a name (or a snap user); groups, sudo and uid of several kinds.
func (User) Shape(s *Schema) {
	s.OneRequired = []string{"name", "snapuser"}
	s.Props["expiredate"].Pattern, s.Props["expiredate"].PatternWhat = `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`, "a date (YYYY-MM-DD)"
	s.Props["groups"] = &Schema{Alts: map[string]*Schema{
		"string": nil,
		"list":   {Types: []string{"list"}, Items: &Schema{Types: []string{"string"}}, MinItems: 1},
		"map": {Types: []string{"map"}, KeyPattern: AnyKey, Values: &Schema{Types: []string{"null"}},
			Deprecated: "groups as a map; use a list"},
	}}
	s.Props["sudo"] = &Schema{Alts: map[string]*Schema{
		"string":  nil,
		"null":    nil,
		"list":    {Types: []string{"list"}, Items: &Schema{Types: []string{"string"}}},
		"boolean": {Types: []string{"boolean"}, Deprecated: "sudo as a boolean; give a sudoers rule, or null for none"},
	}}
	s.Props["uid"] = &Schema{Alts: map[string]*Schema{
		"integer": nil,
		"string":  {Deprecated: "uid as a string; use an integer"},
	}}
}

// Users is users: a list of entries (a name, a list of names, or a map),
// or, as cloud-init's normalize_users_groups takes them, a comma-separated
// string or a map by name; decoded, its users by name (DecodeCC).
type Users []User

// Schema is users'.
func (Users) Schema() *Schema {
	return &Schema{Alts: map[string]*Schema{
		"string": nil,
		"map":    nil,
		"list": {Types: []string{"list"}, MinItems: 1, Items: &Schema{Alts: map[string]*Schema{
			"string": nil,
			"list":   {Types: []string{"list"}, Items: &Schema{Types: []string{"string"}}},
			"map":    Of(reflect.TypeFor[User]()),
		}}},
	}}
}

// groupsByName is a map of groups to their members.
func groupsByName() *Schema {
	return &Schema{Types: []string{"map"}, KeyPattern: AnyKey, Values: StrOrList(1)}
}

// Chpasswd is cc_set_passwords' chpasswd.
type Chpasswd struct {
	Expire bool           `yaml:"expire"`
	Users  []ChpasswdUser `yaml:"users"`
	List   ChpasswdList   `yaml:"list" cc:"deprecated=chpasswd.list; use chpasswd.users"`
	// ListText: list was given as a (multi-line) string.
	ListText bool
}

// Shape: a users entry is {name, type: RANDOM} or {name, password, type:
// hash|text} (userdata's chpasswd_user check); list is a string of lines
// or a list of user:password pairs.
func (Chpasswd) Shape(s *Schema) {
	s.Props["users"].Items = &Schema{Check: "chpasswd_user"}
	s.Props["list"] = &Schema{Deprecated: "chpasswd.list; use chpasswd.users", Alts: map[string]*Schema{
		"string": nil,
		"list": {Types: []string{"list"}, MinItems: 1, Items: &Schema{Types: []string{"string"},
			Pattern: `^.+:.+$`, PatternWhat: "a user:password pair"}},
	}}
}

// SSHPublishHostkeys is ssh_publish_hostkeys (not done by earlyinit).
type SSHPublishHostkeys struct {
	Enabled   bool     `yaml:"enabled"`
	Blacklist []string `yaml:"blacklist"`
}

// SSHConsole is cc_keys_to_console's ssh.
type SSHConsole struct {
	// EmitKeysToConsole: nil when null (the keys are printed, as
	// get_cfg_by_path(cfg, ("ssh", "emit_keys_to_console"), True) reads
	// it), else false only for what util.is_false takes.
	EmitKeysToConsole *bool `yaml:"emit_keys_to_console" cc:"required,notfalse"`
}

// Earlyinit is earlyinit's own key.
type Earlyinit struct {
	InjectUserPassword bool `yaml:"inject_user_password"`
}
