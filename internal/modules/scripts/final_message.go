package scripts

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/instance"
	"github.com/earlyinit/earlyinit/internal/modules/core"
)

// defaultFinalMessage is cloud-init's default, with earlyinit's name.
const defaultFinalMessage = "earlyinit v. $VERSION finished at $TIMESTAMP. Datasource $DATASOURCE.  Up $UPTIME seconds"

// FinalMessage is cc_final_message, at every boot: final_message (or the
// default) with $UPTIME, $TIMESTAMP, $VERSION and $DATASOURCE (also
// ${...} and lower case, or {{ uptime }} under "## template: jinja":
// renderTemplate) replaced, written to the output log and the runner's log; then
// instances/<iid>/boot-finished ("uptime - timestamp - v. version").
func FinalMessage(_ context.Context, e *core.Env) error {
	msg, _, err := ccfg.Decode[string](e.Cfg, "final_message")
	if err != nil {
		return err
	}
	if msg = strings.TrimSpace(msg); msg == "" {
		msg = defaultFinalMessage
	}
	now := time.Now
	if e.Now != nil {
		now = e.Now
	}
	up := uptime(e)
	ts := now().UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700")
	ds := ""
	if e.Data != nil {
		ds = instance.DatasourceString(e.Data)
	}
	upS := strconv.FormatFloat(up, 'f', 2, 64)
	subs := map[string]string{"uptime": upS, "timestamp": ts, "version": e.Version, "datasource": ds}
	out := renderTemplate(msg, subs)
	fmt.Fprintln(e.Out(), out)
	e.Logf("%s", out)
	return e.Root.WriteFile(e.InstanceDir()+"/boot-finished", []byte(fmt.Sprintf("%s - %s - v. %s\n", upS, ts, e.Version)), 0o644, 0, 0)
}

func uptime(e *core.Env) float64 {
	if e.Uptime != nil {
		return e.Uptime()
	}
	b, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	v, _ := strconv.ParseFloat(f[0], 64)
	return v
}

// renderTemplate is cloud-init's templater.render_string for
// final_message: a first line "## template: jinja" (any case, blanks
// after ##) makes {{ name }} the substitutions (the line dropped), else
// (or "## template: basic") they are $name and ${name}. A name is one of
// subs' keys in lower case or in upper case. Unlike cloud-init, whose
// basic renderer raises on a name it has not, so that nothing is printed,
// and whose jinja prints an undefined marker, an unknown name stays as
// written (TestFinalMessageAsCloudInit).
func renderTemplate(s string, subs map[string]string) string {
	lookup := func(name string) (string, bool) {
		if v, ok := subs[name]; ok {
			return v, true
		}
		v, ok := subs[strings.ToLower(name)]
		return v, ok && name == strings.ToUpper(name)
	}
	jinja := false
	first, rest, _ := strings.Cut(s, "\n")
	if h, ok := strings.CutPrefix(first, "##"); ok {
		if kind, ok := strings.CutPrefix(strings.ToLower(strings.TrimLeft(h, " \t")), "template:"); ok {
			jinja = strings.TrimSpace(kind) == "jinja"
			s = rest
		}
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if !jinja && s[i] == '$' {
			j, name := i+1, ""
			if j < len(s) && s[j] == '{' {
				if k := strings.IndexByte(s[j:], '}'); k > 0 {
					name, j = s[j+1:j+k], j+k+1
				}
			} else {
				k := j
				for k < len(s) && (s[k] == '_' || s[k] >= 'a' && s[k] <= 'z' || s[k] >= 'A' && s[k] <= 'Z' || s[k] >= '0' && s[k] <= '9') {
					k++
				}
				name, j = s[j:k], k
			}
			if v, ok := lookup(name); ok && name != "" {
				b.WriteString(v)
				i = j
				continue
			}
		}
		if jinja && strings.HasPrefix(s[i:], "{{") {
			if k := strings.Index(s[i:], "}}"); k > 0 {
				if v, ok := lookup(strings.TrimSpace(s[i+2 : i+k])); ok {
					b.WriteString(v)
					i += k + 2
					continue
				}
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}
