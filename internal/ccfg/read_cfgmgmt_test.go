package ccfg_test

import (
	"reflect"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
)

// TestCfgmgmtSchemasAsTheirKinds: the types that decode themselves have
// the schema of the kind they stand for, so that the schema (and
// cloud-init's verdicts on it) is the one the plain kinds gave.
func TestCfgmgmtSchemasAsTheirKinds(t *testing.T) {
	for _, c := range []struct{ got, want reflect.Type }{
		{reflect.TypeFor[ccfg.Args](), reflect.TypeFor[[]string]()},
		{reflect.TypeFor[ccfg.Argv](), reflect.TypeFor[[]string]()},
		{reflect.TypeFor[ccfg.Later[string]](), reflect.TypeFor[string]()},
		{reflect.TypeFor[ccfg.Later[ccfg.Argv]](), reflect.TypeFor[[]string]()},
		{reflect.TypeFor[ccfg.BoolWord](), reflect.TypeFor[bool]()},
		{reflect.TypeFor[ccfg.TruthyString](), reflect.TypeFor[string]()},
	} {
		if g, w := ccfg.Of(c.got), ccfg.Of(c.want); !reflect.DeepEqual(g, w) {
			t.Errorf("%s: schema %+v, want %s's %+v", c.got, g, c.want, w)
		}
	}
}
