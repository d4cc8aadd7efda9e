package render

// Convert is the whole of `earlyinit net-convert` but the writing:
// network.Build with no root, the renderer named and macToName from the -m
// flags. The differential test against cloud-init (cloudinit_test.go) runs
// it, so it checks what net-convert writes. internal/network imports this
// package, so only the external test package can reach it: netconvert_test.go
// sets Convert.
var Convert func(in []byte, kind string, macToName map[string]string, renderer string) ([]File, error)
