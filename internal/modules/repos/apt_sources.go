package repos

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// basicMatcher is cloud-init's templater.BASIC_MATCHER.
var basicMatcher = core.LazyRE{Expr: `\$\{([A-Za-z0-9_.]+)\}|\$([A-Za-z0-9_.]+)`}

// basicRender is cloud-init's basic_render: $name and ${name} replaced by
// params[name]; a name params lacks is an error (cloud-init's KeyError).
func basicRender(s string, params map[string]string) (string, error) {
	var missing []string
	out := basicMatcher.Get().ReplaceAllStringFunc(s, func(m string) string {
		sub := basicMatcher.Get().FindStringSubmatch(m)
		name := sub[1]
		if name == "" {
			name = sub[2]
		}
		v, ok := params[name]
		if !ok {
			missing = append(missing, "$"+name)
			return m
		}
		return v
	})
	if len(missing) > 0 {
		return "", fmt.Errorf("unknown template variable %s (known: %s)", strings.Join(missing, ", "), strings.Join(sortedStringKeys(params), ", "))
	}
	return out, nil
}

func sortedStringKeys(m map[string]string) []string {
	a := map[string]any{}
	for k := range m {
		a[k] = nil
	}
	return core.SortedKeys(a)
}

// sourcesList renders apt.sources_list, else the root's
// /etc/cloud/templates/sources.list.<distro>.tmpl or sources.list.tmpl,
// else cloud-init's own template for Debian or Ubuntu, with the mirrors
// (each as given and lower-cased), RELEASE and codename. "" when there is
// no template.
func sourcesList(e *core.Env, given ccfg.PyString, release string, mirrors map[string]string, distro string) (string, error) {
	params := map[string]string{"RELEASE": release, "codename": release}
	for k, v := range mirrors {
		params[k] = v
		params[strings.ToLower(k)] = v
	}
	key := "apt.sources_list"
	if given.Set() && !given.IsString() {
		return "", fmt.Errorf("apt.sources_list: want a string, got %s", given)
	}
	tmpl, ok := given.Text(), given.Set()
	if !ok {
		for _, f := range []string{"/etc/cloud/templates/sources.list." + distro + ".tmpl", "/etc/cloud/templates/sources.list.tmpl"} {
			if b, err := e.Root.ReadFile(f); err == nil {
				tmpl, key, ok = string(b), f, true
				break
			}
		}
		if !ok {
			switch distro {
			case "debian":
				tmpl, key = debianSourcesTemplate, "the built-in Debian template"
			case "ubuntu":
				tmpl, key = ubuntuSourcesTemplate, "the built-in Ubuntu template"
			default:
				e.Logf("apt_configure: no template found, not rendering %s", aptSourcesList)
				return "", nil
			}
		}
	}
	first, rest, _ := strings.Cut(tmpl, "\n")
	if m := templateType.Get().FindStringSubmatch(first); m != nil {
		switch strings.ToLower(strings.TrimSpace(m[1])) {
		case "jinja":
			out, err := miniJinja(rest, params)
			if err != nil {
				return "", fmt.Errorf("%s: %w", key, err)
			}
			if strings.HasSuffix(rest, "\n") && !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			return out, nil
		case "basic":
			tmpl = rest
		default:
			return "", fmt.Errorf("%s: unknown template type %q", key, strings.TrimSpace(m[1]))
		}
	}
	out, err := basicRender(tmpl, params)
	if err != nil {
		return "", fmt.Errorf("%s: %w", key, err)
	}
	return out, nil
}

var templateType = core.LazyRE{Expr: `(?i)^##\s*template:(.*)`}

// miniJinja renders the part of jinja cloud-init's sources.list templates
// use, with trim_blocks (a newline right after a {% %} tag goes):
// {{ name }} (an unknown name renders as CI_MISSING_JINJA_VAR/name, as
// cloud-init's), {# comments #}, and {% if name in ('a', 'b') %},
// {% if name == 'a' %}, {% if name != 'a' %}, {% else %}, {% endif %},
// nested. Anything else is an error naming it.
func miniJinja(s string, params map[string]string) (string, error) {
	r := &jinjaRender{params: params, emit: true}
	for len(s) > 0 {
		i := strings.IndexAny(s, "{")
		if i < 0 || i == len(s)-1 {
			r.write(s)
			break
		}
		r.write(s[:i])
		s = s[i:]
		var err error
		switch s[1] {
		case '{':
			s, err = r.expression(s)
		case '#':
			j := strings.Index(s, "#}")
			if j < 0 {
				return "", errors.New("unclosed {#")
			}
			s = s[j+2:]
		case '%':
			s, err = r.statement(s)
		default:
			r.write("{")
			s = s[1:]
		}
		if err != nil {
			return "", err
		}
	}
	if len(r.stack) > 0 {
		return "", errors.New("{% if %} without {% endif %}")
	}
	return r.b.String(), nil
}

