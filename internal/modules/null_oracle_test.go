package modules

import (
	"context"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules/cfgmgmt"
	"github.com/earlyinit/earlyinit/internal/modules/core"
	"github.com/earlyinit/earlyinit/internal/modules/coretest"
	"github.com/earlyinit/earlyinit/internal/modules/repos"
	"github.com/earlyinit/earlyinit/internal/modules/system"
)

// nullOracle runs each cloud-init 22.4 module's handle() with its key
// null (a mock cloud, so that only the configuration is None) and says
// whether it raised.
const nullOracle = `
from unittest import mock
import importlib
out = []
for mod, key in json.load(sys.stdin):
    m = importlib.import_module("cloudinit.config." + mod)
    try:
        m.handle(key, {key: None}, mock.MagicMock(), logging.getLogger(), [])
        out.append(False)
    except (TypeError, AttributeError):
        out.append(True)
json.dump(out, sys.stdout)
`

// TestNullConfigAsCloudInit: a key given as null where its module wants a
// map fails the module as it fails cloud-init's (ccfg.Decode's null rule),
// and apk_repos' null is nothing to do in both.
func TestNullConfigAsCloudInit(t *testing.T) {
	cases := []struct {
		mod, key string
		run      func(context.Context, *core.Env) error
	}{
		{"cc_keyboard", "keyboard", system.Keyboard},
		{"cc_ca_certs", "ca_certs", system.CACerts},
		{"cc_seed_random", "random_seed", system.SeedRandom},
		{"cc_salt_minion", "salt_minion", cfgmgmt.SaltMinion},
		{"cc_apk_configure", "apk_repos", repos.ApkConfigure},
	}
	var in [][2]string
	for _, c := range cases {
		in = append(in, [2]string{c.mod, c.key})
	}
	var raised []bool
	coretest.CloudinitOracle(t, nullOracle, in, &raised)
	for i, c := range cases {
		te := coretest.DistroEnv(t, "debian", "")
		te.Cfg[c.key] = nil
		err := te.RunFunc(c.run)
		if (err != nil) != raised[i] {
			t.Errorf("%s: null: earlyinit's module error %v; cloud-init's %s raised: %v", c.key, err, c.mod, raised[i])
		}
	}
}
