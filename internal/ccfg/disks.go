package ccfg

// DiskSetup is one of cc_disk_setup's disk_setup, by device or alias.
// Layout is read as DiskLayout by the module, which reads it first.
type DiskSetup struct {
	TableType *PartTable `yaml:"table_type" cc:"enum=mbr|gpt"`
	Layout    any        `yaml:"layout"`
	Overwrite bool       `yaml:"overwrite"`
	err       error
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

// FSSetup is one of cc_disk_setup's fs_setup. ExtraOpts and Cmd, of
// several kinds in the schema, are read by the module as MkfsOpts and
// MkfsCmd where it uses them.
type FSSetup struct {
	Label      string    `yaml:"label"`
	Filesystem string    `yaml:"filesystem"`
	Device     string    `yaml:"device"`
	ReplaceFS  ReplaceFS `yaml:"replace_fs"`
	Partition  string    `yaml:"partition" cc:"default=any"`
	Overwrite  bool      `yaml:"overwrite"`
	ExtraOpts  any       `yaml:"extra_opts"`
	Cmd        any       `yaml:"cmd"`
	err        error
}

// Shape: partition is a word or a number (22.4's schema takes only the
// words, though its own description, and its module, also take a
// partition's number: so does earlyinit; read as str(), "any" when not
// given, which the schema does not list); extra_opts and cmd a string or
// a list of strings.
func (FSSetup) Shape(s *Schema) {
	s.Props["partition"] = &Schema{Alts: map[string]*Schema{
		"string":  {Types: []string{"string"}, Enum: []any{"auto", "any", "none"}},
		"integer": nil,
	}}
	s.Props["extra_opts"] = StrOrList(0)
	s.Props["cmd"] = StrOrList(0)
}