// jinjaRender is miniJinja's output and state.
type jinjaRender struct {
	b      strings.Builder
	params map[string]string
	// emit is false inside a branch not taken; stack holds, for each open
	// if, whether its enclosing output was on and whether it was taken.
	emit  bool
	stack []jinjaFrame
}

// jinjaFrame is an open {% if %}.
type jinjaFrame struct{ outer, taken bool }

// write outputs s unless in a branch not taken.
func (r *jinjaRender) write(s string) {
	if r.emit {
		r.b.WriteString(s)
	}
}

// expression renders the {{ name }} s starts with, and returns the rest.
func (r *jinjaRender) expression(s string) (string, error) {
	j := strings.Index(s, "}}")
	if j < 0 {
		return "", errors.New("unclosed {{")
	}
	name := strings.TrimSpace(s[2:j])
	if !jinjaName.Get().MatchString(name) {
		return "", fmt.Errorf("jinja expression {{ %s }} not supported by earlyinit (only {{ name }})", name)
	}
	if v, ok := r.params[name]; ok {
		r.write(v)
	} else {
		r.write("CI_MISSING_JINJA_VAR/" + name)
	}
	return s[j+2:], nil
}

// statement runs the {% if %}, {% else %} or {% endif %} s starts with,
// and returns the rest, less the newline right after the tag.
func (r *jinjaRender) statement(s string) (string, error) {
	j := strings.Index(s, "%}")
	if j < 0 {
		return "", errors.New("unclosed {%")
	}
	tag := strings.TrimSpace(strings.Trim(s[2:j], "-"))
	s = s[j+2:]
	if strings.HasPrefix(s, "\n") {
		s = s[1:]
	}
	f := strings.Fields(tag)
	switch {
	case len(f) == 1 && f[0] == "endif":
		if len(r.stack) == 0 {
			return "", errors.New("{% endif %} without {% if %}")
		}
		r.emit = r.stack[len(r.stack)-1].outer
		r.stack = r.stack[:len(r.stack)-1]
	case len(f) == 1 && f[0] == "else":
		if len(r.stack) == 0 {
			return "", errors.New("{% else %} without {% if %}")
		}
		top := r.stack[len(r.stack)-1]
		r.emit = top.outer && !top.taken
	case len(f) > 0 && f[0] == "if":
		ok, err := jinjaCond(strings.TrimSpace(tag[2:]), r.params)
		if err != nil {
			return "", err
		}
		r.stack = append(r.stack, jinjaFrame{r.emit, ok})
		r.emit = r.emit && ok
	default:
		return "", fmt.Errorf("jinja statement {%% %s %%} not supported by earlyinit", tag)
	}
	return s, nil
}

var (
	jinjaName   = core.LazyRE{Expr: `^[A-Za-z_][A-Za-z0-9_]*$`}
	jinjaCondRE = core.LazyRE{Expr: `^([A-Za-z_][A-Za-z0-9_]*)\s+(in|==|!=|not in)\s+(.+)$`}
	jinjaStr    = core.LazyRE{Expr: `'([^']*)'|"([^"]*)"`}
)

// jinjaCond evaluates name in ('a', ...), name == 'a' and name != 'a'.
func jinjaCond(c string, params map[string]string) (bool, error) {
	m := jinjaCondRE.Get().FindStringSubmatch(c)
	if m == nil {
		return false, fmt.Errorf("jinja condition %q not supported by earlyinit", c)
	}
	v := params[m[1]]
	var lits []string
	for _, s := range jinjaStr.Get().FindAllStringSubmatch(m[3], -1) {
		lits = append(lits, s[1]+s[2])
	}
	if len(lits) == 0 {
		return false, fmt.Errorf("jinja condition %q: want string literals", c)
	}
	has := false
	for _, l := range lits {
		if l == v {
			has = true
		}
	}
	switch m[2] {
	case "in", "==":
		return has, nil
	}
	return !has, nil
}

// mapKnownSuites is map_known_suites.
func mapKnownSuite(s string) string {
	switch s {
	case "updates", "backports", "security", "proposed":
		return "$RELEASE-" + s
	case "release":
		return "$RELEASE"
	}
	return s
}

