package system

import (
	"context"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// Rsyslog is cc_rsyslog:
//
//   - rsyslog is a map (configs, config_dir, config_filename, remotes,
//     service_reload_command) or, deprecated, a list of configs (with the
//     top-level rsyslog_filename and rsyslog_dir);
//   - each configs entry, a string or {content, filename}, goes to
//     config_dir (default /etc/rsyslog.d)/filename (default
//     config_filename, 20-cloud-config.conf), a newline added if missing;
//     the first entry for a file replaces it, the next ones are appended;
//   - remotes (name: "[match] [@|@@]host[:port]") become one more entry of
//     "match @host:port # name" lines between "# begin remotes" and
//     "# end remotes"; unlike cloud-init (whose dict keeps the YAML
//     order), they are sorted by name;
//   - when a file changed, rsyslog is reloaded if it runs
//     (service_reload_command "auto", the default: reload-or-try-restart
//     of system_info.rsyslog_svcname or rsyslog), or the given command
//     runs (a list as argv, a string with sh -c).
//
// File names must be plain names (or absolute paths) without blanks;
// remote specifications are parsed and checked: nothing is written when
// one is wrong.
func Rsyslog(ctx context.Context, e *core.Env) error {
	rc, err := rsyslogConfig(e)
	if err != nil {
		return err
	}
	configs := rc.Configs
	if rem := rc.Remotes; len(rem) > 0 {
		text, err := remotesConfig(rem)
		if err != nil {
			return err
		}
		if text != "" {
			configs = append(configs, ccfg.RsyslogConfig{Content: text})
		}
	}
	if len(configs) == 0 {
		e.Logf("rsyslog: no configs: nothing to do")
		return nil
	}
	dir := rc.ConfigDir
	if _, err := core.ConfPath("rsyslog.config_dir", dir); err != nil {
		return err
	}
	files, order, err := rsyslogFiles(e, configs, dir, rc.ConfigFilename)
	if err != nil {
		return err
	}
	for _, p := range order {
		if err := e.Root.WriteFile(p, []byte(files[p].String()), 0o644, 0, 0); err != nil {
			return fmt.Errorf("rsyslog: %w", err)
		}
	}
	if len(order) == 0 {
		return nil
	}
	e.Logf("rsyslog: configured %v", order)
	if reload := rc.ServiceReloadCommand; reload == nil {
		svc, ok := core.DistroSetting(e, "rsyslog", "rsyslog_svcname", func(si *ccfg.SystemInfo) any { return si.RsyslogSvcname })
		if !ok {
			svc = "rsyslog"
		}
		err = e.ServiceAction(ctx, "try-reload", svc)
	} else {
		_, err = e.Run(ctx, core.Cmd{Name: reload[0], Args: reload[1:], Output: e.Out()})
	}
	if err != nil {
		// As cloud-init: a failed reload is a warning, not a failure.
		e.Logf("rsyslog: WARNING: failed to reload syslog: %v", err)
	}
	return nil
}

// rsyslogFiles is the content of each file the configs entries go to (in
// dir, def when an entry names none), and the files in the order first
// named.
func rsyslogFiles(e *core.Env, configs []ccfg.RsyslogConfig, dir, def string) (map[string]*strings.Builder, []string, error) {
	files := map[string]*strings.Builder{}
	var order []string
	for i, ent := range configs {
		if ent.NoContent {
			e.Logf("rsyslog.configs.%d: no content: skipped", i)
			continue
		}
		content, name := ent.Content, def
		if ent.Filename != nil {
			name = *ent.Filename
		}
		name = strings.TrimSpace(name)
		if name == "" {
			e.Logf("rsyslog.configs.%d: empty file name: skipped", i)
			continue
		}
		p, err := rsyslogPath(dir, name)
		if err != nil {
			return nil, nil, fmt.Errorf("rsyslog.configs.%d.filename: %w", i, err)
		}
		b := files[p]
		if b == nil {
			b = &strings.Builder{}
			files[p] = b
			order = append(order, p)
		}
		b.WriteString(content)
		if !strings.HasSuffix(content, "\n") {
			b.WriteString("\n")
		}
	}
	return files, order, nil
}

// rsyslogConfig is load_config: rsyslog read as ccfg.Rsyslog, null as
// no configs. Its legacy list form takes its file and directory from the
// top-level rsyslog_filename and rsyslog_dir, read as config_filename
// and config_dir are: Config does not declare them (22.4's schema knows
// neither), so they are read from the configuration as given.
func rsyslogConfig(e *core.Env) (ccfg.Rsyslog, error) {
	rc, ok, err := ccfg.Decode[*ccfg.Rsyslog](e.Cfg, "rsyslog")
	if err != nil || !ok {
		return ccfg.Rsyslog{}, err
	}
	if rc.Legacy {
		if rc.ConfigFilename, rc.ConfigDir, err = rsyslogLegacyFiles(e.Cfg); err != nil {
			return ccfg.Rsyslog{}, err
		}
	}
	return *rc, nil
}

// rsyslogLegacyFiles are the legacy form's file and directory: cfg's
// rsyslog_filename and rsyslog_dir, read as config_filename and
// config_dir are (their defaults when missing or null).
func rsyslogLegacyFiles(cfg map[string]any) (filename, dir string, err error) {
	m := map[string]any{}
	if v, ok := cfg["rsyslog_filename"]; ok {
		m["config_filename"] = v
	}
	if v, ok := cfg["rsyslog_dir"]; ok {
		m["config_dir"] = v
	}
	var rc ccfg.Rsyslog
	err = ccfg.DecodeValue(m, "rsyslog", &rc)
	return rc.ConfigFilename, rc.ConfigDir, err
}

// rsyslogPath is name in dir (os.path.join: an absolute name stays), a
// plain file name or clean absolute path without blanks.
func rsyslogPath(dir, name string) (string, error) {
	if strings.HasPrefix(name, "/") {
		return core.ConfPath("path", name)
	}
	if strings.Contains(name, "/") || name == "." || name == ".." || core.HasCtlOrBlank(name) {
		return "", fmt.Errorf("%q: want a file name without / or blanks", name)
	}
	return path.Join(dir, name), nil
}

// remotesConfig is remotes_to_rsyslog_cfg, names sorted.
func remotesConfig(rem map[string]ccfg.RsyslogRemote) (string, error) {
	names := make([]string, 0, len(rem))
	for n := range rem {
		names = append(names, n)
	}
	sort.Strings(names)
	lines := []string{"# begin remotes"}
	for _, n := range names {
		s := string(rem[n])
		if s == "" {
			continue
		}
		line, err := remoteLine(s, n)
		if err != nil {
			return "", fmt.Errorf("rsyslog.remotes.%s: %w", n, err)
		}
		lines = append(lines, line)
	}
	lines = append(lines, "# end remotes")
	return strings.Join(lines, "\n") + "\n", nil
}

// remoteLine is parse_remotes_line and SyslogRemotesLine's str: "[match]
// [@|@@]addr[:port] [# comment]" as "match @addr:port # name", checked:
// a selector of rsyslog's characters, an address of host name or IP
// characters, a port of 1 to 65535, a name without line breaks or #.
func remoteLine(line, name string) (string, error) {
	data, comment := line, ""
	if i := strings.Index(line, "#"); i >= 0 {
		data, comment = line[:i], strings.TrimSpace(strings.TrimLeft(line[i:], "# "))
	}
	if name == "" {
		name = comment
	}
	if strings.ContainsAny(line, "\n\r") || strings.ContainsAny(name, "\n\r#") {
		return "", fmt.Errorf("%q: line breaks are not allowed", line)
	}
	toks := strings.Fields(data)
	match, hostPort := "*.*", ""
	switch len(toks) {
	case 1:
		hostPort = toks[0]
	case 2:
		match, hostPort = toks[0], toks[1]
	default:
		return "", fmt.Errorf("%q: want [match] [@|@@]host[:port]", line)
	}
	for _, r := range match {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("*.,;=!_-", r)) {
			return "", fmt.Errorf("match %q: not a syslog selector", match)
		}
	}
	proto := "@"
	switch {
	case strings.HasPrefix(hostPort, "@@"):
		proto, hostPort = "@@", hostPort[2:]
	case strings.HasPrefix(hostPort, "@"):
		hostPort = hostPort[1:]
	}
	addr, port := hostPort, ""
	if strings.HasPrefix(hostPort, "[") {
		end := strings.Index(hostPort, "]")
		if end < 0 {
			return "", fmt.Errorf("%q: host spec had invalid brackets", hostPort)
		}
		addr, port = hostPort[1:end], strings.TrimPrefix(hostPort[end+1:], ":")
		if rest := hostPort[end+1:]; rest != "" && !strings.HasPrefix(rest, ":") {
			return "", fmt.Errorf("%q: invalid host specification", hostPort)
		}
	} else if i := strings.LastIndex(hostPort, ":"); i >= 0 {
		addr, port = hostPort[:i], hostPort[i+1:]
		if strings.Contains(addr, ":") {
			return "", fmt.Errorf("%q: an IPv6 address needs brackets", hostPort)
		}
	}
	if addr == "" || !validNTPHost(addr) {
		return "", fmt.Errorf("address %q: not a host name or address", addr)
	}
	out := match + " " + proto
	if strings.Contains(addr, ":") {
		out += "[" + addr + "]"
	} else {
		out += addr
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return "", fmt.Errorf("port %q: not a port number", port)
		}
		out += ":" + strconv.Itoa(n)
	}
	if name != "" {
		out += " # " + name
	}
	return out, nil
}
