package modules_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestLazyREsCompile compiles the expression of every LazyRE literal in
// the modules' code (the registry, core and each family), so that a bad
// one fails here rather than at its first use in a boot. The literals are
// found in the source: a new one needs no line here.
func TestLazyREsCompile(t *testing.T) {
	n := 0
	for _, pkg := range modulePackages(t) {
		names, err := filepath.Glob(filepath.Join(pkg[1], "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(x ast.Node) bool {
				cl, ok := x.(*ast.CompositeLit)
				if !ok || !isLazyRE(cl.Type) {
					return true
				}
				for _, el := range cl.Elts {
					kv, ok := el.(*ast.KeyValueExpr)
					if k, _ := kv.Key.(*ast.Ident); !ok || k == nil || k.Name != "Expr" {
						continue
					}
					lit, ok := kv.Value.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Errorf("%s: a LazyRE's Expr is not a string literal", filepath.Base(name))
						continue
					}
					s, err := strconv.Unquote(lit.Value)
					if err == nil {
						_, err = regexp.Compile(s)
					}
					if err != nil {
						t.Errorf("%s: %s: %v", filepath.Base(name), lit.Value, err)
					}
					n++
				}
				return true
			})
		}
	}
	// 17 when this test was written: fewer means the finder went blind.
	if n < 17 {
		t.Errorf("%d LazyRE literals found, want at least 17", n)
	}
}

func isLazyRE(e ast.Expr) bool {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name == "LazyRE"
	case *ast.SelectorExpr:
		return e.Sel.Name == "LazyRE"
	}
	return false
}
