package accounts

import (
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// userSpec is one normalized users entry: its name and its cloud-config
// keys, as cloud-init's ug_util.normalize_users_groups gives them.
type userSpec struct {
	Name    string
	Cfg     ccfg.User
	Default bool
}

// defaultUserKey is where the image's default user is configured.
const defaultUserKey = "system_info.default_user"

// imageDefaultUser is DefaultUser, the image's system_info.default_user,
// as a users entry.
func imageDefaultUser(e *core.Env) ccfg.User {
	d := e.DefaultUser
	m := map[string]any{"name": d.Name, "lock_passwd": d.LockPasswd}
	if d.Gecos != "" {
		m["gecos"] = d.Gecos
	}
	if len(d.Groups) > 0 {
		m["groups"] = strList(d.Groups)
	}
	if d.Shell != "" {
		m["shell"] = d.Shell
	}
	if len(d.Sudo) > 0 {
		m["sudo"] = strList(d.Sudo)
	}
	if d.PrimaryGroup != "" {
		m["primary_group"] = d.PrimaryGroup
	}
	if d.Homedir != "" {
		m["homedir"] = d.Homedir
	}
	if d.System {
		m["system"] = true
	}
	var u ccfg.User
	_ = u.DecodeCC(m, defaultUserKey) // any map decodes
	return u
}

func strList(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// normalizeUsers is cloud-init's ug_util.normalize_users_groups for the
// users (TestNormalizeUsersAsCloudInit): users read as ccfg.Users reads
// them (a comma-separated string, names, maps, a map by name; entries of
// one name merged), and a user key (ccfg.User: "user: NAME" or a map)
// that is true makes the default user, with its config over the image's
// default user. The default user comes last, so that it is created after
// the others, as in cloud-init, whose dictionary it is put back into; its
// config is the user key's over the image's default user's over the
// "default" entry's over the entry of its name, its groups both theirs
// (sorted, comma-joined).
//
// Unlike cloud-init: a map's users are in name order (cloud-init's are in
// the YAML's, which a merged map does not keep), and names in lists are
// trimmed (cloud-init creates " bob" from [alice, "carol, bob"]).
func normalizeUsers(e *core.Env) ([]userSpec, []string, error) {
	old, _, err := ccfg.Decode[*ccfg.User](e.Cfg, "user")
	if err != nil {
		return nil, nil, err
	}
	entries, _, err := ccfg.Decode[ccfg.Users](e.Cfg, "users")
	if errors.Is(err, ccfg.ErrIgnored) {
		return nil, []string{err.Error()}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	out := make([]userSpec, 0, len(entries)+1)
	def, declined := -1, false
	for _, u := range entries {
		if u.Declined() {
			declined = true
			continue
		}
		if u.Name.Str() == "default" {
			def = len(out)
		}
		out = append(out, userSpec{Name: u.Name.Str(), Cfg: u})
	}
	if def < 0 && !declined && old != nil && old.Truthy() {
		def = len(out)
		out = append(out, userSpec{Name: "default"})
	}
	if def < 0 {
		return out, nil, nil
	}
	return placeDefault(e, old, out, def)
}

// placeDefault takes the "default" entry (out[i]) out and puts the
// default user last: its config the user key's (old) over the image's
// default user's over the "default" entry's over the entry of its name
// (taken out too), its groups both theirs, sorted.
func placeDefault(e *core.Env, old *ccfg.User, out []userSpec, i int) ([]userSpec, []string, error) {
	defCfg := out[i].Cfg
	out = append(out[:i:i], out[i+1:]...)
	dc := imageDefaultUser(e)
	if old != nil {
		o := *old
		o.Merge(&dc)
		dc = o
	}
	// The user key's name, null too (ccfg.User: "<nil>"), as given.
	name := dc.Name.Str()
	if name == "" {
		return out, []string{"users: default: no default user is configured: skipped"}, nil
	}
	defGroups := dc.Groups
	dc.Name, dc.Groups = ccfg.PyString{}, ccfg.PyValue{}
	var parsed ccfg.User
	for j, u := range out {
		if u.Name == name {
			parsed = u.Cfg
			out = append(out[:j:j], out[j+1:]...)
			break
		}
	}
	parsed.Groups = ccfg.PyValueOf(strings.Join(sortedUniq(parsed.Groups, defGroups), ","))
	defCfg.Name = ccfg.PyString{}
	cfg := dc
	cfg.Merge(&defCfg)
	cfg.Merge(&parsed)
	return append(out, userSpec{Name: name, Cfg: cfg, Default: true}), nil, nil
}

// sortedUniq is uniq_merge_sorted of group lists (comma-separated strings
// or lists), trimmed.
func sortedUniq(lists ...ccfg.PyValue) []string {
	var out []string
	for _, l := range lists {
		for _, it := range l.Items() {
			if it = strings.TrimSpace(it); it != "" && !slices.Contains(out, it) {
				out = append(out, it)
			}
		}
	}
	sort.Strings(out)
	return out
}

// defaultUserName is the name of the default user if users has it, "".
func defaultUserName(e *core.Env) string {
	users, _, err := normalizeUsers(e)
	if err != nil {
		return ""
	}
	for _, u := range users {
		if u.Default {
			return u.Name
		}
	}
	return ""
}

// normalizeGroups reads the groups key (ccfg.Groups): "a,b", a list of
// names or of maps {name: members}, or a map {name: members}. Members are
// a list or a comma-separated string.
func normalizeGroups(e *core.Env) ([]ccfg.Group, error) {
	groups, _, err := ccfg.Decode[ccfg.Groups](e.Cfg, "groups")
	return groups, err
}
