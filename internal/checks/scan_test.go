package checks

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// wantCategories collects the "[rule]" suffixes that the analyzers' tests
// expect (// want `... \[rule\]`), which catches categories built in
// ways the source scan does not follow.
func wantCategories(t *testing.T, root string) map[string]string {
	re := regexp.MustCompile(`\\\[([a-z][a-z0-9-]*)\\\]`)
	found := map[string]string{}
	for _, dir := range []string{"analyzers", "internal"} {
		filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || !strings.Contains(path, "testdata") {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			for i, line := range strings.Split(string(data), "\n") {
				if !strings.Contains(line, "// want") {
					continue
				}
				for _, m := range re.FindAllStringSubmatch(line, -1) {
					found[m[1]] = path + ":" + strconv.Itoa(i+1)
				}
			}
			return nil
		})
	}
	return found
}

var categoryRE = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)+$|^[a-z]+$`)

// sourceCategories parses every non-test Go file under root (skipping
// testdata and example modules) and returns category -> file:line for:
//   - string constants named Category*, Rule* or rule*;
//   - the values of Rule: and Category: fields in composite literals
//     (diag.Finding, directive.Problem), literals or such constants;
//   - arguments passed for a parameter named rule or category
//     (e.find(pos, "double-lock", msg)), matched by callee name and arity;
//   - literals assigned to or compared with a variable named rule or
//     category, and the string results of a function whose result is
//     assigned to one (rule := judge(...); judge returns "foreign-access").
func sourceCategories(t *testing.T, root string) map[string]string {
	fset := token.NewFileSet()
	var files []*ast.File
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "testdata", "examples", ".git", "vendor", "plugin", "checks":
				// checks is this registry: it documents, it reports nothing.
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Logf("skipping %s: %v", path, err) // a file being edited right now
			return nil
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	s := &scan{fset: fset, consts: map[string]string{}, found: map[string]string{},
		ruleParams: map[string]int{}, ruleFuncs: map[string]bool{}}
	for _, f := range files {
		s.declarations(f)
	}
	for _, f := range files {
		ast.Inspect(f, s.uses)
	}
	for _, f := range files {
		s.results(f)
	}
	return s.found
}

type scan struct {
	fset       *token.FileSet
	consts     map[string]string // const name -> value
	found      map[string]string // category -> where
	ruleParams map[string]int    // "name/arity" -> index of the rule parameter; "name/N+" for variadic
	ruleFuncs  map[string]bool   // funcs whose result is assigned to a rule variable
}

func isRuleName(name string) bool {
	n := strings.ToLower(name)
	return n == "rule" || n == "category"
}

func (s *scan) add(e ast.Expr) {
	if v, ok := s.value(e); ok && categoryRE.MatchString(v) {
		s.found[v] = s.fset.Position(e.Pos()).String()
	}
}

// value is the string a literal or a known constant stands for.
func (s *scan) value(e ast.Expr) (string, bool) {
	if v, ok := stringLit(e); ok {
		return v, true
	}
	switch x := e.(type) {
	case *ast.Ident:
		v, ok := s.consts[x.Name]
		return v, ok
	case *ast.SelectorExpr:
		v, ok := s.consts[x.Sel.Name]
		return v, ok
	}
	return "", false
}

func (s *scan) declarations(f *ast.File) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.GenDecl:
			if d.Tok != token.CONST {
				continue
			}
			for _, spec := range d.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						continue
					}
					v, ok := stringLit(vs.Values[i])
					if !ok {
						continue
					}
					s.consts[name.Name] = v
					if strings.HasPrefix(name.Name, "Category") || strings.HasPrefix(name.Name, "Rule") || strings.HasPrefix(name.Name, "rule") {
						s.add(vs.Values[i])
					}
				}
			}
		case *ast.FuncDecl:
			i := 0
			for _, field := range d.Type.Params.List {
				for _, name := range field.Names {
					if isRuleName(name.Name) {
						s.ruleParams[arityKey(d.Name.Name, d.Type)] = i
					}
					i++
				}
				if len(field.Names) == 0 {
					i++
				}
			}
		}
	}
}

// arityKey is "name/N" for a function of N parameters, "name/M+" for a
// variadic one taking at least M arguments.
func arityKey(name string, ft *ast.FuncType) string {
	n := ft.Params.NumFields()
	if l := ft.Params.List; len(l) > 0 {
		if _, ok := l[len(l)-1].Type.(*ast.Ellipsis); ok {
			return name + "/" + strconv.Itoa(n-1) + "+"
		}
	}
	return name + "/" + strconv.Itoa(n)
}

func (s *scan) uses(n ast.Node) bool {
	switch x := n.(type) {
	case *ast.KeyValueExpr:
		if key, ok := x.Key.(*ast.Ident); ok && (key.Name == "Rule" || key.Name == "Category") {
			s.add(x.Value)
		}
	case *ast.CallExpr:
		name := ""
		switch fn := x.Fun.(type) {
		case *ast.Ident:
			name = fn.Name
		case *ast.SelectorExpr:
			name = fn.Sel.Name
		}
		keys := []string{name + "/" + strconv.Itoa(len(x.Args))}
		for n := 1; n <= len(x.Args)+1; n++ { // f(a, b ...T) takes 1 or more
			keys = append(keys, name+"/"+strconv.Itoa(n)+"+")
		}
		for _, k := range keys {
			if i, ok := s.ruleParams[k]; ok && i < len(x.Args) {
				s.add(x.Args[i])
				break
			}
		}
	case *ast.AssignStmt:
		for i, lhs := range x.Lhs {
			id, ok := lhs.(*ast.Ident)
			if !ok || !isRuleName(id.Name) || i >= len(x.Rhs) && len(x.Rhs) != 1 {
				continue
			}
			rhs := x.Rhs[min(i, len(x.Rhs)-1)]
			s.add(rhs)
			if call, ok := rhs.(*ast.CallExpr); ok {
				if fn, ok := call.Fun.(*ast.Ident); ok {
					s.ruleFuncs[fn.Name] = true
				}
			}
		}
	case *ast.BinaryExpr:
		if id, ok := x.X.(*ast.Ident); ok && isRuleName(id.Name) && (x.Op == token.EQL || x.Op == token.NEQ) {
			s.add(x.Y)
		}
	}
	return true
}

// results adds the string literals returned by the functions in ruleFuncs.
func (s *scan) results(f *ast.File) {
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil || fd.Recv != nil || !s.ruleFuncs[fd.Name.Name] {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if _, ok := n.(*ast.FuncLit); ok {
				return false
			}
			if r, ok := n.(*ast.ReturnStmt); ok && len(r.Results) == 1 {
				s.add(r.Results[0])
			}
			return true
		})
	}
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// TestSourceScan checks that the scan sees each way a category is written.
func TestSourceScan(t *testing.T) {
	dir := t.TempDir()
	src := `package x
