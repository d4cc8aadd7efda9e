package docgen

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/internal/ccfg"
)

// keyReference is docs/cloud-config.md's table of every key internal/ccfg
// declares: its path (a list's items as [], a map's keys by any name as
// <name>), its kinds, and what the schema holds it to.
func keyReference() string {
	var b strings.Builder
	b.WriteString("| key | kind | schema |\n| --- | --- | --- |\n")
	schemas := ccfg.Schemas()
	for _, k := range ccfg.Keys() {
		keyRows(&b, k.Name, schemas[k.Name], false)
	}
	return b.String()
}

func keyRows(b *strings.Builder, path string, s *ccfg.Schema, required bool) {
	fmt.Fprintf(b, "| `%s` | %s | %s |\n", path, kindOf(s), strings.Join(notes(s, required), "; "))
	if s == nil {
		return
	}
	alts := []*ccfg.Schema{s}
	for _, k := range slices.Sorted(maps.Keys(s.Alts)) {
		alts = append(alts, s.Alts[k])
	}
	for _, a := range alts {
		if a == nil {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(a.Props)) {
			keyRows(b, path+"."+k, a.Props[k], slices.Contains(a.Required, k))
		}
		if a.Values != nil {
			keyRows(b, path+".<name>", a.Values, false)
		}
		if a.Items != nil && !(simpleScalar(a.Items) && len(a.Alts) == 0 && len(notes(a.Items, false)) == 0) {
			keyRows(b, path+"[]", a.Items, false)
		}
	}
}

// kindOf names a schema's kinds: "string", "list of string", "string or
// list".
func kindOf(s *ccfg.Schema) string {
	switch {
	case s == nil:
		return "any"
	case s.Alts != nil:
		return strings.Join(slices.Sorted(maps.Keys(s.Alts)), " or ")
	case len(s.Types) == 0:
		return "any"
	}
	kinds := make([]string, len(s.Types))
	for i, t := range s.Types {
		kinds[i] = t
		if t == "list" && simpleScalar(s.Items) {
			kinds[i] = "list of " + s.Items.Types[0]
		}
	}
	return strings.Join(kinds, " or ")
}

// notes are what the schema holds a value to, besides its kinds.
func notes(s *ccfg.Schema, required bool) []string {
	var n []string
	if required {
		n = append(n, "required")
	}
	if s == nil {
		return n
	}
	if s.Default != "" {
		n = append(n, "default `"+s.Default+"`")
	}
	if s.Enum != nil {
		var e []string
		for _, v := range s.Enum {
			e = append(e, fmt.Sprintf("`%v`", v))
		}
		n = append(n, "one of "+strings.Join(e, ", "))
	}
	if s.MinItems > 0 {
		n = append(n, fmt.Sprintf("at least %d item(s)", s.MinItems))
	}
	if s.MaxItems > 0 {
		n = append(n, fmt.Sprintf("at most %d items", s.MaxItems))
	}
	if s.Unique {
		n = append(n, "items unique")
	}
	if s.MinProps > 0 {
		n = append(n, fmt.Sprintf("at least %d key(s)", s.MinProps))
	}
	if len(s.OneRequired) > 0 {
		n = append(n, "one of the keys "+code(s.OneRequired)+" required")
	}
	if s.KeyPattern != "" && s.KeyPattern != ccfg.AnyKey {
		n = append(n, "other keys matching `"+strings.ReplaceAll(s.KeyPattern, "|", `\|`)+"`")
	}
	if s.PatternWhat != "" {
		n = append(n, s.PatternWhat)
	}
	if s.Check != "" {
		n = append(n, "checked by userdata's "+s.Check)
	}
	if s.Deprecated != "" {
		n = append(n, "deprecated: "+s.Deprecated)
	}
	if s.Unsupported {
		n = append(n, "not supported by earlyinit: ignored")
	}
	for _, t := range s.Types {
		if t == "null" {
			n = append(n, "null allowed")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Alts)) {
		if a := s.Alts[k]; a != nil && a.Props == nil && a.Items == nil {
			if an := notes(a, false); len(an) > 0 {
				n = append(n, k+": "+strings.Join(an, ", "))
			}
		}
	}
	return n
}

// simpleScalar: one scalar kind, nothing else to say (a "list of string"
// in its list's row).
func simpleScalar(s *ccfg.Schema) bool {
	return s != nil && s.Alts == nil && len(s.Types) == 1 && s.Types[0] != "map" && s.Types[0] != "list"
}
