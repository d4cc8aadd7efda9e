package scripts

import (
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

// finalMessageOracle is what cloud-init 22.4's cc_final_message prints
// for each message: templater.render_string with its substitutions (each
// name in lower and upper case), or null where rendering raises (it then
// logs the failure and prints nothing).
const finalMessageOracle = `
from cloudinit import templater
subs = {"uptime": "42.12", "timestamp": "Tue, 02 Jan 2024 03:04:05 +0000", "version": "0.9", "datasource": "DataSourceNoCloud"}
subs.update(dict([(k.upper(), v) for k, v in subs.items()]))
out = []
for msg in json.load(sys.stdin):
    try:
        out.append(templater.render_string(msg.strip(), subs))
    except Exception:
        out.append(None)
json.dump(out, sys.stdout)
`

// TestFinalMessageAsCloudInit: final_message's substitutions are
// cloud-init's templater's (basic $name and ${name}; with a "## template:
// jinja" line, {{ name }}), but for the listed differences.
func TestFinalMessageAsCloudInit(t *testing.T) {
	subs := map[string]string{"uptime": "42.12", "timestamp": "Tue, 02 Jan 2024 03:04:05 +0000", "version": "0.9", "datasource": "DataSourceNoCloud"}
	msgs := []string{
		"up $UPTIME at ${TIMESTAMP} v$version on $datasource",
		"up ${uptime}s, ${VERSION}.",
		"$uptime$uptime $$uptime",
		"no variables at all",
		"a $ sign and a ${ brace",
		"## template: jinja\nup {{ uptime }} v{{version}} on {{ DATASOURCE }}",
		"## template: jinja\n{{uptime}}",
		"##template: basic\nup $uptime",
		"price: 5$",
		"up {{ uptime }} $uptime",
		"## template: jinja\nup {{ uptime }} $uptime",
		"## Template:  JINJA\n{{UPTIME}}",
	}
	deliberate := map[string]string{
		// cloud-init's basic renderer raises on a name it has not
		// (KeyError) and prints nothing; earlyinit keeps the name.
		"up $Uptime and $unknown": "up $Uptime and $unknown",
		// With it, an unknown name is jinja's undefined marker in
		// cloud-init; earlyinit keeps the text.
		"## template: jinja\n{{ nope }} {{ uptime }}": "{{ nope }} 42.12",
	}
	for m := range deliberate {
		msgs = append(msgs, m)
	}
	var want []*string
	coretest.CloudinitOracle(t, finalMessageOracle, msgs, &want)
	for i, m := range msgs {
		got := renderTemplate(m, subs)
		ci := "(nothing: render failed)"
		if want[i] != nil {
			ci = *want[i]
		}
		if d, ok := deliberate[m]; ok {
			if got != d {
				t.Errorf("%q: got %q, want %q", m, got, d)
			}
			if got == ci {
				t.Errorf("%q: now as cloud-init: drop it from the differences", m)
			}
			continue
		}
		if got != ci {
			t.Errorf("%q: earlyinit %q, cloud-init %q", m, got, ci)
		}
	}
}
