package imagecfg

import (
	"reflect"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/userdata"
)

// cfgOf builds a Config from YAML, as Load would have merged it.
func cfgOf(t *testing.T, y string, os OSRelease) *Config {
	t.Helper()
	v, err := userdata.LoadYAML([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	m, _ := v.(map[string]any)
	return &Config{Raw: m, OS: os}
}

func checkWarns(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDatasourceAccessors: datasource_list, datasource.<Name> (any case),
// network: {config: disabled} and preserve_hostname, with cloud-init's
// defaults and a warning for each value of the wrong type.
func TestDatasourceAccessors(t *testing.T) {
	for _, tt := range []struct {
		name     string
		yaml     string
		list     []string
		openst   map[string]any
		netOff   bool
		preserve bool
		warns    []string
	}{{
		name: "unset",
		yaml: "{}",
	}, {
		name:     "set",
		yaml:     "datasource_list: [ ConfigDrive , OpenStack, None ]\ndatasource: {OpenStack: {max_wait: 10}, NoCloud: {seedfrom: /x}}\nnetwork: {config: disabled}\npreserve_hostname: true\n",
		list:     []string{"ConfigDrive", "OpenStack", "None"},
		openst:   map[string]any{"max_wait": 10},
		netOff:   true,
		preserve: true,
	}, {
		name:     "any case, strings for booleans",
		yaml:     "datasource: {openstack: {timeout: 2}}\nnetwork: {config: {version: 2}}\npreserve_hostname: 'on'\ndatasource_list: []\n",
		list:     []string{},
		openst:   map[string]any{"timeout": 2},
		preserve: true,
	}, {
		name:   "exact spelling wins",
		yaml:   "datasource: {openstack: {timeout: 2}, OpenStack: {timeout: 3}}\n",
		openst: map[string]any{"timeout": 3},
		warns:  []string{"cloud.cfg: datasource.openstack: another spelling of a datasource already given: ignored"},
	}, {
		name: "wrong types",
		yaml: "datasource_list: ConfigDrive\ndatasource: {OpenStack: [1], Ec2: null}\nnetwork: disabled\npreserve_hostname: maybe\n",
		warns: []string{
			"cloud.cfg: datasource_list: want a list of datasource names, got a string: ignored",
			"cloud.cfg: datasource.OpenStack: want a map of settings, got a list: ignored",
			"cloud.cfg: network: want a map, got a string: ignored",
			"cloud.cfg: preserve_hostname: want a boolean, got a string that is not one: false",
		},
	}, {
		name:  "bad list entries",
		yaml:  "datasource_list: [NoCloud, 7, '', None]\npreserve_hostname: 1\ndatasource: 3\n",
		list:  []string{"NoCloud", "None"},
		warns: []string{"cloud.cfg: datasource_list[1]: want a datasource name, got a number: skipped", "cloud.cfg: datasource_list[2]: want a datasource name, got an empty string: skipped", "cloud.cfg: datasource: want a map of datasource names to settings, got a number: ignored", "cloud.cfg: preserve_hostname: want a boolean, got a number: false"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			c := cfgOf(t, tt.yaml, OSRelease{})
			if got := c.DatasourceList(); !reflect.DeepEqual(got, tt.list) {
				t.Errorf("DatasourceList() = %#v, want %#v", got, tt.list)
			}
			if got := c.Datasource("OpenStack"); !reflect.DeepEqual(got, tt.openst) {
				t.Errorf("Datasource(OpenStack) = %v, want %v", got, tt.openst)
			}
			if got := c.NetworkDisabled(); got != tt.netOff {
				t.Errorf("NetworkDisabled() = %v, want %v", got, tt.netOff)
			}
			if got := c.PreserveHostname(); got != tt.preserve {
				t.Errorf("PreserveHostname() = %v, want %v", got, tt.preserve)
			}
			checkWarns(t, c.Check(), tt.warns)
		})
	}
}

// TestDefaultUser: system_info.default_user as given (groups as a list or
// a string, sudo as a rule, a list or false, lock_passwd true unless
// said), or the distribution's default when it is missing or unusable.
func TestDefaultUser(t *testing.T) {
	rocky := OSRelease{ID: "rocky", IDLike: []string{"rhel", "centos", "fedora"}}
	for _, tt := range []struct {
		name   string
		yaml   string
		os     OSRelease
		want   User
		distro string
		warns  []string
	}{{
		name:   "none, no os-release: Debian's",
		yaml:   "{}",
		want:   DebianDefaultUser(),
		distro: "",
	}, {
		name:   "none, Rocky",
		yaml:   "{}",
		os:     rocky,
		want:   User{Name: "rocky", Gecos: "rocky Cloud User", Groups: []string{"adm", "systemd-journal"}, Shell: "/bin/bash", Sudo: []string{"ALL=(ALL) NOPASSWD:ALL"}, LockPasswd: true},
		distro: "rocky",
	}, {
		name: "the image's, a Rocky cloud.cfg",
		yaml: `system_info:
  distro: rhel
  default_user:
    name: rocky
    lock_passwd: true
    gecos: Rocky Cloud User
    groups: [adm, systemd-journal]
    sudo: ["ALL=(ALL) NOPASSWD:ALL"]
    shell: /bin/bash
`,
		want:   User{Name: "rocky", Gecos: "Rocky Cloud User", Groups: []string{"adm", "systemd-journal"}, Shell: "/bin/bash", Sudo: []string{"ALL=(ALL) NOPASSWD:ALL"}, LockPasswd: true},
		distro: "rhel",
	}, {
		name:   "strings for groups and sudo, lock_passwd false",
		yaml:   "system_info: {default_user: {name: ops, groups: 'wheel, adm ,', sudo: 'ALL=(ALL) ALL', lock_passwd: false, primary_group: ops, homedir: /srv/ops, system: false}}\n",
		os:     rocky,
		want:   User{Name: "ops", Groups: []string{"wheel", "adm"}, Sudo: []string{"ALL=(ALL) ALL"}, PrimaryGroup: "ops", Homedir: "/srv/ops"},
		distro: "rocky",
	}, {
		name: "sudo false, keys not supported",
		yaml: "system_info: {default_user: {name: ops, sudo: false, doas: [permit nopass ops], uid: 1000}}\n",
		want: User{Name: "ops", LockPasswd: true},
		warns: []string{
			"cloud.cfg: system_info.default_user.doas: not supported by earlyinit for the default user: ignored",
			"cloud.cfg: system_info.default_user.uid: not supported by earlyinit for the default user: ignored",
		},
	}, {
		name:   "no name: the distribution's",
		yaml:   "system_info: {default_user: {groups: [wheel]}, distro: 7}\n",
		os:     OSRelease{ID: "fedora"},
		want:   VariantDefaultUser("fedora"),
		distro: "fedora",
		warns: []string{
			"cloud.cfg: system_info.default_user.name: want a user name, got null: the distribution's default user is used",
			"cloud.cfg: system_info.distro: want a distribution name, got a number: ignored",
		},
	}, {
		name: "wrong types",
		yaml: "system_info: {default_user: {name: ops, gecos: 1, groups: {a: b}, sudo: true, lock_passwd: nope, shell: [sh]}}\n",
		want: User{Name: "ops"},
		warns: []string{
			"cloud.cfg: system_info.default_user.gecos: want a string, got a number: ignored",
			"cloud.cfg: system_info.default_user.shell: want a string, got a list: ignored",
			"cloud.cfg: system_info.default_user.groups: want a list of groups or a comma-separated string, got a map: ignored",
			"cloud.cfg: system_info.default_user.sudo: want a sudo rule, a list of them or false, got true: no rule",
			"cloud.cfg: system_info.default_user.lock_passwd: want a boolean, got a string that is not one: false",
		},
	}, {
		name:   "default_user not a map",
		yaml:   "system_info: {default_user: ops}\n",
		os:     OSRelease{ID: "ubuntu"},
		want:   VariantDefaultUser("ubuntu"),
		distro: "ubuntu",
		warns:  []string{"cloud.cfg: system_info.default_user: want a map, got a string: the distribution's default user is used"},
	}, {
		name:  "system_info not a map",
		yaml:  "system_info: [1]\n",
		want:  DebianDefaultUser(),
		warns: []string{"cloud.cfg: system_info: want a map, got a list: ignored"},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			c := cfgOf(t, tt.yaml, tt.os)
			if got := c.DefaultUser(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("DefaultUser() =\n%+v, want\n%+v", got, tt.want)
			}
			if got := c.Distro(); got != tt.distro {
				t.Errorf("Distro() = %q, want %q", got, tt.distro)
			}
			checkWarns(t, c.Check(), tt.warns)
		})
	}
}

// TestModuleLists: entries as names, [name, frequency, args...] and
// {name, frequency, args}; names formed as cloud-init forms them; a bad
// frequency keeps the module with its own; bad entries are skipped; a
// list not given is empty once another is.
func TestModuleLists(t *testing.T) {
	for _, tt := range []struct {
		name  string
		yaml  string
		want  ModuleLists
		warns []string
	}{{
		name: "none",
		yaml: "{}",
	}, {
		name: "names and frequencies",
		yaml: `cloud_init_modules:
 - migrator
 - write-files
 - [users-groups, always]
 - [cc_ssh.py, once-per-instance, a, 2]
 - ''
 - {name: bootcmd, frequency: once, args: x}
cloud_final_modules: []
`,
		want: ModuleLists{Set: true, Init: []ModuleEntry{
			{Name: "migrator", Given: "migrator", List: initModules},
			{Name: "write_files", Given: "write-files", List: initModules},
			{Name: "users_groups", Given: "users-groups", Frequency: "always", List: initModules},
			{Name: "ssh", Given: "cc_ssh.py", Frequency: "once-per-instance", Args: []any{"a", 2}, List: initModules},
			{Name: "bootcmd", Given: "bootcmd", Frequency: "once", Args: []any{"x"}, List: initModules},
		}},
	}, {
		name: "bad frequency, bad entries",
		yaml: "cloud_config_modules: [[runcmd, weekly], [timezone, 1], 7, [3], {frequency: always}, [ntp, per-instance]]\ncloud_final_modules: final_message\n",
		want: ModuleLists{Set: true, Config: []ModuleEntry{
			{Name: "runcmd", Given: "runcmd", List: configModules},
			{Name: "timezone", Given: "timezone", List: configModules},
			{Name: "ntp", Given: "ntp", List: configModules},
		}},
		warns: []string{
			"cloud.cfg: cloud_config_modules[0]: module runcmd: unknown frequency (want once-per-instance, always, once): the module's own is used",
			"cloud.cfg: cloud_config_modules[1]: module timezone: want a frequency (once-per-instance, always, once), got a number: the module's own is used",
			"cloud.cfg: cloud_config_modules[2]: want a module name, a list or a map, got a number: skipped",
			"cloud.cfg: cloud_config_modules[3]: want a module name, got a number: skipped",
			"cloud.cfg: cloud_config_modules[4]: a module map without a name: skipped",
			"cloud.cfg: cloud_config_modules[5]: module ntp: unknown frequency (want once-per-instance, always, once): the module's own is used",
			"cloud.cfg: cloud_final_modules: want a list of modules, got a string: ignored",
		},
	}, {
		name: "null list is set and empty",
		yaml: "cloud_final_modules: null\n",
		want: ModuleLists{Set: true},
	}} {
		t.Run(tt.name, func(t *testing.T) {
			c := cfgOf(t, tt.yaml, OSRelease{})
			if got := c.ModuleLists(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ModuleLists() =\n%+v\nwant\n%+v", got, tt.want)
			}
			checkWarns(t, c.Check(), tt.warns)
		})
	}
}

// TestNilConfig: the accessors of a nil or empty Config give the
// defaults and do not panic.
func TestNilConfig(t *testing.T) {
	var c *Config
	if c.DatasourceList() != nil || c.Datasource("x") != nil || c.NetworkDisabled() || c.PreserveHostname() || c.Distro() != "" || c.ModuleLists().Set {
		t.Error("nil Config: not the defaults")
	}
	if !reflect.DeepEqual(c.DefaultUser(), DebianDefaultUser()) {
		t.Error("nil Config: default user not Debian's")
	}
}
