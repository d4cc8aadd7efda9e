package modules_test

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/earlyinit/earlyinit/internal/ccfg"
	"github.com/earlyinit/earlyinit/internal/userdata"
)

// cfgRead is a cloud-config key a module's code reads by its name: a
// string literal indexing a map[string]any (m["servers"]), or following a
// map[string]any among a call's arguments (cfgBool(m, "enabled", ...)).
type cfgRead struct {
	file string // base name
	line int
	key  string
	top  bool // read from Env.Cfg itself: a top-level key
}

// checked is the non-test code of this package and its families
// (internal/modules/...), type-checked.
type checked struct {
	fset  *token.FileSet
	files []*ast.File
	info  *types.Info
}

// modulePackages are the import paths and directories of this package
// and the packages under it: the registry, core and each family.
func modulePackages(t *testing.T) [][2]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{.Dir}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs [][2]string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if path, dir, ok := strings.Cut(l, " "); ok {
			pkgs = append(pkgs, [2]string{path, dir})
		}
	}
	if len(pkgs) < 2 {
		t.Fatalf("go list ./...: %d packages: the families are missing", len(pkgs))
	}
	return pkgs
}

// typeCheck type-checks the non-test code of every package under
// internal/modules into one Info. Types come from the build cache's
// export data (go list -export), so each package is type-checked as the
// compiler sees it.
func typeCheck(t *testing.T) checked {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), " "); ok && file != "" {
			exports[path] = file
		}
	}
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	var all []*ast.File
	for _, pkg := range modulePackages(t) {
		names, err := filepath.Glob(filepath.Join(pkg[1], "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		var files []*ast.File
		for _, n := range names {
			if ok, err := build.Default.MatchFile(pkg[1], filepath.Base(n)); err != nil || !ok || strings.HasSuffix(n, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, n, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		if len(files) == 0 {
			continue
		}
		if _, err := (&types.Config{Importer: imp}).Check(pkg[0], fset, files, info); err != nil {
			t.Fatalf("type-check %s: %v", pkg[0], err)
		}
		all = append(all, files...)
	}
	return checked{fset, all, info}
}

// cfgReads lists the key reads of this package's non-test code.
func cfgReads(t *testing.T) []cfgRead {
	t.Helper()
	c := typeCheck(t)
	fset, files, info := c.fset, c.files, c.info
	isCfgMap := func(e ast.Expr) bool {
		tv, ok := info.Types[e]
		if !ok {
			return false
		}
		m, ok := tv.Type.Underlying().(*types.Map)
		if !ok {
			return false
		}
		k, ok := m.Key().Underlying().(*types.Basic)
		if !ok || k.Kind() != types.String {
			return false
		}
		i, ok := m.Elem().Underlying().(*types.Interface)
		return ok && i.Empty()
	}
	isCfg := func(e ast.Expr) bool {
		s, ok := e.(*ast.SelectorExpr)
		if !ok || s.Sel.Name != "Cfg" || !isCfgMap(e) {
			return false
		}
		t := info.Types[s.X].Type
		if p, ok := t.(*types.Pointer); ok {
			t = p.Elem()
		}
		n, ok := t.(*types.Named)
		return ok && n.Obj().Name() == "Env"
	}
	lit := func(e ast.Expr) (string, bool) {
		b, ok := e.(*ast.BasicLit)
		if !ok || b.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(b.Value)
		return s, err == nil
	}
	var reads []cfgRead
	for _, f := range files {
		// Index expressions written to (m["k"] = v) are not reads.
		written := map[ast.Expr]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if a, ok := n.(*ast.AssignStmt); ok {
				for _, l := range a.Lhs {
					written[l] = true
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.IndexExpr:
				if written[n] || !isCfgMap(n.X) {
					return true
				}
				if k, ok := lit(n.Index); ok {
					p := fset.Position(n.Pos())
					reads = append(reads, cfgRead{p.Filename, p.Line, k, isCfg(n.X)})
				}
			case *ast.CallExpr:
				for i := 0; i+1 < len(n.Args); i++ {
					if !isCfgMap(n.Args[i]) {
						continue
					}
					if k, ok := lit(n.Args[i+1]); ok {
						p := fset.Position(n.Pos())
						reads = append(reads, cfgRead{p.Filename, p.Line, k, isCfg(n.Args[i])})
					}
				}
			}
			return true
		})
	}
	sort.Slice(reads, func(i, j int) bool {
		if reads[i].file != reads[j].file {
			return reads[i].file < reads[j].file
		}
		return reads[i].line < reads[j].line
	})
	return reads
}

// notCloudConfig are keys read from maps of ours that are not
// cloud-config (the platform's metadata), and where.
var notCloudConfig = map[string]string{
	"block-device-mapping": "disk_setup.go: EC2's metadata (Env.Data.Meta)",
	"meta":                 "platform_password.go: OpenStack's meta_data.json",
	"admin_pass":           "platform_password.go: OpenStack's meta_data.json",
}

// undeclaredReads are cloud-config keys a module reads that the schema does
// not name, and why that is right.
var undeclaredReads = map[string]string{
	"metalink":         "yum_repos.<name>: a repository takes any option by its pattern, written as given",
	"mirrorlist":       "yum_repos.<name>: a repository takes any option by its pattern, written as given",
	"reposdir":         "zypper.config takes any of zypp.conf's keys",
	"rsyslog_filename": "read only with rsyslog's legacy list form, which 22.4's schema refuses and earlyinit's too",
	"rsyslog_dir":      "read only with rsyslog's legacy list form, which 22.4's schema refuses and earlyinit's too",
}

// TestModulesReadDeclaredKeys: every cloud-config key a module reads by
// name is one the schema declares, so `earlyinit schema` and the boot's
// warnings never call a key the modules act on unknown, or "not supported
// by earlyinit: ignored" (ntp.ntp_use_dhcp_config and system_info's
// ntp_client, ssh_svcname... were, before this test). A top-level key read
// from Env.Cfg must be one earlyinit supports; a key read below the top
// must be declared somewhere below it, other than as one of the keys
// system_info takes by pattern (distribution internals earlyinit ignores).
func TestModulesReadDeclaredKeys(t *testing.T) {
	decl := userdata.DeclaredKeys()
	names := map[string]bool{}
	for p := range decl {
		if strings.HasPrefix(p, "system_info.<key>") {
			continue
		}
		names[p[strings.LastIndex(p, ".")+1:]] = true
	}
	// No floor on the count: the reads by name are few now that modules
	// decode their types (TestModulesReadThroughTypes counts those), and
	// the lists below fail when a read they name is gone.
	reads := cfgReads(t)
	used := map[string]bool{}
	for _, r := range reads {
		at := fmt.Sprintf("%s:%d", r.file, r.line)
		if r.top {
			if supported, known := userdata.TopLevelKey(r.key); !supported {
				t.Errorf("%s reads the top-level key %q, which the schema calls unknown (%v) or not supported", at, r.key, known)
			}
			continue
		}
		if names[r.key] {
			continue
		}
		if _, ok := notCloudConfig[r.key]; ok {
			used[r.key] = true
			continue
		}
		if _, ok := undeclaredReads[r.key]; ok {
			used[r.key] = true
			continue
		}
		t.Errorf("%s reads the key %q, which the schema (internal/userdata) does not declare", at, r.key)
	}
	for _, m := range []map[string]string{notCloudConfig, undeclaredReads} {
		for k, why := range m {
			if !used[k] {
				t.Errorf("%q (%s) is no longer read: drop it from the list", k, why)
			}
		}
	}
}

// passedThrough are keys the schema declares that a module hands on as
// they come, with no code naming them.
var passedThrough = map[string]string{
	"ansible.pull":                         "every key but playbook_name is an ansible-pull option (--key value): ansibleOpts",
	"ansible.setup_controller.run_ansible": "every key but playbook_name and playbook_dir is an ansible-playbook option: ansibleOpts",
	"puppet.conf":                          "each section is written to puppet.conf as given",
	"puppet.csr_attributes":                "written to csr_attributes.yaml as given",
}

// actingPackages hold the code that acts on cloud-config, with this
// package's families (modulePackages).
var actingPackages = []string{"../accounts", "../growpart", "../late", "../imagecfg", "../provision", "../userdata"}

// TestSchemaKeysActedOn: every key the schema declares below a top-level
// key earlyinit supports is named by the code that acts on cloud-config,
// or handed on as it comes (passedThrough): a key the schema takes
// without a word and no code reads would be quietly ignored. The keys
// earlyinit does not act on are the schema's "not supported by
// earlyinit" warnings, not this test's.
func TestSchemaKeysActedOn(t *testing.T) {
	lits := map[string]bool{}
	dirs := actingPackages
	for _, pkg := range modulePackages(t) {
		dirs = append(dirs, pkg[1])
	}
	for _, dir := range dirs {
		names, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			// The schema names every key: it is not what acts on them.
			if strings.HasSuffix(n, "_test.go") || strings.HasPrefix(filepath.Base(n), "schema") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), n, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				if b, ok := n.(*ast.BasicLit); ok && b.Kind == token.STRING {
					if s, err := strconv.Unquote(b.Value); err == nil {
						lits[s] = true
					}
				}
				return true
			})
		}
	}
	fieldUsed := typedKeysUsed(t)
	used := map[string]bool{}
	var paths []string
	for p := range userdata.DeclaredKeys() {
		paths = append(paths, p)
	}
	sort.Strings(paths)
