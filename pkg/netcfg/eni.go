package netcfg

import "errors"

// ParseENI parses Debian interfaces(5) text. Not implemented yet.
func ParseENI(data []byte) (*Config, error) {
	return nil, errors.New("network-interfaces: ENI parsing is not implemented yet")
}
