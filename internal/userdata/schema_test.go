package userdata

import (
	"fmt"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		// want lists Error() strings; a "W " prefix marks a warning.
		want []string
	}{
		{name: "valid", doc: `#cloud-config
hostname: web-1
fqdn: web-1.example.com
preserve_hostname: false
manage_etc_hosts: localhost
bootcmd:
  - echo boot
  - [sh, -c, "echo $INSTANCE_ID"]
runcmd:
  - [ls, -l]
  - echo hi
write_files:
  - path: /etc/motd
    content: hello
    permissions: "0644"
    encoding: text/plain
    owner: root:root
    append: true
    defer: false
  - path: /etc/bin
    content: !!binary aGk=
    encoding: b64
users:
  - default
  - name: bob
    gecos: Bob
    groups: [adm, sudo]
    shell: /bin/bash
    sudo: "ALL=(ALL) NOPASSWD:ALL"
    lock_passwd: true
    ssh_authorized_keys: [ssh-ed25519 AAAA bob]
    uid: 1001
    expiredate: "2030-01-01"
groups: [admins, {cloud-users: [bob]}]
ssh_authorized_keys: [ssh-rsa AAAA root]
ssh_keys: {ed25519_private: x, ed25519_public: y}
ssh_genkeytypes: [ed25519, rsa]
disable_root: true
ssh_pwauth: false
chpasswd:
  expire: false
  users:
    - {name: bob, password: "$6$x", type: hash}
    - {name: alice, type: RANDOM}
timezone: Europe/Paris
mounts:
  - [/dev/vdb, /mnt, auto, "defaults,nofail", "0", "2"]
  - [swap, null]
swap: {filename: /swap.img, size: auto, maxsize: 2G}
resolv_conf: {nameservers: [1.1.1.1], domain: example.com}
manage_resolv_conf: true
final_message: done after $UPTIME
phone_home: {url: "http://example.com/$INSTANCE_ID/", post: all, tries: 3}
power_state: {mode: reboot, delay: 5, timeout: 30, condition: true}
vendor_data: {enabled: true, prefix: [/usr/bin/ltrace]}
network: {config: disabled}
merge_how: list(append)+dict(recurse_array)+str()
`},
		{name: "no header", doc: "hostname: x\n", want: []string{`f:1:1: a cloud-config file must begin with "#cloud-config"`}},
		{name: "archive header", doc: "#cloud-config-archive\n- a\n", want: []string{`f:1:1: a cloud-config file must begin with "#cloud-config"`}},
		{name: "bad YAML: unclosed flow list", doc: "#cloud-config\na: [\n  b\nc: d\n", want: []string{"f:2: invalid YAML: did not find expected ',' or ']' (in the collection starting here)"}},
		{name: "bad YAML: scanner", doc: "#cloud-config\n\n\na: b: c\n", want: []string{"f:4: invalid YAML: mapping values are not allowed in this context"}},
		{name: "bad YAML: tab", doc: "#cloud-config\nx: 1\na:\n\t- b\n", want: []string{"f:4: invalid YAML: found character that cannot start any token"}},
		{name: "two documents", doc: "#cloud-config\na: 1\n---\nb: 2\n", want: []string{"f:3: invalid YAML: expected a single YAML document, found another at line 3"}},
		{name: "not a map", doc: "#cloud-config\n- a\n", want: []string{"f:2:1: cloud-config must be a map of keys, got list"}},
		{name: "empty", doc: "#cloud-config\n", want: []string{"W f:1:1: empty cloud-config"}},
		{name: "unknown keys", doc: "#cloud-config\nhostname: a\nhostnme: b\nusers:\n  - name: x\n    shel: /bin/sh\n", want: []string{
			"f:3:1: hostnme: unknown key",
			"f:6:5: users.0.shel: unknown key",
		}},
		{name: "wrong types", doc: `#cloud-config
hostname: 42
ssh_pwauth: [x]
runcmd: echo hi
bootcmd: []
write_files:
  - path: /x
    encoding: zip
    append: "yes"
users:
  - name: bob
    groups: 7
ssh_genkeytypes: [rsa, dss]
power_state: {mode: sleep}
`, want: []string{
			"f:2:11: hostname: expected string, got integer 42 (quote it for a string)",
			"f:3:13: ssh_pwauth: expected boolean or string, got list",
			"f:4:9: runcmd: expected list, got string \"echo hi\"",
			"f:5:10: bootcmd: needs at least 1 item(s), has 0",
			`f:8:15: write_files.0.encoding: expected one of "gz", "gzip", "gz+base64", "gzip+base64", "gz+b64", "gzip+b64", "b64", "base64", "text/plain", got string "zip"`,
			`f:9:13: write_files.0.append: expected boolean, got string "yes"`,
			"f:12:13: users.0.groups: expected list or map or string, got integer 7 (quote it for a string)",
			`f:13:24: ssh_genkeytypes.1: expected one of "dsa", "ecdsa", "ed25519", "rsa", got string "dss"`,
			`f:14:21: power_state.mode: expected one of "poweroff", "reboot", "halt", got string "sleep"`,
		}},
		{name: "YAML 1.1 booleans", doc: "#cloud-config\nssh_pwauth: off\ndisable_root: no\npackage_update: yes\nusers:\n  - name: a\n    lock_passwd: On\nhostname: off\ntimezone: 'no'\n", want: []string{
			"W f:2:13: ssh_pwauth: unquoted off is the boolean false in YAML 1.1 (cloud-init, earlyinit) but a string in YAML 1.2: write false",
			"W f:3:15: disable_root: unquoted no is the boolean false in YAML 1.1 (cloud-init, earlyinit) but a string in YAML 1.2: write false",
			"W f:4:17: package_update: unquoted yes is the boolean true in YAML 1.1 (cloud-init, earlyinit) but a string in YAML 1.2: write true",
			"W f:7:18: users.0.lock_passwd: unquoted On is the boolean true in YAML 1.1 (cloud-init, earlyinit) but a string in YAML 1.2: write true",
			"f:8:11: hostname: expected string, got boolean false (YAML 1.1 reads unquoted off as a boolean: quote it for a string)",
		}},
		{name: "permissions", doc: `#cloud-config
write_files:
  - {path: /a, permissions: 0644}
  - {path: /b, permissions: 644}
  - {path: /c, permissions: "0o600"}
  - {path: /d, permissions: "rw-r--r--"}
  - {path: /e, permissions: 0x1ff}
  - {path: /f, permissions: 99999}
  - {path: /g, permissions: "0755"}
`, want: []string{
			`W f:3:29: write_files.0.permissions: unquoted 0644 is YAML 1.1 octal for 420, i.e. mode 0644 as meant: quote it ("0644") so that YAML 1.2 tools agree`,
			`W f:4:29: write_files.1.permissions: unquoted 644 is the decimal integer 644, i.e. mode 01204: likely a mistake; for mode 644 write "0644"`,
			`f:6:29: write_files.3.permissions: "rw-r--r--" is not an octal mode`,
			`W f:7:29: write_files.4.permissions: unquoted 0x1ff is the decimal integer 511, i.e. mode 0777: likely a mistake; for mode 0x1ff write "00x1ff"`,
			"f:8:29: write_files.5.permissions: mode 99999 is out of range",
		}},
		{name: "cloud-init keys earlyinit ignores, deprecations", doc: "#cloud-config\napt: {preserve_sources_list: true}\nsnap: {commands: [a]}\nntp: {enabled: true}\nchpasswd: {list: \"a:b\"}\nuser: {name: x, lock-passwd: true}\nmanage_etc_hosts: template\nvendor_data: {enabled: \"false\"}\n", want: []string{
			"W f:3:7: snap: not supported by earlyinit: ignored",
			"W f:5:18: chpasswd.list: deprecated: chpasswd.list; use chpasswd.users",
			"W f:6:30: user.lock-passwd: deprecated: lock-passwd; use lock_passwd",
			`W f:7:19: manage_etc_hosts: deprecated: "template"; use true`,
			"W f:8:24: vendor_data.enabled: deprecated: vendor_data.enabled as a string; use a boolean",
		}},
		{name: "module lists, system_info, growpart", doc: `#cloud-config
cloud_init_modules: [bootcmd, [users-groups, always], [ssh, weekly], {name: mounts, frequency: once}, {frequency: once}, 7]
cloud_final_modules: final_message
system_info:
  default_user: {name: ops, groups: [wheel], shel: x}
  paths: {cloud_dir: /x}
growpart: {mode: auto, devices: [/], ignore_growroot_disabled: false}
resize_rootfs: noblock
`, want: []string{
			`W f:2:61: cloud_init_modules.2.1: not "once-per-instance", "always" or "once": the module's own frequency is used`,
			`f:2:103: cloud_init_modules.4: missing required key "name"`,
			"f:2:122: cloud_init_modules.5: expected list or map or null or string, got integer 7 (quote it for a string)",
			`f:3:22: cloud_final_modules: expected list, got string "final_message"`,
			"f:5:46: system_info.default_user.shel: unknown key",
			"W f:6:10: system_info.paths: not supported by earlyinit: ignored",
		}},
		{name: "growpart and resize_rootfs values", doc: "#cloud-config\ngrowpart: {mode: sometimes}\nresize_rootfs: later\n", want: []string{
			`f:2:18: growpart.mode: expected one of "auto", "growpart", "off", got string "sometimes"`,
			`f:3:16: resize_rootfs: expected one of "noblock", got string "later"`,
		}},
		{name: "duplicates, anchors, merge keys", doc: "#cloud-config\nhostname: a\nhostname: b\nx-base: &u {name: a, shel: x}\n", want: []string{
			"W f:3:1: hostname: duplicate key (first at line 2): the last one wins",
			"f:4:1: x-base: unknown key",
		}},
		{name: "merge key expands into the checked map", doc: "#cloud-config\nusers:\n  - &u {name: a, shell: /bin/sh}\n  - <<: *u\n    name: b\n    shel: x\n", want: []string{
			"W f:5:5: users.1.name: duplicate key (first at line 3): the last one wins",
			"f:6:5: users.1.shel: unknown key",
		}},
		{name: "bad merge_how", doc: "#cloud-config\nmerge_how: dict(replace)+frob()\nmerge_type: 3\n", want: []string{
			`f:2:12: merge_how: unknown merger "frob" (known: dict, list, str)`,
			"f:3:13: merge_type: merge_how must be a string or a list, not integer",
		}},
		{name: "chpasswd users", doc: "#cloud-config\nchpasswd:\n  users:\n    - {name: a}\n    - {name: b, password: c, type: RANDOM}\n    - x\n", want: []string{
			`f:4:7: chpasswd.users.0: missing required key "type"`,
			`f:5:36: chpasswd.users.1.type: expected one of "hash", "text", got string (value not shown: sensitive key)`,
			`f:6:7: chpasswd.users.2: expected map, got string (value not shown: sensitive key)`,
		}},
		{name: "ssh_keys and sizes", doc: "#cloud-config\nssh_keys: {rsa_private: k, ed448_public: p}\nswap: {size: 10X}\nusers:\n  - {name: a, expiredate: 2030-1-1}\n", want: []string{
			"f:2:28: ssh_keys.ed448_public: unknown key",
			`f:3:14: swap.size: "10X" is not "auto" or a size like 512M`,
			`f:5:27: users.0.expiredate: "2030-1-1" is not a date (YYYY-MM-DD)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, e := range Validate("f", []byte(tt.doc)) {
				s := e.Error()
				if e.Warning {
					s = "W " + s
				}
				got = append(got, s)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Validate:\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}

func TestValidatePart(t *testing.T) {
	p := Part{Type: TypeCloudConfig, Filename: "part-002", Content: []byte("hostname: 1\n")}
	errs := ValidatePart(p)
	if len(errs) != 1 || errs[0].Error() != "part-002:1:11: hostname: expected string, got integer 1 (quote it for a string)" {
		t.Errorf("ValidatePart: %v", errs)
	}
}

func TestSchemaErrorFormat(t *testing.T) {
	for _, tt := range []struct {
		e    SchemaError
		want string
	}{
		{SchemaError{File: "u", Line: 3, Col: 5, Path: "a.0", Msg: "m"}, "u:3:5: a.0: m"},
		{SchemaError{File: "u", Line: 3, Msg: "m"}, "u:3: m"},
	} {
		if got := tt.e.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestAliasBomb(t *testing.T) {
	// 10^8 nodes once expanded, 1 KiB as written.
	var b strings.Builder
	b.WriteString("#cloud-config\nnetwork:\n  a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	doc := []byte(b.String())
	if _, err := loadYAML(doc); err == nil || !strings.Contains(err.Error(), "expands to more than") {
		t.Errorf("loadYAML: %v", err)
	}
	cfg, warns := MergeParts([]Part{ccPart("bomb", string(doc), "")})
	if len(cfg) != 0 || !hasWarning(warns, "expands to more than") {
		t.Errorf("MergeParts: %d keys, warnings %q", len(cfg), warns)
	}
	// The schema only walks as deep as it knows keys, so it stays small.
	if errs := Validate("f", doc); len(errs) != 0 {
		t.Errorf("Validate: %v", errs)
	}
}

// TestAliasBombResolvedByChecks: the values the checks resolve (the
// unique items of ssh_fp_console_blacklist here) charge the document's
// budget, not one of their own each. 2,000 items each naming a list of
// 1,111 nodes are 2.2 million nodes to compare: the walk stops at the
// budget (1,048,576, so before the 944th item), says so once, and
// compares no item after that. With a budget per resolve, all 1,999
// duplicates were compared and found.
func TestAliasBombResolvedByChecks(t *testing.T) {
	var b strings.Builder
	b.WriteString("#cloud-config\nbootcmd:\n  - &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 2; i++ {
		fmt.Fprintf(&b, "  - &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	b.WriteString("ssh_fp_console_blacklist: [*a2" + strings.Repeat(", *a2", 1999) + "]\n")
	errs := Validate("f", []byte(b.String()))
	budget, dups := 0, 0
	for _, e := range errs {
		switch {
		case strings.Contains(e.Msg, "expands to more than 1048576 nodes"):
			budget++
		case strings.Contains(e.Msg, "the items must be unique"):
			dups++
		}
	}
	if budget != 1 || dups == 0 || dups >= 943 {
		t.Errorf("%d budget errors, %d duplicates; want 1, and the duplicates among the items the budget let through (fewer than 943)", budget, dups)
	}
}

// TestSchemaHidesSecrets feeds each sensitive key a wrong value holding a
// marker: the finding must name the key path and line, never the value.
func TestSchemaHidesSecrets(t *testing.T) {
	const mark, num = "S3CRET-MARKER", "31337424242"
	for _, tc := range []struct {
		doc  string
		path string // the finding's key path
		line int
	}{
		{"password: " + num, "password", 2},
		{"password: !!int " + mark, "password", 2},
		{"password: !!bool " + mark, "password", 2},
		{"chpasswd:\n  list: [" + mark + "]", "chpasswd.list.0", 3},
		{"chpasswd:\n  list: " + num, "chpasswd.list", 3},
		{"chpasswd:\n  users:\n    - {name: a, password: " + num + "}", "chpasswd.users.0.password", 4},
		{"chpasswd:\n  users:\n    - {name: a, password: x, type: " + mark + "}", "chpasswd.users.0.type", 4},
		{"chpasswd:\n  users:\n    - " + mark, "chpasswd.users.0", 4},
		{"users:\n  - {name: a, passwd: " + num + "}", "users.0.passwd", 3},
		{"users:\n  - {name: a, hashed_passwd: " + num + "}", "users.0.hashed_passwd", 3},
		{"users:\n  - {name: a, plain_text_passwd: " + num + "}", "users.0.plain_text_passwd", 3},
		{"user: {name: a, passwd: " + num + "}", "user.passwd", 2},
		{"ssh_keys: {rsa_private: " + num + "}", "ssh_keys.rsa_private", 2},
		{"ssh_keys: {ed25519_private: !!int " + mark + "}", "ssh_keys.ed25519_private", 2},
		{"random_seed: {data: [" + mark + "]}", "random_seed.data", 2},
		{"random_seed: {data: x, encoding: " + mark + "}", "random_seed.encoding", 2},
		{"wireguard:\n  interfaces:\n    - {name: wg0, config_path: /x, content: [" + mark + "]}", "wireguard.interfaces.0.content", 4},
		{"wireguard:\n  interfaces:\n    - {name: wg0, config_path: /x, content: !!int " + mark + "}", "wireguard.interfaces.0.content", 4},
		{mark + ": x:", "", 2},
		{"chpasswd:\n  " + mark + ": 1", "chpasswd.(key not shown)", 3},
		{mark, "", 2},
	} {
		doc := "#cloud-config\n" + tc.doc + "\n"
		errs := Validate("user-data", []byte(doc))
		if len(errs) == 0 {
			t.Errorf("%q: no finding", doc)
			continue
		}
		found := false
		for _, e := range errs {
			if s := e.Error(); strings.Contains(s, mark) || strings.Contains(s, num) {
				t.Errorf("%q: finding shows the secret: %s", doc, s)
			}
			if e.Path == tc.path && e.Line == tc.line && strings.HasPrefix(e.Error(), fmt.Sprintf("user-data:%d:", tc.line)) {
				found = true
			}
		}
		if !found {
			t.Errorf("%q: no finding at %s line %d: %v", doc, tc.path, tc.line, errs)
		}
	}
	// Merging (the modules' view) does not quote the value either.
	_, warns := MergeParts([]Part{ccPart("p", "#cloud-config\npassword: !!int "+mark+"\n", "")})
	if len(warns) == 0 || strings.Contains(fmt.Sprint(warns), mark) {
		t.Errorf("MergeParts warnings %q", warns)
	}
	// Neither does decoding a body it cannot type.
	_, dw, _ := Decode([]byte(mark + "\n"))
	if len(dw) == 0 || strings.Contains(fmt.Sprint(dw), mark) {
		t.Errorf("Decode warnings %q", dw)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://a/b":                             "http://a/b",
		"https://u:S3CRET@h/p?tok=S3CRET#S3CRET": "https://REDACTED@h/p?REDACTED",
		"not a url S3CRET":                       "(an unparsable URL)",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTopLevelKey: what earlyinit acts on, what it knows and ignores, and
// what nobody knows.
func TestTopLevelKey(t *testing.T) {
	for _, tt := range []struct {
		key              string
		supported, known bool
	}{
		{"runcmd", true, true},
		{"cloud_init_modules", true, true},
		{"system_info", true, true},
		{"growpart", true, true},
		{"apt", true, true},
		{"packages", true, true},
		{"earlyinit", true, true},
		{"ntp", true, true},
		{"landscape", false, true},
		{"snap", false, true},
		{"output", false, true},
		{"no_such_key", false, false},
	} {
		if s, k := TopLevelKey(tt.key); s != tt.supported || k != tt.known {
			t.Errorf("TopLevelKey(%q) = %v, %v; want %v, %v", tt.key, s, k, tt.supported, tt.known)
		}
	}
}

// TestSystemInfoKeysRead: the system_info keys modules read are taken
// without the "not supported by earlyinit" warning its other keys get.
func TestSystemInfoKeysRead(t *testing.T) {
	doc := "#cloud-config\nsystem_info: {distro: rhel, ntp_client: chrony, ssh_svcname: sshd, rsyslog_svcname: rsyslog, apt_get_command: [apt-get], apt_get_upgrade_subcommand: upgrade, apt_get_wrapper: {command: eatmydata, enabled: auto}, package_mirrors: [{arches: [default], failsafe: {primary: 'http://x/'}}], paths: {}}\n"
	errs := Validate("f", []byte(doc))
	if len(errs) != 1 || errs[0].Path != "system_info.paths" || !errs[0].Warning {
		t.Errorf("Validate: %v, want only system_info.paths's warning", errs)
	}
}
