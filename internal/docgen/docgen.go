// Package docgen keeps the lists in docs/reference.md and docs/ that restate a
// registry in step with it: the datasources (internal/discover.Sources: names,
// classes, seed directories, drive labels), the modules
// (internal/modules.All: stage, order, frequency) and cloud-config's keys
// (internal/ccfg.Config: the key reference). Generated text sits between
// <!-- docgen:NAME --> and <!-- /docgen --> markers; TestDocs fails when a
// region differs from what the registry gives (go test ./internal/docgen
// -update rewrites them), and checks the module tables row by row.
package docgen

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/earlyinit/earlyinit/internal/datasource"
	"github.com/earlyinit/earlyinit/internal/discover"
	"github.com/earlyinit/earlyinit/internal/modules"
)

// Regions are the generated texts by region name.
func Regions() map[string]string {
	return map[string]string{
		"ds-names":      code(names(discover.Sources)),
		"ds-default":    "`" + strings.Join(names(discover.Sources), ",") + "`",
		"ds-classes":    code(classes(discover.Sources)),
		"ds-seed-table": seedTable(discover.Sources),
		"cc-keys":       keyReference(),
	}
}

func names(srcs []datasource.Source) []string {
	var n []string
	for _, s := range srcs {
		n = append(n, s.Name)
	}
	return n
}

// classes are the datasource_list names earlyinit reads, in registry
// order, each once, then None.
func classes(srcs []datasource.Source) []string {
	var c []string
	for _, s := range srcs {
		if !slices.Contains(c, s.Class) {
			c = append(c, s.Class)
		}
	}
	return append(c, "None")
}

func code(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = "`" + s + "`"
	}
	return strings.Join(q, ", ")
}

// seedTable is docs/reference.md's table of the sources read from seed
// directories or drives.
func seedTable(srcs []datasource.Source) string {
	var b strings.Builder
	b.WriteString("| source | seed directories | drive label (ISO9660 or vfat; CD-ROM, disk or partition) |\n| --- | --- | --- |\n")
	for _, s := range srcs {
		if len(s.SeedDirs) == 0 && len(s.Labels) == 0 {
			continue
		}
		fmt.Fprintf(&b, "| `%s` (%s) | %s | %s |\n", s.Name, s.Class, code(s.SeedDirs), code(s.Labels))
	}
	b.WriteString("| the metadata services | | over the network, below |\n")
	return b.String()
}

var region = regexp.MustCompile(`(?s)<!-- docgen:([a-z-]+) -->(.*?)<!-- /docgen -->`)

// Apply rewrites every region of text with Regions' texts; it returns the
// names of the regions it found. An unknown region name is an error.
func Apply(text string) (string, []string, error) {
	gen := Regions()
	var found []string
	var err error
	out := region.ReplaceAllStringFunc(text, func(m string) string {
		name := region.FindStringSubmatch(m)[1]
		g, ok := gen[name]
		if !ok {
			err = fmt.Errorf("unknown docgen region %q", name)
			return m
		}
		found = append(found, name)
		if strings.HasSuffix(g, "\n") {
			g = "\n" + g
		}
		return "<!-- docgen:" + name + " -->" + g + "<!-- /docgen -->"
	})
	return out, found, err
}

// ModuleRow is one row of docs/cloud-config.md's module tables.
type ModuleRow struct {
	Stage     modules.Stage
	Name      string
	Frequency modules.Frequency
	// Keys is the row's keys cell as written (parseModuleTables only).
	Keys string
}

// moduleRows is what the module tables must list: every module of
// modules.All, by stage, in order.
func moduleRows() []ModuleRow {
	var rows []ModuleRow
	for _, m := range modules.All() {
		rows = append(rows, ModuleRow{Stage: m.Stage, Name: m.Name, Frequency: m.Frequency})
	}
	return rows
}

var (
	stageHeading = regexp.MustCompile("(?m)^### (Boot|Final) stage, in order$")
	moduleRow    = regexp.MustCompile("^\\| `([a-z0-9_]+)`\\s*\\|\\s*([a-z-]+)\\s*\\|(.*)\\|\\s*$")
)

// parseModuleTables reads the rows of the "### Boot stage, in order" and
// "### Final stage, in order" tables of docs/cloud-config.md.
func parseModuleTables(text string) []ModuleRow {
	var rows []ModuleRow
	locs := stageHeading.FindAllStringSubmatchIndex(text, -1)
	for _, loc := range locs {
		stage := modules.StageBoot
		if text[loc[2]:loc[3]] == "Final" {
			stage = modules.StageFinal
		}
		rest := text[loc[1]:]
		if end := strings.Index(rest, "\n\n|"); end >= 0 {
			// the table starts after one blank line
			rest = rest[end+2:]
		}
		for _, line := range strings.Split(rest, "\n") {
			if !strings.HasPrefix(line, "|") {
				break
			}
			if m := moduleRow.FindStringSubmatch(line); m != nil {
				rows = append(rows, ModuleRow{stage, m[1], modules.Frequency(m[2]), strings.TrimSpace(m[3])})
			}
		}
	}
	return rows
}
