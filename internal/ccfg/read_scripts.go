package ccfg

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/scalar"
)

// The types of the scripts' keys (and of system's) that read a value as
// their module does, which Decode's defaults do not: phone_home's post
// and tries, power_state's delay, write_files' entries, vendor_data,
// manage_etc_hosts, resolv_conf, rsyslog.

// PhoneHomeAll is what phone_home posts for "all", and the names post
// takes (cloud-init's POST_LIST_ALL, in its order).
var PhoneHomeAll = []string{"pub_key_dsa", "pub_key_rsa", "pub_key_ecdsa", "pub_key_ed25519", "instance_id", "hostname", "fqdn"}

// PhoneHomePost is phone_home.post: the names of what to post, nil when
// not given (all). "all" is PhoneHomeAll; another string is a list of
// one, as it is (cc_phone_home would post each of its characters); a
// list's items are str() of its scalars, trimmed; an empty list posts
// nothing.
// A value of another kind is Err, not a decoding error: the module
// fails on it only once it has a url, as cloud-init skips a phone_home
// without one whatever its post.
type PhoneHomePost struct {
	Names []string
	Err   error
}

// Schema: "all", or a list of the names.
func (PhoneHomePost) Schema() *Schema {
	names := make([]any, len(PhoneHomeAll))
	for i, n := range PhoneHomeAll {
		names[i] = n
	}
	return &Schema{Alts: map[string]*Schema{
		"string": {Types: []string{"string"}, Enum: []any{"all"}},
		"list":   {Types: []string{"list"}, Items: &Schema{Types: []string{"string"}, Enum: names}},
	}}
}

// DecodeCC reads post.
func (p *PhoneHomePost) DecodeCC(v any, path string) error {
	*p = PhoneHomePost{}
	switch t := v.(type) {
	case string:
		if t == "all" {
			p.Names = append([]string(nil), PhoneHomeAll...)
		} else {
			p.Names = []string{t}
		}
	case []any:
		p.Names = make([]string, 0, len(t))
		for i, x := range t {
			switch x.(type) {
			case map[string]any, []any, nil:
				*p = PhoneHomePost{Err: wrongType(path+"."+strconv.Itoa(i), "a string", x)}
				return nil
			}
			p.Names = append(p.Names, strings.TrimSpace(String(x)))
		}
	default:
		p.Err = wrongType(path, "a string or a list of strings", v)
	}
	return nil
}

// PhoneHomeTries is phone_home.tries as cc_phone_home reads it: int() of
// the value (Int) when Given. A value int() refuses is no error: Err
// holds it, and the module tries 10 times with a warning, as cloud-init
// does.
type PhoneHomeTries struct {
	N     int
	Given bool
	Err   error
}

// Schema: an integer.
func (PhoneHomeTries) Schema() *Schema { return &Schema{Types: []string{"integer"}} }

// DecodeCC reads tries.
func (n *PhoneHomeTries) DecodeCC(v any, path string) error {
	i, err := Int(v)
	if err != nil {
		*n = PhoneHomeTries{Given: true, Err: fmt.Errorf("%s: %w", path, err)}
		return nil
	}
	*n = PhoneHomeTries{N: i, Given: true}
	return nil
}

// PowerDelay is power_state.delay as shutdown's time argument, as
// cloud-init's distro.shutdown_command makes it: "now", or "+%d" %
// int(delay) minutes (a float cut to its integer, a boolean 0 or 1, a
// string of digits with or without its "+"); "" when not given (now). A
// negative delay is refused (cloud-init passes "+-1" to shutdown).
type PowerDelay string

// Schema: minutes, "now" or "+minutes" (userdata's checks).
func (PowerDelay) Schema() *Schema {
	return &Schema{Alts: map[string]*Schema{
		"integer": {Check: "delay_minutes"},
		"string":  {Check: "delay_string"},
	}}
}

// DecodeCC reads delay.
func (d *PowerDelay) DecodeCC(v any, path string) error {
	s := strings.TrimSpace(String(v))
	if s == "now" {
		*d = "now"
		return nil
	}
	n, err := 0, error(nil)
	switch t := v.(type) {
	case float64:
		n = int(t)
	case bool:
		if t {
			n = 1
		}
	default:
		n, err = strconv.Atoi(strings.TrimPrefix(s, "+"))
	}
	if err != nil || n < 0 {
		return fmt.Errorf("%s %q: want \"now\" or +minutes", path, s)
	}
	*d = PowerDelay("+" + strconv.Itoa(n))
	return nil
}

