package main

import (
	"bytes"
	"encoding/gob"
	"flag"
	"fmt"
	"go/types"
	"reflect"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/confinelint/confinelint/facts"
)

// What Bazel's nogo (rules_go) needs of the analyzers, as docs/running.md
// shows it: each is a package-level Analyzer variable in an importable
// package, named as the nogo config keys it; every fact type is reachable
// through Requires (nogo registers those with gob) and survives gob as an
// analysis.Fact; none needs a flag; and nothing carries over from one
// package's analysis to the next (nogo's results are cached per package).

var analyzerPackages = []string{
	"github.com/confinelint/confinelint/analyzers/confined",
	"github.com/confinelint/confinelint/analyzers/lockorder",
	"github.com/confinelint/confinelint/analyzers/revokepath",
}

func TestNogoImportableAnalyzers(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes, Dir: "../.."}
	pkgs, err := packages.Load(cfg, analyzerPackages...)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, a := range analyzers {
		names[a.Name] = true
	}
	if len(pkgs) != len(analyzers) {
		t.Fatalf("%d analyzer packages, %d analyzers", len(pkgs), len(analyzers))
	}
	for _, p := range pkgs {
		if len(p.Errors) > 0 || p.Name == "main" || strings.Contains("/"+p.PkgPath+"/", "/internal/") {
			t.Errorf("%s: not an importable library package (%s, %v)", p.PkgPath, p.Name, p.Errors)
			continue
		}
		v, ok := p.Types.Scope().Lookup("Analyzer").(*types.Var)
		if !ok || types.TypeString(v.Type(), nil) != "*golang.org/x/tools/go/analysis.Analyzer" {
			t.Errorf("%s: no package-level var Analyzer *analysis.Analyzer", p.PkgPath)
		}
		if !names[p.Name] {
			t.Errorf("%s: package name %s is no analyzer's Name (nogo's config keys are names)", p.PkgPath, p.Name)
		}
	}
	if err := analysis.Validate(analyzers); err != nil {
		t.Error(err)
	}
}

// TestNogoFactTypes: whichever single analyzer nogo runs, walking Requires
// reaches every fact type, and each round-trips through gob as an
// interface value, the way fact files carry it.
func TestNogoFactTypes(t *testing.T) {
	for _, a := range analyzers {
		reached := map[reflect.Type]bool{}
		var walk func(*analysis.Analyzer)
		walk = func(a *analysis.Analyzer) {
			for _, f := range a.FactTypes {
				reached[reflect.TypeOf(f)] = true
			}
			for _, r := range a.Requires {
				walk(r)
			}
		}
		walk(a)
		for _, f := range facts.All() {
			if !reached[reflect.TypeOf(f)] {
				t.Errorf("%s: fact type %T is not reachable through Requires", a.Name, f)
			}
		}
	}
	type envelope struct{ Fact analysis.Fact }
	for _, f := range facts.All() {
		gob.Register(f)
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(envelope{f}); err != nil {
			t.Errorf("%T: %v", f, err)
			continue
		}
		var back envelope
		if err := gob.NewDecoder(&buf).Decode(&back); err != nil || reflect.TypeOf(back.Fact) != reflect.TypeOf(f) {
			t.Errorf("%T: decoded as %T (%v)", f, back.Fact, err)
		}
	}
}

// TestNogoNoFlagsNoState analyses a module with every flag at its default,
// then another module, then the first again: the findings must be there
// and must not change.
func TestNogoNoFlagsNoState(t *testing.T) {
	if testing.Short() {
		t.Skip("loads packages from source")
	}
	for _, a := range analyzers {
		a.Flags.VisitAll(func(f *flag.Flag) {
			if f.Value.String() != f.DefValue {
				t.Errorf("-%s.%s is set; this test runs every analyzer with its defaults", a.Name, f.Name)
			}
		})
	}
	first := findingsOf(t, multiModule(t))
	if !strings.Contains(first, "[lock-order]") || !strings.Contains(first, "[foreign-access]") {
		t.Fatalf("the module's findings are missing:\n%s", first)
	}
	findingsOf(t, determinismModule(t))
	same(t, "first module, before and after another", first, findingsOf(t, multiModule(t)))
}

// findingsOf runs every analyzer over dir's packages (no tests) in this
// process and returns their diagnostics, one per line, paths relative to
// dir.
func findingsOf(t *testing.T, dir string) string {
	t.Helper()
	cfg := &packages.Config{Mode: packages.LoadAllSyntax, Dir: dir}
	pkgs, err := packages.Load(cfg, "./...")
	if err != nil {
		t.Fatal(err)
	}
	graph, err := checker.Analyze(analyzers, pkgs, nil)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for act := range graph.All() {
		if act.Err != nil {
			t.Errorf("%s: %v", act, act.Err)
		}
		if !act.IsRoot {
			continue
		}
		for _, d := range act.Diagnostics {
			p := act.Package.Fset.Position(d.Pos)
			lines = append(lines, fmt.Sprintf("%s:%d:%d: %s", strings.TrimPrefix(p.Filename, dir), p.Line, p.Column, d.Message))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
