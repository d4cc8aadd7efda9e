package userdata

// LoadYAML parses one YAML document as cloud-init reads its configuration
// (PyYAML's SafeLoader, YAML 1.1: yes/no/on/off are booleans, 0644 is
// octal, 1:20 is sexagesimal), into map[string]any, []any, string, int,
// float64, bool, []byte or nil. An empty document is nil, nil. Errors give
// a line and column, never the text of a value. It is what MergeParts uses
// for cloud-config parts, exported so that the image's configuration files
// (internal/imagecfg) are read by the same rules.
func LoadYAML(data []byte) (any, error) {
	return loadYAML(data)
}
