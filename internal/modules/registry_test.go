package modules

import "context"

func (te *testEnv) runModule(name string) error {
	te.t.Helper()
	m, ok := Lookup(name)
	if !ok {
		te.t.Fatalf("no module %s", name)
	}
	return m.Run(context.Background(), te.Env)
}
