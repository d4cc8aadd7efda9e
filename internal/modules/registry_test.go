package modules

import (
	"context"

	"github.com/earlyinit/earlyinit/internal/modules/coretest"
)

func runModule(te *coretest.Env, name string) error {
	te.T.Helper()
	m, ok := Lookup(name)
	if !ok {
		te.T.Fatalf("no module %s", name)
	}
	return m.Run(context.Background(), te.Env)
}
