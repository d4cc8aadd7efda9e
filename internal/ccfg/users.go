package ccfg

import "reflect"

// The keys of users_groups, ssh, set_passwords, ssh_import_id and the
// console's key modules.

// User is an entry of users, user or system_info.default_user.
type User struct {
	Name              string   `yaml:"name"`
	ExpireDate        string   `yaml:"expiredate"`
	Gecos             string   `yaml:"gecos"`
	Groups            any      `yaml:"groups"`
	HomeDir           string   `yaml:"homedir"`
	Inactive          string   `yaml:"inactive"`
	OldLockPasswd     *bool    `yaml:"lock-passwd" cc:"deprecated=lock-passwd; use lock_passwd"`
	LockPasswd        *bool    `yaml:"lock_passwd"`
	NoCreateHome      bool     `yaml:"no_create_home"`
	NoLogInit         bool     `yaml:"no_log_init"`
	NoUserGroup       bool     `yaml:"no_user_group"`
	Passwd            string   `yaml:"passwd"`
	HashedPasswd      string   `yaml:"hashed_passwd"`
	PlainTextPasswd   string   `yaml:"plain_text_passwd"`
	CreateGroups      *bool    `yaml:"create_groups"`
	PrimaryGroup      string   `yaml:"primary_group"`
	SELinuxUser       string   `yaml:"selinux_user"`
	Shell             string   `yaml:"shell"`
	SnapUser          string   `yaml:"snapuser"`
	SSHAuthorizedKeys []string `yaml:"ssh_authorized_keys" cc:"min=1"`
	SSHImportID       []string `yaml:"ssh_import_id" cc:"min=1"`
	SSHRedirectUser   bool     `yaml:"ssh_redirect_user"`
	System            bool     `yaml:"system"`
	Sudo              any      `yaml:"sudo"`
	UID               any      `yaml:"uid"`
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
// string or a map by name.
type Users []any

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
	Expire bool  `yaml:"expire"`
	Users  []any `yaml:"users"`
	List   any   `yaml:"list" cc:"deprecated=chpasswd.list; use chpasswd.users"`
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
	EmitKeysToConsole bool `yaml:"emit_keys_to_console" cc:"required"`
}

// Earlyinit is earlyinit's own key.
type Earlyinit struct {
	InjectUserPassword bool `yaml:"inject_user_password"`
}