// disableSuites is disable_suites: each line (not a comment) whose suite
// is one of disabled (updates, backports, security, proposed and release
// meaning $RELEASE-updates... ) gets "# suite disabled by cloud-init: ".
func disableSuites(disabled []string, src, release string) string {
	for _, suite := range disabled {
		rs, err := basicRender(mapKnownSuite(suite), map[string]string{"RELEASE": release})
		if err != nil {
			rs = suite
		}
		var b bytes.Buffer
		for _, line := range strings.SplitAfter(src, "\n") {
			if line == "" {
				continue
			}
			if !strings.HasPrefix(line, "#") {
				cols := strings.Fields(line)
				if len(cols) > 1 {
					pcol := 2
					if strings.HasPrefix(cols[1], "[") {
						for _, c := range cols[1:] {
							pcol++
							if strings.HasSuffix(c, "]") {
								break
							}
						}
					}
					if pcol < len(cols) && cols[pcol] == rs {
						line = "# suite disabled by cloud-init: " + line
					}
				}
			}
			b.WriteString(line)
		}
		src = b.String()
	}
	return src
}

// debianSourcesTemplate and ubuntuSourcesTemplate are cloud-init 22.4.2's
// templates/sources.list.debian.tmpl and sources.list.ubuntu.tmpl.
const debianSourcesTemplate = `## template:jinja
## Note, this file is written by cloud-init on first boot of an instance
## modifications made here will not survive a re-bundle.
## if you wish to make changes you can:
## a.) add 'apt_preserve_sources_list: true' to /etc/cloud/cloud.cfg
##     or do the same in user-data
## b.) add sources in /etc/apt/sources.list.d
## c.) make changes to template file /etc/cloud/templates/sources.list.debian.tmpl
###

# See http://www.debian.org/releases/stable/i386/release-notes/ch-upgrading.html
# for how to upgrade to newer versions of the distribution.
deb {{mirror}} {{codename}} main
deb-src {{mirror}} {{codename}} main

## Major bug fix updates produced after the final release of the
## distribution.
deb {{security}} {{codename}}{% if codename in ('buster', 'stretch') %}/updates{% else %}-security{% endif %} main
deb-src {{security}} {{codename}}{% if codename in ('buster', 'stretch') %}/updates{% else %}-security{% endif %} main
deb {{mirror}} {{codename}}-updates main
deb-src {{mirror}} {{codename}}-updates main

## Uncomment the following two lines to add software from the 'backports'
## repository.
## 
## N.B. software from this repository may not have been tested as
## extensively as that contained in the main release, although it includes
## newer versions of some applications which may provide useful features.
deb {{mirror}} {{codename}}-backports main
deb-src {{mirror}} {{codename}}-backports main
`

const ubuntuSourcesTemplate = `## template:jinja
## Note, this file is written by cloud-init on first boot of an instance
## modifications made here will not survive a re-bundle.
## if you wish to make changes you can:
## a.) add 'apt_preserve_sources_list: true' to /etc/cloud/cloud.cfg
##     or do the same in user-data
## b.) add sources in /etc/apt/sources.list.d
## c.) make changes to template file /etc/cloud/templates/sources.list.tmpl

# See http://help.ubuntu.com/community/UpgradeNotes for how to upgrade to
# newer versions of the distribution.
deb {{mirror}} {{codename}} main restricted
# deb-src {{mirror}} {{codename}} main restricted

## Major bug fix updates produced after the final release of the
## distribution.
deb {{mirror}} {{codename}}-updates main restricted
# deb-src {{mirror}} {{codename}}-updates main restricted

## N.B. software from this repository is ENTIRELY UNSUPPORTED by the Ubuntu
## team. Also, please note that software in universe WILL NOT receive any
## review or updates from the Ubuntu security team.
deb {{mirror}} {{codename}} universe
# deb-src {{mirror}} {{codename}} universe
deb {{mirror}} {{codename}}-updates universe
# deb-src {{mirror}} {{codename}}-updates universe

## N.B. software from this repository is ENTIRELY UNSUPPORTED by the Ubuntu
## team, and may not be under a free licence. Please satisfy yourself as to
## your rights to use the software. Also, please note that software in
## multiverse WILL NOT receive any review or updates from the Ubuntu
## security team.
deb {{mirror}} {{codename}} multiverse
# deb-src {{mirror}} {{codename}} multiverse
deb {{mirror}} {{codename}}-updates multiverse
# deb-src {{mirror}} {{codename}}-updates multiverse

## N.B. software from this repository may not have been tested as
## extensively as that contained in the main release, although it includes
## newer versions of some applications which may provide useful features.
## Also, please note that software in backports WILL NOT receive any review
## or updates from the Ubuntu security team.
deb {{mirror}} {{codename}}-backports main restricted universe multiverse
# deb-src {{mirror}} {{codename}}-backports main restricted universe multiverse

deb {{security}} {{codename}}-security main restricted
# deb-src {{security}} {{codename}}-security main restricted
deb {{security}} {{codename}}-security universe
# deb-src {{security}} {{codename}}-security universe
deb {{security}} {{codename}}-security multiverse
# deb-src {{security}} {{codename}}-security multiverse
`
