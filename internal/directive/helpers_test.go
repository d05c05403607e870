package directive

import (
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"sync"
	"testing"
)

// stubSources are the imports test packages may use: a small sync (the
// method sets are what matter) and a package with an exported lock.
var stubSources = map[string]string{
	"sync": `package sync
type Locker interface { Lock(); Unlock() }
type Mutex struct{ state int32 }
func (m *Mutex) Lock() {}
func (m *Mutex) Unlock() {}
func (m *Mutex) TryLock() bool { return false }
type RWMutex struct{ w Mutex }
func (rw *RWMutex) Lock() {}
func (rw *RWMutex) Unlock() {}
func (rw *RWMutex) RLock() {}
func (rw *RWMutex) RUnlock() {}
`,
	"example.com/locks": `package locks
import "sync"
var Mu sync.Mutex
var Count int
type Shared struct{ Mu sync.RWMutex }
`,
}

var (
	stubOnce sync.Once
	stubPkgs map[string]*types.Package
)

// stubImporter type-checks the stubs once; fuzzing shares them across
// iterations, which go/types allows.
func stubImporter() types.Importer {
	stubOnce.Do(func() {
		stubPkgs = map[string]*types.Package{}
		fset := token.NewFileSet()
		var imp types.ImporterFrom
		imp = importerFunc(func(path string) (*types.Package, error) {
			if p, ok := stubPkgs[path]; ok {
				return p, nil
			}
			src, ok := stubSources[path]
			if !ok {
				return nil, fmt.Errorf("no stub for %q", path)
			}
			f, err := parser.ParseFile(fset, path+"/stub.go", src, 0)
			if err != nil {
				return nil, err
			}
			p, err := (&types.Config{Importer: imp}).Check(path, fset, []*ast.File{f}, nil)
			if err != nil {
				return nil, err
			}
			stubPkgs[path] = p
			return p, nil
		})
		for _, path := range []string{"sync", "example.com/locks"} {
			if _, err := imp.Import(path); err != nil {
				panic(err)
			}
		}
	})
	return importerFunc(func(path string) (*types.Package, error) {
		if p, ok := stubPkgs[path]; ok {
			return p, nil
		}
		return nil, fmt.Errorf("no stub for %q", path)
	})
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }
func (f importerFunc) ImportFrom(path, _ string, _ types.ImportMode) (*types.Package, error) {
	return f(path)
}

// checked is a type-checked test package and its directives.
type checked struct {
	src  string
	fset *token.FileSet
	pkg  *types.Package
	info *types.Info
	set  *Set
}

func newInfo() *types.Info {
	return &types.Info{
		Types:     map[ast.Expr]types.TypeAndValue{},
		Defs:      map[*ast.Ident]types.Object{},
		Uses:      map[*ast.Ident]types.Object{},
		Implicits: map[ast.Node]types.Object{},
		Scopes:    map[ast.Node]*types.Scope{},
	}
}

// collectSource type-checks src as package p (it must have no type
// errors) and collects its directives.
func collectSource(t *testing.T, src string, importedRoles func(string) bool) *checked {
	t.Helper()
	return collectWith(t, src, func(*token.FileSet) types.Importer { return stubImporter() }, importedRoles)
}

func collectWith(t *testing.T, src string, newImporter func(*token.FileSet) types.Importer, importedRoles func(string) bool) *checked {
	t.Helper()
	fset := token.NewFileSet()
	imp := newImporter(fset)
	f, err := parser.ParseFile(fset, "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	info := newInfo()
	pkg, err := (&types.Config{Importer: imp}).Check("example.com/p", fset, []*ast.File{f}, info)
	if err != nil {
		t.Fatal(err)
	}
	return &checked{src: src, fset: fset, pkg: pkg, info: info, set: Collect(fset, []*ast.File{f}, pkg, info, importedRoles)}
}

// lookup finds an object by a short name: "F", "v", "T", "T.f" (field),
// "T.M" (method).
func (c *checked) lookup(t *testing.T, name string) types.Object {
	t.Helper()
	first, rest, _ := strings.Cut(name, ".")
	obj := c.pkg.Scope().Lookup(first)
	if obj == nil {
		t.Fatalf("no object %s", first)
	}
	if rest != "" {
		obj, _, _ = types.LookupFieldOrMethod(obj.Type(), true, c.pkg, rest)
		if obj == nil {
			t.Fatalf("no field or method %s", name)
		}
	}
	return obj
}

// problems renders the problems as "line analyzer category: message".
func (c *checked) problems() []string {
	var out []string
	for _, p := range c.set.Problems {
		out = append(out, fmt.Sprintf("%d %s %s: %s", c.fset.Position(p.Pos).Line, p.Analyzer, p.Category, p.Message))
	}
	return out
}

// want is an expected problem: on the line of src holding the text at,
// of category, with a message containing msg.
type want struct {
	at, category, msg string
}

// wantProblems checks that the problems are exactly those expected, in
// order.
func (c *checked) wantProblems(t *testing.T, wants ...want) {
	t.Helper()
	got := c.problems()
	if len(got) != len(wants) {
		t.Errorf("got %d problems, want %d:\n%s", len(got), len(wants), strings.Join(got, "\n"))
		return
	}
	for i, w := range wants {
		line := lineOf(t, c.src, w.at)
		g := got[i]
		if !strings.HasPrefix(g, fmt.Sprintf("%d ", line)) || !strings.Contains(g, " "+w.category+": ") || !strings.Contains(g, w.msg) {
			t.Errorf("problem %d = %q\nwant line %d, %s, containing %q", i, g, line, w.category, w.msg)
		}
	}
}

// lineOf returns the line of the only occurrence of at in src.
func lineOf(t *testing.T, src, at string) int {
	t.Helper()
	i := strings.Index(src, at)
	if i < 0 || strings.Count(src, at) != 1 {
		t.Fatalf("%q must occur exactly once in the source", at)
	}
	return strings.Count(src[:i], "\n") + 1
}

// verbs renders the directives on obj as "verb args" strings.
func (c *checked) verbs(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, d := range c.set.Of(c.lookup(t, name)) {
		s := string(d.Verb)
		if d.Role != "" {
			s += " " + d.Role
		}
		if d.Lock != nil {
			s += " " + d.Lock.Text
		}
		if d.AliasOf != nil {
			s += "=" + d.AliasOf.Text
		}
		out = append(out, s)
	}
	return out
}

// sourceImporter imports the real standard library from source.
func sourceImporter(fset *token.FileSet) types.Importer {
	return importer.ForCompiler(fset, "source", nil)
}