const RuleFoo = "foo-bar"
const ruleBaz = "baz-qux"
const other = "not-a-rule"
func f() {
	_ = diag.Finding{Rule: "lit-rule", Message: "m"}
	_ = diag.Finding{Rule: ruleBaz}
	_ = directive.Problem{Category: directive.CategoryX}
	e.find(pos, "param-rule", "msg", hop)
	if rule := judge(r); rule != "" && rule == "compared-rule" {
	}
	s.find("a-path")
}
func (e *engine) find(pos token.Pos, rule, msg string, chain ...diag.Hop) {}
func (s State) find(path string) {}
func judge(r *Root) string {
	if r == nil {
		return "returned-rule"
	}
	return ""
}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "v.go"), []byte("package x\nconst CategoryX = \"cat-x\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := sourceCategories(t, dir)
	for _, want := range []string{"foo-bar", "baz-qux", "lit-rule", "cat-x", "param-rule", "compared-rule", "returned-rule"} {
		if _, ok := got[want]; !ok {
			t.Errorf("scan missed %q: %v", want, got)
		}
	}
	for _, bad := range []string{"not-a-rule", "a-path", "msg"} {
		if _, ok := got[bad]; ok {
			t.Errorf("scan took %q, which is no category", bad)
		}
	}
}
