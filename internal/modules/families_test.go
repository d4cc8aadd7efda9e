package modules_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/modules"
)

const modulesPath = "github.com/earlyinit/earlyinit/internal/modules"

// notFamilies are the packages under internal/modules that hold no
// module: the shared core, its test kit and sshd_config's editor.
var notFamilies = map[string]bool{"core": true, "coretest": true, "sshd": true}

// TestFamilies keeps the layout docs/design.md describes true: the
// modules live in family packages under internal/modules, each importing
// core and never another family (core imports none); every exported
// module function of a family (func(context.Context, *core.Env) error) is
// in All(), and every function in All() is one of them; design.md names
// exactly the families there are.
func TestFamilies(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \",\"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	families := map[string]bool{}
	imports := map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		p, imps, _ := strings.Cut(l, " ")
		if p == modulesPath {
			continue
		}
		name := path.Base(p)
		if !notFamilies[name] {
			families[name] = true
		}
		imports[name] = strings.Split(imps, ",")
	}
	if len(families) < 6 {
		t.Fatalf("%d families, want at least 6", len(families))
	}
	for name, imps := range imports {
		for _, imp := range imps {
			rest, ok := strings.CutPrefix(imp, modulesPath+"/")
			if !ok {
				continue
			}
			switch {
			case (name == "core" || name == "coretest" || name == "sshd") && rest != "core":
				t.Errorf("%s imports %s: core, coretest and sshd import only core", name, rest)
			case families[name] && families[rest]:
				t.Errorf("family %s imports family %s: what both need goes in core", name, rest)
			}
		}
	}

	// The module functions each family declares.
	declared := map[string]bool{}
	for fam := range families {
		names, _ := filepath.Glob(filepath.Join(fam, "*.go"))
		for _, n := range names {
			if strings.HasSuffix(n, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), n, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Name.IsExported() && isModuleFunc(fd.Type) {
					declared[fam+"."+fd.Name.Name] = true
				}
			}
		}
	}
	registered := map[string]bool{}
	for _, m := range modules.All() {
		full := runtime.FuncForPC(reflect.ValueOf(m.Run).Pointer()).Name()
		rest, ok := strings.CutPrefix(full, modulesPath+"/")
		if !ok || !declared[rest] {
			t.Errorf("module %s runs %s: not an exported module function of a family", m.Name, full)
		}
		registered[rest] = true
	}
	for f := range declared {
		if !registered[f] {
			t.Errorf("%s is a module function no line of All() runs", f)
		}
	}

	// design.md's row names the families.
	b, err := os.ReadFile("../../docs/design.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("`internal/modules/\\{([a-z,]+)\\}`").FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/design.md: no `internal/modules/{family,...}` row")
	}
	var want, got []string
	for f := range families {
		want = append(want, f)
	}
	got = strings.Split(string(m[1]), ",")
	sort.Strings(want)
	sort.Strings(got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("docs/design.md names the families %v; they are %v", got, want)
	}
}

// isModuleFunc: func(context.Context, *core.Env) error.
func isModuleFunc(ft *ast.FuncType) bool {
	var params []string
	for _, f := range ft.Params.List {
		n := len(f.Names)
		if n == 0 {
			n = 1
		}
		for range n {
			params = append(params, exprString(f.Type))
		}
	}
	return len(params) == 2 && params[0] == "context.Context" && params[1] == "*core.Env" &&
		ft.Results != nil && len(ft.Results.List) == 1 && exprString(ft.Results.List[0].Type) == "error"
}

func exprString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprString(e.X) + "." + e.Sel.Name
	case *ast.StarExpr:
		return "*" + exprString(e.X)
	}
	return "?"
}
