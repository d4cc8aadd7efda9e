package netcfg

import "fmt"

// Parse parses data of the given format (the values of
// instance.NetworkFormat: "network_data.json", "yaml", "eni", "ec2").
// macToName (lower-case MAC -> current name, usually the live NICs) names
// network_data.json links, EC2 NICs and, as cloud-init does from the live
// system, v2 ethernets matched by MAC without set-name; it may be nil (see
// ParseEC2 for what nil means there). Parse checks each entry; call Validate
// once every interface is named.
func Parse(format string, data []byte, macToName map[string]string) (*Config, error) {
	switch format {
	case "network_data.json":
		return ParseNetworkData(data, macToName)
	case "yaml":
		return parseYAML(data, macToName)
	case "eni":
		return ParseENI(data)
	case "ec2":
		return ParseEC2(data, macToName)
	}
	return nil, fmt.Errorf("network config: unknown format %q", format)
}
