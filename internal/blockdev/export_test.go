package blockdev

import "context"

// List is listContext without a deadline of the caller's.
func List(sysRoot, devRoot string) ([]Device, error) {
	return listContext(context.Background(), sysRoot, devRoot)
}