next:
	for _, p := range paths {
		top, _, _ := strings.Cut(p, ".")
		if supported, _ := userdata.TopLevelKey(top); !supported || strings.HasPrefix(p, "system_info.<key>") {
			continue
		}
		k := p[strings.LastIndex(p, ".")+1:]
		if k == "*" || k == "<key>" || lits[k] || fieldUsed[p] {
			continue
		}
		for q := range passedThrough {
			if strings.HasPrefix(p, q+".") {
				used[q] = true
				continue next
			}
		}
		t.Errorf("the schema declares %s, but no code names %q (%s) nor uses its internal/ccfg field", p, k, strings.Join(actingPackages, " "))
	}
	for q, why := range passedThrough {
		if !used[q] {
			t.Errorf("passedThrough %s (%s) matched no key: drop it", q, why)
		}
	}
}

// typedKeysUsed are the dotted key paths of the types internal/ccfg
// declares whose field this package's code uses: the module reads the key
// through its type (ccfg.Decode), so no code names it.
func typedKeysUsed(t *testing.T) map[string]bool {
	t.Helper()
	c := typeCheck(t)
	uses := map[string]bool{} // "Type.Field"
	for id, obj := range c.info.Uses {
		v, ok := obj.(*types.Var)
		if !ok || !v.IsField() || v.Pkg() == nil || v.Pkg().Path() != "github.com/earlyinit/earlyinit/internal/ccfg" {
			continue
		}
		if sel := fieldOwner(c.info, id); sel != "" {
			uses[sel+"."+v.Name()] = true
		}
	}
	out := map[string]bool{}
	var walk func(rt reflect.Type, path string)
	walk = func(rt reflect.Type, path string) {
		for rt.Kind() == reflect.Pointer || rt.Kind() == reflect.Slice || rt.Kind() == reflect.Map {
			if rt.Kind() == reflect.Slice {
				path += ".*"
			} else if rt.Kind() == reflect.Map {
				path += ".<key>"
			}
			rt = rt.Elem()
		}
		if rt.Kind() != reflect.Struct {
			return
		}
		for i := range rt.NumField() {
			f := rt.Field(i)
			key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if key == "" || key == "-" {
				continue
			}
			p := path + "." + key
			if uses[rt.Name()+"."+f.Name] {
				out[p] = true
			}
			walk(f.Type, p)
		}
	}
	for _, k := range ccfg.Keys() {
		walk(k.Type, k.Name)
	}
	if len(uses) == 0 {
		t.Fatal("no field of a ccfg type is used: the finder no longer sees the modules' typed reads")
	}
	return out
}

