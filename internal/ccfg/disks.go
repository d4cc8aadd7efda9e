package ccfg

// DiskSetup is one of cc_disk_setup's disk_setup, by device or alias.
type DiskSetup struct {
	TableType string `yaml:"table_type" cc:"enum=mbr|gpt"`
	Layout    any    `yaml:"layout"`
	Overwrite bool   `yaml:"overwrite"`
}

// Shape: layout is "remove", a boolean, or a list of partitions (a
// percentage, or [percentage, type]).
func (DiskSetup) Shape(s *Schema) {
	s.Props["layout"] = &Schema{Alts: map[string]*Schema{
		"string":  {Types: []string{"string"}, Enum: []any{"remove"}},
		"boolean": {Types: []string{"boolean"}},
		"list": {Types: []string{"list"}, Items: &Schema{Alts: map[string]*Schema{
			"integer": nil,
			"list":    {Types: []string{"list"}, Items: &Schema{Types: []string{"integer"}}, MinItems: 2, MaxItems: 2},
		}}},
	}}
}

// FSSetup is one of cc_disk_setup's fs_setup.
type FSSetup struct {
	Label      string `yaml:"label"`
	Filesystem string `yaml:"filesystem"`
	Device     string `yaml:"device"`
	ReplaceFS  string `yaml:"replace_fs"`
	Partition  any    `yaml:"partition"`
	Overwrite  bool   `yaml:"overwrite"`
	ExtraOpts  any    `yaml:"extra_opts"`
	Cmd        any    `yaml:"cmd"`
}

// Shape: partition is a word or a number (22.4's schema takes only the
// words, though its own description, and its module, also take a
// partition's number: so does earlyinit); extra_opts and cmd a string or
// a list of strings.
func (FSSetup) Shape(s *Schema) {
	s.Props["partition"] = &Schema{Alts: map[string]*Schema{
		"string":  {Types: []string{"string"}, Enum: []any{"auto", "any", "none"}},
		"integer": nil,
	}}
	s.Props["extra_opts"] = StrOrList(0)
	s.Props["cmd"] = StrOrList(0)
}
