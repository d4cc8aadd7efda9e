package docgen

import (
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/discover"
	"github.com/earlyinit/earlyinit/internal/modules"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

var update = flag.Bool("update", false, "rewrite the generated regions of the docs")

// docs are the files with generated regions, and the regions each must
// have.
var docs = map[string][]string{
	"docs/reference.md":    {"ds-names", "ds-default", "ds-seed-table", "ds-classes"},
	"docs/cloud-config.md": {"cc-keys"},
}

// TestDocs: every generated region is what the registries give now (run
// go test ./internal/docgen -update after changing a registry).
func TestDocs(t *testing.T) {
	for file, want := range docs {
		p := filepath.Join("..", "..", file)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		got, found, err := Apply(string(b))
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, w := range want {
			if !slices.Contains(found, w) {
				t.Errorf("%s has no <!-- docgen:%s --> region", file, w)
			}
		}
		if got == string(b) {
			continue
		}
		if *update {
			if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is out of step with the registries: run go test ./internal/docgen -update", file)
	}
}

// TestModuleTables: docs/cloud-config.md's stage tables list every
// module of modules.All, in its stage and order, with its frequency, and
// nothing else.
func TestModuleTables(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "cloud-config.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, want := parseModuleTables(string(b)), moduleRows()
	for i := range got {
		got[i].Keys = "" // TestModuleTableKeys'
	}
	if !reflect.DeepEqual(got, want) {
		var g, w []string
		for _, r := range got {
			g = append(g, string(r.Stage)+" "+r.Name+" "+string(r.Frequency))
		}
		for _, r := range want {
			w = append(w, string(r.Stage)+" "+r.Name+" "+string(r.Frequency))
		}
		t.Errorf("docs/cloud-config.md's module tables:\n%s\nmodules.All():\n%s", strings.Join(g, "\n"), strings.Join(w, "\n"))
	}
}

// TestModuleTableKeys: the keys docs/cloud-config.md's module tables name
// are the schema's, a key in parentheses declared below the key before
// them (userdata.DeclaredKeys), and each row names every top-level key the
// registry activates its module by (modules.Module.Keys). Words in
// backticks that are not keys (paths, `#!`, `apt_*`, `users[].x`,
// `defer: true`) are prose.
func TestModuleTableKeys(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "cloud-config.md"))
	if err != nil {
		t.Fatal(err)
	}
	decl := userdata.DeclaredKeys()
	reg := map[string][]string{}
	for _, m := range modules.All() {
		reg[m.Name] = m.Keys
	}
	checked := 0
	for _, row := range parseModuleTables(string(b)) {
		named := map[string]bool{}
		for _, k := range cellKeys(row.Keys) {
			if k.parent == "" {
				top, _, _ := strings.Cut(k.key, ".")
				named[top] = true
				if !decl[k.key] {
					t.Errorf("module %s's row names %q, which the schema does not declare", row.Name, k.key)
				}
				checked++
				continue
			}
			found := false
			for p := range decl {
				if strings.HasPrefix(p, k.parent+".") && strings.HasSuffix(p, "."+k.key) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("module %s's row names %q under %q, which the schema does not declare there", row.Name, k.key, k.parent)
			}
			checked++
		}
		for _, k := range reg[row.Name] {
			if !named[k] {
				t.Errorf("module %s's row does not name %q, a key its module runs for (modules.All)", row.Name, k)
			}
		}
	}
	if checked < 100 {
		t.Errorf("%d keys checked in the module tables: the cells are no longer read", checked)
	}
}

// cellKey is a key a table cell names, and the top-level key before the
// parentheses it is in ("" at the top).
type cellKey struct{ key, parent string }

var keyWord = regexp.MustCompile(`^[a-z][a-z0-9_.-]*$`)

// cellKeys reads the keys of a module table's keys cell.
func cellKeys(cell string) []cellKey {
	var out []cellKey
	depth, parent := 0, ""
	for i := 0; i < len(cell); i++ {
		switch cell[i] {
		case '(':
			depth++
		case ')':
			depth--
		case '`':
			j := strings.IndexByte(cell[i+1:], '`')
			if j < 0 {
				return out
			}
			w := cell[i+1 : i+1+j]
			i += j + 1
			if !keyWord.MatchString(w) {
				continue
			}
			switch {
			case depth == 0:
				parent = w
				out = append(out, cellKey{w, ""})
			case !strings.Contains(w, "."): // not a file name (`client.rb`)
				out = append(out, cellKey{w, parent})
			}
		}
	}
	return out
}

// TestPlatformTableNamesEverySource: the reference's platform table has a row
// for every source of the registry, by its name.
func TestPlatformTableNamesEverySource(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "reference.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, "| platform (source) |")
	if i < 0 {
		t.Fatal("docs/reference.md has no platform table")
	}
	table := text[i:]
	table = table[:strings.Index(table, "\n\n")]
	for _, s := range discover.Sources {
		if !strings.Contains(table, "`"+s.Name+"`") {
			t.Errorf("docs/reference.md's platform table has no row for %s", s.Name)
		}
	}
}

// docPath is a path of this tree as the docs write it, in backticks:
// "internal/selinux", "qemu-tests/platforms_test.go", "docs/faults.md".
var docPath = regexp.MustCompile("`((?:pkg|cmd|internal|qemu-tests|docs|bench|initramfs|packaging|\\.ci)/[A-Za-z0-9_./-]*)`")

// TestDocPathsExist: every path of the tree the docs name (in backticks,
// as "How to add" names where a change goes) is there: a doc that sends
// a maintainer to a file that moved is wrong.
func TestDocPathsExist(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil || len(files) == 0 {
		t.Fatalf("docs/*.md: %v", err)
	}
	files = append(files, filepath.Join("..", "..", "README.md"))
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range docPath.FindAllStringSubmatch(string(b), -1) {
			p := strings.TrimSuffix(m[1], "/")
			n++
			if _, err := os.Stat(filepath.Join("..", "..", p)); err != nil {
				t.Errorf("%s names %s, which is not in the tree", filepath.Base(f), p)
			}
		}
	}
	if n < 50 {
		t.Errorf("only %d paths found in the docs: the pattern no longer matches how they write them", n)
	}
}
