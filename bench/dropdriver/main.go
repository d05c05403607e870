// Command dropdriver is a prototype of the standalone design that issue 16
// measured against running go vet: one process, packages analysed in
// dependency order (two at a time), each package parsed and type-checked
// from source against its dependencies' types, and its syntax, type
// information, SSA and analysis results dropped as soon as its facts are
// exported (as staticcheck's runner does). Types and facts of every
// package stay in memory: objects are shared between packages, so facts
// need no encoding. It has no cache; it prints the findings as the text
// output does, to check that it computes the same thing.
//
//	dropdriver [-test=false] packages...
//
// It is a measurement, not a driver: no fixes, no formats, no errors
// beyond the first.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/packages"

	"github.com/confinelint/confinelint/analyzers/confined"
	"github.com/confinelint/confinelint/analyzers/lockorder"
	"github.com/confinelint/confinelint/analyzers/revokepath"
)

var roots = []*analysis.Analyzer{confined.Analyzer, lockorder.Analyzer, revokepath.Analyzer}

func main() {
	tests := flag.Bool("test", true, "include test files")
	flag.Parse()
	cfg := &packages.Config{
		Mode:  packages.NeedName | packages.NeedCompiledGoFiles | packages.NeedImports | packages.NeedDeps | packages.NeedModule,
		Tests: *tests,
	}
	pkgs, err := packages.Load(cfg, flag.Args()...)
	if err != nil || packages.PrintErrors(pkgs) > 0 {
		fmt.Fprintln(os.Stderr, "dropdriver: load failed", err)
		os.Exit(1)
	}
	d := &driver{fset: token.NewFileSet(), done: map[*packages.Package]*node{}, facts: map[factKey]analysis.Fact{}}
	isRoot := map[*packages.Package]bool{}
	for _, p := range pkgs {
		isRoot[p] = true
	}
	var order []*packages.Package
	packages.Visit(pkgs, nil, func(p *packages.Package) { order = append(order, p) })
	d.run(order, isRoot)
	sort.Strings(d.findings)
	var last string
	for _, f := range d.findings {
		if f != last {
			fmt.Println(f)
		}
		last = f
	}
}

type driver struct {
	fset     *token.FileSet
	mu       sync.Mutex
	done     map[*packages.Package]*node
	facts    map[factKey]analysis.Fact
	findings []string
}

// node is what stays of an analysed package: its types.
type node struct {
	types *types.Package
	ready chan struct{}
}

type factKey struct {
	pkg *types.Package
	obj types.Object
	t   reflect.Type
}

// run analyses the packages in dependency order, GOMAXPROCS at a time.
func (d *driver) run(order []*packages.Package, isRoot map[*packages.Package]bool) {
	for _, p := range order {
		d.done[p] = &node{ready: make(chan struct{})}
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, p := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, imp := range p.Imports {
				<-d.done[imp].ready
			}
			sem <- struct{}{}
			d.analyse(p, isRoot[p])
			<-sem
			close(d.done[p].ready)
		}()
	}
	wg.Wait()
}