// fieldOwner names the struct type whose field id selects.
func fieldOwner(info *types.Info, id *ast.Ident) string {
	for e, sel := range info.Selections {
		if sel.Obj() == info.Uses[id] && e.Sel == id {
			rt := sel.Recv()
			for {
				p, ok := rt.(*types.Pointer)
				if !ok {
					break
				}
				rt = p.Elem()
			}
			if n, ok := rt.(*types.Named); ok {
				return n.Obj().Name()
			}
		}
	}
	return ""
}

// cfgConsumers are the only functions a module may hand Env.Cfg, the
// merged cloud-config, to, and why. Everything else reads a key through
// its ccfg type, so a module cannot read a key its type does not declare.
var cfgConsumers = map[string]string{
	"ccfg.Decode":          "a key read into the type ccfg.Config declares for it (an undeclared key is an error)",
	"ccfg.GivenNull":       "a null told from a key not given, for a declared key",
	"growpart.ParseConfig": "growpart and resize_rootfs read once, leniently, for the boot stage and the module alike (growpart.Config)",
	"imagecfg.Config":      "system_info.distro read as the initramfs reads the image's configuration",
	"rsyslogLegacyFiles":   "rsyslog's legacy list form's top-level rsyslog_filename and rsyslog_dir: 22.4's schema knows neither, so Config cannot declare them without changing verdicts; read only with the legacy form, which both schemas refuse",
}