// plainWriteFile is WriteFile without its DecodeCC.
type plainWriteFile WriteFile

// DecodeCC reads one of write_files on its own: an entry Decode cannot
// read is its Err, not an error of the whole list, so that it does not
// stop the others (cc_write_files goes on past an entry it cannot use).
func (f *WriteFile) DecodeCC(v any, path string) error {
	*f = WriteFile{}
	if err := DecodeValue(v, path, (*plainWriteFile)(f)); err != nil {
		*f = WriteFile{Err: err}
	}
	return nil
}

// plainVendorData is VendorData without its DecodeCC: its fields, read as
// declared.
type plainVendorData VendorData

// DecodeCC reads vendor_data as cloud-init's readers do: a value that is
// not a map has none of its keys (util.get_cfg_by_path gives
// cc_scripts_vendor no prefix; userdata's vendorPolicy then takes no
// vendor-data), a map its keys as declared.
func (d *VendorData) DecodeCC(v any, path string) error {
	*d = VendorData{}
	if _, ok := v.(map[string]any); !ok {
		return nil
	}
	return DecodeValue(v, path, (*plainVendorData)(d))
}

// VendorPrefix is vendor_data.prefix, the command vendor-data's scripts
// run after (subp.runparts' exe_prefix): a string is a command of one
// word, a list's items its words (str() of each: cloud-init hands them
// to subp as they are), nil for none (null, an empty list).
type VendorPrefix []string

// Schema: a string, or a list of strings and integers.
func (VendorPrefix) Schema() *Schema {
	return &Schema{Alts: map[string]*Schema{
		"string": nil,
		"list":   {Types: []string{"list"}, Items: &Schema{Types: []string{"string", "integer"}}},
	}}
}

// DecodeCC reads prefix. An empty first word is refused; an empty
// string is the command "", as runparts takes it.
func (p *VendorPrefix) DecodeCC(v any, path string) error {
	*p = nil
	switch t := v.(type) {
	case string:
		*p = VendorPrefix{t}
		return nil
	case []any:
		var l VendorPrefix
		for i, x := range t {
			switch x.(type) {
			case map[string]any, []any, nil:
				return wrongType(path+"."+strconv.Itoa(i), "a string", x)
			}
			l = append(l, String(x))
		}
		if len(l) > 0 && l[0] == "" {
			return fmt.Errorf("%s: the command is empty", path)
		}
		*p = l
		return nil
	}
	// cloud-init: TypeError("exe_prefix must be None, str, or list").
	return wrongType(path, "a string or a list", v)
}

// VendorHandlers is vendor_data.disabled_handlers as userdata's
// vendorPolicy reads it, which decides what vendor-data runs: a string is
// a list of one, a list's strings are taken and its other items left; any
// other value is none. No value is an error, so that reading vendor_data
// for its prefix never fails on it (cloud-init's stages.py tests a part's
// type "in" the value, and cc_scripts_vendor reads the prefix alone).
type VendorHandlers []string

// Schema: a list of strings.
func (VendorHandlers) Schema() *Schema {
	return &Schema{Types: []string{"list"}, Items: &Schema{Types: []string{"string"}}}
}

// DecodeCC reads disabled_handlers.
func (h *VendorHandlers) DecodeCC(v any, _ string) error {
	*h = nil
	switch t := v.(type) {
	case string:
		*h = VendorHandlers{t}
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok {
				*h = append(*h, s)
			}
		}
	}
	return nil
}

// EtcHosts is manage_etc_hosts, what cc_update_etc_hosts does:
// EtcHostsTemplate (true, util.is_true's strings, or the deprecated
// "template"), EtcHostsLocalhost ("localhost"), or "" (false, null,
// util.is_false's strings). Any other string, or a value of another
// kind, is an error. Its schema is Config's Shape's.
type EtcHosts string

// manage_etc_hosts' modes.
const (
	EtcHostsTemplate  EtcHosts = "template"
	EtcHostsLocalhost EtcHosts = "localhost"
)

