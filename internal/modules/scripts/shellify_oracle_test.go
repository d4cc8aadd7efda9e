package scripts

import (
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/oracle"
)

// shellifyDriver loads each document with cloud-init 22.4's YAML loader
// and runs its util.shellify on runcmd, as cc_runcmd and cc_bootcmd do:
// the script, or the error's type.
const shellifyDriver = `
from cloudinit import util
out = []
for doc in json.load(sys.stdin):
    try:
        out.append({"script": util.shellify(util.load_yaml(doc)["runcmd"])})
    except Exception as e:
        out.append({"error": type(e).__name__})
print(json.dumps(out))
`

// TestShellifyAsCloudInit: the script runcmd and bootcmd write is
// cloud-init's util.shellify's, byte for byte, for the same YAML, and an
// item it refuses is refused.
func TestShellifyAsCloudInit(t *testing.T) {
	docs := []string{
		"runcmd: [ls -l /]",
		"runcmd: [[ls, -l, /]]",
		"runcmd: [[sh, -c, \"echo 'quoted' \\\"double\\\"\"]]",
		"runcmd: [\"echo $HOME > /tmp/x\", [echo, $HOME]]",
		"runcmd: [[echo, 1, 1.5, 1.0, 1e3, true, false, null, yes, 0x10, 010]]",
		"runcmd: [[echo, '', ' ']]",
		"runcmd: [[echo, {a: b}]]",
		"runcmd: [[echo, [a, b]]]",
		"runcmd: [42]",
		"runcmd: [true]",
		"runcmd: [{a: b}]",
		"runcmd: [null, echo after a null]",
		"runcmd: [[]]",
		"runcmd: []",
		"runcmd: echo not a list",
		"runcmd:\n  - |\n    if true; then\n      echo multi\n    fi\n",
		"runcmd: [[echo, \"tab\\there\", \"new\\nline\"]]",
		"runcmd: [[echo, 2001-01-01, 12:30:00]]",
	}
	var want []struct {
		Script *string
		Error  string
	}
	oracle.Run(t, shellifyDriver, docs, &want)
	if len(want) != len(docs) {
		t.Fatalf("%d answers for %d documents", len(want), len(docs))
	}
	// cloud-init writes a map or list inside a command as Python's repr
	// ('{'\''a'\'': ...'); earlyinit refuses it: no command means that.
	deliberate := map[string]bool{"runcmd: [[echo, {a: b}]]": true, "runcmd: [[echo, [a, b]]]": true}
	refused := 0
	for i, doc := range docs {
		te := coretest.NewEnv(t, doc)
		got, err := commandsScript(te.Env, "runcmd")
		if deliberate[doc] {
			if want[i].Script == nil || err == nil {
				t.Errorf("%s: the deliberate difference is gone: earlyinit %q %v, cloud-init %+v", doc, got, err, want[i])
			}
			continue
		}
		switch {
		case want[i].Script == nil:
			refused++
			if err == nil {
				t.Errorf("%s: cloud-init refuses it (%s), earlyinit writes %q", doc, want[i].Error, got)
			}
		case err != nil:
			t.Errorf("%s: earlyinit: %v; cloud-init writes %q", doc, err, *want[i].Script)
		case got != *want[i].Script:
			t.Errorf("%s:\nearlyinit  %q\ncloud-init %q", doc, got, *want[i].Script)
		}
	}
	if refused == 0 || refused == len(docs) {
		t.Errorf("%d of %d documents refused: the cases no longer cover both outcomes", refused, len(docs))
	}
}