// TestModulesReadThroughTypes: the modules' code reads cloud-config only
// through ccfg (cfgConsumers): no index of Env.Cfg but a presence check,
// no walk of it as a map. With TestModulesReadDeclaredKeys, which checks every key still read
// by name from a map below the top, a module cannot act on a key the
// schema does not declare.
func TestModulesReadThroughTypes(t *testing.T) {
	c := typeCheck(t)
	isEnvCfg := func(e ast.Expr) bool {
		s, ok := e.(*ast.SelectorExpr)
		if !ok || s.Sel.Name != "Cfg" {
			return false
		}
		tv, ok := c.info.Types[s.X]
		if !ok {
			return false
		}
		rt := tv.Type
		if p, ok := rt.(*types.Pointer); ok {
			rt = p.Elem()
		}
		n, ok := rt.(*types.Named)
		return ok && n.Obj().Name() == "Env" && n.Obj().Pkg().Path() == "github.com/earlyinit/earlyinit/internal/modules/core"
	}
	// consumer names the function or type an expression hands its
	// argument to: pkg.Func, pkg.Func[T] or a pkg.Type{...} literal.
	consumer := func(e ast.Expr) string {
		switch x := e.(type) {
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		}
		switch x := e.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok {
				return id.Name + "." + x.Sel.Name
			}
		case *ast.Ident:
			return x.Name
		}
		return ""
	}
	used := map[string]int{}
	for _, f := range c.files {
		ok := map[ast.Expr]bool{} // the Env.Cfg arguments of allowed consumers
		ast.Inspect(f, func(n ast.Node) bool {
			var args []ast.Expr
			var to string
			switch n := n.(type) {
			case *ast.CallExpr:
				to, args = consumer(n.Fun), n.Args
			case *ast.CompositeLit:
				to = consumer(n.Type)
				for _, el := range n.Elts {
					if kv, isKV := el.(*ast.KeyValueExpr); isKV {
						args = append(args, kv.Value)
					}
				}
			}
			// A presence check (_, ok := e.Cfg[k]) reads no value: apt
			// refuses the v1/v2 keys, which Config does not declare, by it.
			if as, isAssign := n.(*ast.AssignStmt); isAssign && len(as.Lhs) == 2 && len(as.Rhs) == 1 {
				if blank, isID := as.Lhs[0].(*ast.Ident); isID && blank.Name == "_" {
					if ix, isIndex := as.Rhs[0].(*ast.IndexExpr); isIndex && isEnvCfg(ix.X) {
						ok[ix.X] = true
						used["presence"]++
					}
				}
			}
			if _, allowed := cfgConsumers[to]; allowed {
				for _, a := range args {
					if isEnvCfg(a) {
						ok[a] = true
						used[to]++
					}
				}
			}
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			if e, isExpr := n.(ast.Expr); isExpr && isEnvCfg(e) && !ok[e] {
				p := c.fset.Position(e.Pos())
				t.Errorf("%s:%d reads Env.Cfg itself: read the key through its ccfg type (ccfg.Decode)", filepath.Base(p.Filename), p.Line)
			}
			return true
		})
	}
	for to, why := range cfgConsumers {
		if used[to] == 0 {
			t.Errorf("cfgConsumers %s (%s) is handed Env.Cfg nowhere: drop it", to, why)
		}
	}
	if used["ccfg.Decode"] < 40 {
		t.Errorf("%d ccfg.Decode calls found: the finder no longer sees the modules' reads", used["ccfg.Decode"])
	}
}