// analyse type-checks p from source and runs the analyzers on it; on
// return, only p's types and facts are still referenced.
func (d *driver) analyse(p *packages.Package, root bool) {
	n := d.done[p]
	if p.PkgPath == "unsafe" {
		n.types = types.Unsafe
		return
	}
	var files []*ast.File
	for _, name := range p.CompiledGoFiles {
		f, err := parser.ParseFile(d.fset, name, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{
		Types:        map[ast.Expr]types.TypeAndValue{},
		Defs:         map[*ast.Ident]types.Object{},
		Uses:         map[*ast.Ident]types.Object{},
		Implicits:    map[ast.Node]types.Object{},
		Instances:    map[*ast.Ident]types.Instance{},
		Scopes:       map[ast.Node]*types.Scope{},
		Selections:   map[*ast.SelectorExpr]*types.Selection{},
		FileVersions: map[*ast.File]string{},
	}
	tc := &types.Config{
		Importer: importerFunc(func(path string) (*types.Package, error) {
			if imp, ok := p.Imports[path]; ok {
				return d.done[imp].types, nil
			}
			return nil, fmt.Errorf("%s: no import %s", p.ID, path)
		}),
		Sizes: types.SizesFor("gc", runtime.GOARCH),
	}
	if p.Module != nil && p.Module.GoVersion != "" {
		tc.GoVersion = "go" + p.Module.GoVersion
	}
	tpkg, err := tc.Check(p.PkgPath, d.fset, files, info)
	if err != nil {
		fatal(fmt.Errorf("%s: %v", p.ID, err))
	}
	n.types = tpkg
	results := map[*analysis.Analyzer]any{}
	var exec func(a *analysis.Analyzer)
	exec = func(a *analysis.Analyzer) {
		if _, ok := results[a]; ok {
			return
		}
		for _, r := range a.Requires {
			exec(r)
		}
		res, err := a.Run(d.pass(a, p, files, info, tpkg, results, root))
		if err != nil {
			fatal(fmt.Errorf("%s@%s: %v", a.Name, p.ID, err))
		}
		results[a] = res
	}
	for _, a := range roots {
		if root {
			exec(a)
		} else {
			for _, r := range a.Requires {
				if len(r.FactTypes) > 0 || usesFacts(r) {
					exec(r)
				}
			}
		}
	}
}

func usesFacts(a *analysis.Analyzer) bool {
	for _, r := range a.Requires {
		if len(r.FactTypes) > 0 || usesFacts(r) {
			return true
		}
	}
	return false
}

func (d *driver) pass(a *analysis.Analyzer, p *packages.Package, files []*ast.File, info *types.Info, tpkg *types.Package, results map[*analysis.Analyzer]any, root bool) *analysis.Pass {
	inputs := map[*analysis.Analyzer]any{}
	for _, r := range a.Requires {
		inputs[r] = results[r]
	}
	report := isRootAnalyzer(a) && root
	return &analysis.Pass{
		Analyzer:   a,
		Fset:       d.fset,
		Files:      files,
		Pkg:        tpkg,
		TypesInfo:  info,
		TypesSizes: types.SizesFor("gc", runtime.GOARCH),
		ResultOf:   inputs,
		Module:     module(p),
		ReadFile:   os.ReadFile,
		Report: func(diag analysis.Diagnostic) {
			if !report {
				return
			}
			pos := d.fset.Position(diag.Pos)
			d.mu.Lock()
			d.findings = append(d.findings, fmt.Sprintf("%s: %s", pos, diag.Message))
			d.mu.Unlock()
		},
		ImportObjectFact: func(obj types.Object, f analysis.Fact) bool {
			return d.importFact(factKey{obj.Pkg(), obj, reflect.TypeOf(f)}, f)
		},
		ExportObjectFact: func(obj types.Object, f analysis.Fact) {
			d.exportFact(factKey{obj.Pkg(), obj, reflect.TypeOf(f)}, f)
		},
		ImportPackageFact: func(pkg *types.Package, f analysis.Fact) bool {
			return d.importFact(factKey{pkg, nil, reflect.TypeOf(f)}, f)
		},
		ExportPackageFact: func(f analysis.Fact) { d.exportFact(factKey{tpkg, nil, reflect.TypeOf(f)}, f) },
		AllObjectFacts:    func() []analysis.ObjectFact { return d.allObjectFacts(tpkg) },
		AllPackageFacts:   func() []analysis.PackageFact { return d.allPackageFacts(tpkg) },
	}
}

func isRootAnalyzer(a *analysis.Analyzer) bool {
	for _, r := range roots {
		if r == a {
			return true
		}
	}
	return false
}

func module(p *packages.Package) *analysis.Module {
	if p.Module == nil {
		return nil
	}
	return &analysis.Module{Path: p.Module.Path, Version: p.Module.Version, GoVersion: p.Module.GoVersion}
}

func (d *driver) importFact(k factKey, f analysis.Fact) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	v, ok := d.facts[k]
	if ok {
		reflect.ValueOf(f).Elem().Set(reflect.ValueOf(v).Elem())
	}
	return ok
}

func (d *driver) exportFact(k factKey, f analysis.Fact) {
	d.mu.Lock()
	d.facts[k] = f
	d.mu.Unlock()
}

// deps returns pkg and every package it imports, directly or not.
func deps(pkg *types.Package) map[*types.Package]bool {
	seen := map[*types.Package]bool{}
	var walk func(*types.Package)
	walk = func(p *types.Package) {
		if !seen[p] {
			seen[p] = true
			for _, imp := range p.Imports() {
				walk(imp)
			}
		}
	}
	walk(pkg)
	return seen
}

func (d *driver) allObjectFacts(pkg *types.Package) []analysis.ObjectFact {
	in := deps(pkg)
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []analysis.ObjectFact
	for k, f := range d.facts {
		if k.obj != nil && in[k.pkg] {
			out = append(out, analysis.ObjectFact{Object: k.obj, Fact: f})
		}
	}
	return out
}

func (d *driver) allPackageFacts(pkg *types.Package) []analysis.PackageFact {
	in := deps(pkg)
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []analysis.PackageFact
	for k, f := range d.facts {
		if k.obj == nil && in[k.pkg] {
			out = append(out, analysis.PackageFact{Package: k.pkg, Fact: f})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Package.Path() < out[j].Package.Path() })
	return out
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "dropdriver:", strings.TrimSpace(err.Error()))
	os.Exit(1)
}