// DecodeCC reads manage_etc_hosts.
func (m *EtcHosts) DecodeCC(v any, path string) error {
	*m = ""
	switch t := v.(type) {
	case nil:
	case bool:
		if t {
			*m = EtcHostsTemplate
		}
	case string:
		switch {
		case t == "localhost":
			*m = EtcHostsLocalhost
		case t == "template" || IsTrue(t):
			*m = EtcHostsTemplate
		case IsFalse(t):
		default:
			return fmt.Errorf("%s: %q: want true, false or \"localhost\"", path, t)
		}
	default:
		return wrongType(path, `a boolean or "localhost"`, v)
	}
	return nil
}

// plainResolvConf is ResolvConf without its DecodeCC.
type plainResolvConf ResolvConf

// DecodeCC reads resolv_conf: a map as declared; another value is
// NotMap, its kind ("a list"), and the module writes nothing, with a
// warning, where cloud-init's generate_resolv_conf would fail.
func (rc *ResolvConf) DecodeCC(v any, path string) error {
	*rc = ResolvConf{}
	if _, ok := v.(map[string]any); !ok {
		rc.NotMap = scalar.YAMLNoun(v)
		return nil
	}
	return DecodeValue(v, path, (*plainResolvConf)(rc))
}

// plainRsyslog is Rsyslog without its DecodeCC.
type plainRsyslog Rsyslog

// DecodeCC reads rsyslog: a map as declared, or the legacy list of
// configs (cc_rsyslog's load_config), Legacy then set: its file and
// directory are the top-level rsyslog_filename and rsyslog_dir, which
// Config does not declare (22.4's schema knows neither), for the module
// to read.
func (r *Rsyslog) DecodeCC(v any, path string) error {
	*r = Rsyslog{}
	if l, ok := v.([]any); ok {
		v = map[string]any{"configs": l}
		r.Legacy = true
	}
	legacy := r.Legacy
	err := DecodeValue(v, path, (*plainRsyslog)(r))
	r.Legacy = legacy
	return err
}

// RsyslogConfig is one of rsyslog.configs: a string is its Content, for
// the default file; a map gives content (a string) and, if Filename is
// not nil, the file (str() of the value). A map without content is
// NoContent: the module skips it, with a warning. The tags name the keys
// (the schema is Rsyslog's Shape's).
type RsyslogConfig struct {
	Content   string  `yaml:"content"`
	Filename  *string `yaml:"filename"`
	NoContent bool
}

// DecodeCC reads a config.
func (c *RsyslogConfig) DecodeCC(v any, path string) error {
	*c = RsyslogConfig{}
	switch t := v.(type) {
	case string:
		c.Content = t
		return nil
	case map[string]any:
		content, ok := t["content"]
		if !ok {
			c.NoContent = true
			return nil
		}
		s, ok := content.(string)
		if !ok {
			return wrongType(path+".content", "a string", content)
		}
		c.Content = s
		if f := t["filename"]; f != nil {
			name := String(f)
			c.Filename = &name
		}
		return nil
	}
	return wrongType(path, "a string or a map", v)
}

// RsyslogRemote is one of rsyslog.remotes: "[match] [@|@@]host[:port]
// [# comment]", a string; null is "", none.
type RsyslogRemote string

// DecodeCC reads a remote.
func (r *RsyslogRemote) DecodeCC(v any, path string) error {
	s, ok := v.(string)
	if !ok {
		return wrongType(path, "a string", v)
	}
	*r = RsyslogRemote(s)
	return nil
}

// RsyslogReload is rsyslog.service_reload_command as the command to run:
// nil for "auto" (the module reloads the service), a string run by sh
// -c, a list (of strings, at least one) as an argv.
type RsyslogReload []string

// DecodeCC reads service_reload_command.
func (r *RsyslogReload) DecodeCC(v any, path string) error {
	*r = nil
	switch t := v.(type) {
	case string:
		if t != "auto" {
			*r = RsyslogReload{"sh", "-c", t}
		}
		return nil
	case []any:
		argv := make(RsyslogReload, 0, len(t))
		for i, a := range t {
			s, ok := a.(string)
			if !ok {
				return wrongType(path+"."+strconv.Itoa(i), "a string", a)
			}
			argv = append(argv, s)
		}
		if len(argv) == 0 {
			return fmt.Errorf("%s: empty", path)
		}
		*r = argv
		return nil
	}
	return wrongType(path, "a string or a list", v)
}
