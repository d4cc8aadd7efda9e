package ccfg

import (
	"fmt"
	"strconv"
	"strings"
)

// The types of the scripts' keys (and of system's) that read a value as
// their module does, which Decode's defaults do not: phone_home's post
// and tries, power_state's delay, write_files' entries.

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

// WriteFileEntry is one of write_files, read on its own: an entry Decode
// cannot read is Err, not an error of the whole list, so that it does not
// stop the others (cc_write_files goes on past an entry it cannot use).
// Its schema is WriteFile's.
type WriteFileEntry struct {
	WriteFile
	Err error
}

// DecodeCC reads an entry.
func (f *WriteFileEntry) DecodeCC(v any, path string) error {
	*f = WriteFileEntry{}
	f.Err = DecodeValue(v, path, &f.WriteFile)
	return nil
}
