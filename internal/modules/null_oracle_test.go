package modules

import (
	"context"
	"testing"
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
		run      func(context.Context, *Env) error
	}{
		{"cc_keyboard", "keyboard", keyboard},
		{"cc_ca_certs", "ca_certs", caCerts},
		{"cc_seed_random", "random_seed", seedRandom},
		{"cc_salt_minion", "salt_minion", saltMinion},
		{"cc_apk_configure", "apk_repos", apkConfigure},
	}
	var in [][2]string
	for _, c := range cases {
		in = append(in, [2]string{c.mod, c.key})
	}
	var raised []bool
	cloudinitOracle(t, nullOracle, in, &raised)
	for i, c := range cases {
		te := distroEnv(t, "debian", "")
		te.Cfg[c.key] = nil
		err := te.runFunc(c.run)
		if (err != nil) != raised[i] {
			t.Errorf("%s: null: earlyinit's module error %v; cloud-init's %s raised: %v", c.key, err, c.mod, raised[i])
		}
	}
}
