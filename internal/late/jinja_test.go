//go:build !initrd

package late

import (
	"context"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/paths"
)

// TestJinjaUserData: a `## template: jinja` user-data renders with the
// cached instance's data (instance-data-sensitive.json) in the late
// stage: its cloud-config reaches the modules, its script is written for
// scripts_user, an undefined name is a warning naming it, and a template
// outside the subset is dropped with a warning naming its line.
func TestJinjaUserData(t *testing.T) {
	f := newFixture(t)
	ud := `Content-Type: multipart/mixed; boundary="B"
MIME-Version: 1.0

--B
Content-Type: text/jinja2

## template: jinja
#cloud-config
hostname: {{ v1.local_hostname }}-{{ ds.meta_data['local-hostname'] | replace('.', '-') }}
final_message: "{{ v1.instance_id }} {{ nope }} {{ merged_cfg._doc | default('none') | length > 10 }}"
--B
Content-Type: text/plain
Content-Disposition: attachment; filename="hello.sh"

## template: jinja
#!/bin/sh
echo {{ instance_id | upper }}
--B
Content-Type: text/plain

## template: jinja
#cloud-config
runcmd:
{% macro m() %}{% endmacro %}
--B--
`
	f.store("iid-j", ud)
	var cfg map[string]any
	probe := modules.Module{Name: "probe", Stage: modules.StageBoot, Frequency: modules.Always,
		Run: func(_ context.Context, e *core.Env) error { cfg = e.Cfg; return nil }}
	res := f.run(modules.StageBoot, []modules.Module{probe})
	if cfg["hostname"] != "host1-host1-example-com" || cfg["final_message"] != "iid-j CI_MISSING_JINJA_VAR/nope True" {
		t.Errorf("rendered cloud-config: hostname %q, final_message %q", cfg["hostname"], cfg["final_message"])
	}
	if _, ok := cfg["runcmd"]; ok {
		t.Errorf("the refused template's runcmd was merged")
	}
	if got := f.read(core.ScriptsDir("iid-j") + "/hello.sh"); got != "#!/bin/sh\necho IID-J" {
		t.Errorf("script %q", got)
	}
	warns := strings.Join(res.Warnings, "\n")
	for _, w := range []string{"could not render jinja template variables in the template: 'nope'", "line 4: the 'macro' tag is not supported by earlyinit's Jinja"} {
		if !strings.Contains(warns, w) {
			t.Errorf("warnings lack %q:\n%s", w, warns)
		}
	}
	// Without the instance data, the templates are dropped, said.
	if err := f.root.Remove(paths.RunDir + "/instance-data-sensitive.json"); err != nil {
		t.Fatal(err)
	}
	cfg = nil
	res = f.run(modules.StageBoot, []modules.Module{probe})
	if _, ok := cfg["hostname"]; ok || !strings.Contains(strings.Join(res.Warnings, "\n"), "cannot render without the instance data") {
		t.Errorf("without instance data: hostname %v, warnings %q", cfg["hostname"], res.Warnings)
	}
}
