package main

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/unitchecker"

	"github.com/confinelint/confinelint/internal/vetmem"
)

// The standalone driver runs "go vet -vettool=<itself> -json -standalone=MODE"
// (see vetdriver.go): the go command then runs this binary once per package,
// caches each result, and the driver renders the stream. The flag puts the
// tool in the mode the driver needs; being a flag, it is part of go vet's
// cache key, so results made for the driver never reach a plain go vet run.
const standaloneFlag = "standalone"

// Values of -standalone: analyse test files too, or not (-test=false).
const (
	modeTests   = "tests"
	modeNoTests = "notests"
)

// vetTool runs the go vet protocol (unitchecker). -standalone must be known
// to every call, -flags included, or go vet would refuse to forward it.
func vetTool(args []string) {
	flag.String(standaloneFlag, "", "internal: set by the standalone driver (confinelint PATTERNS), which runs go vet with this tool")
	vetmem.Lean()
	mode, cfg := standaloneArgs(args)
	if mode == "" || cfg == "" {
		unitchecker.Main(analyzers...)
		return
	}
	rewritten, skip, err := rewriteConfig(cfg, mode == modeNoTests)
	if err != nil {
		os.Stderr.WriteString("confinelint: " + err.Error() + "\n")
		os.Exit(1)
	}
	if skip {
		os.Exit(0)
	}
	os.Args[len(os.Args)-1] = rewritten
	// Every analyzer runs; the driver keeps the findings of the ones the
	// user selected (a diagnostic does not depend on which others run), so
	// that one cached result serves every selection.
	unitchecker.Main(append(analyzers[:len(analyzers):len(analyzers)], unitAnalyzer)...)
}

// standaloneArgs returns the -standalone value and the config file of a
// vet-protocol call, or "".
func standaloneArgs(args []string) (mode, cfg string) {
	for _, a := range args {
		name := strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		if v, ok := strings.CutPrefix(name, standaloneFlag+"="); ok && strings.HasPrefix(a, "-") {
			mode = v
		}
	}
	if len(args) > 0 && strings.HasSuffix(args[len(args)-1], ".cfg") {
		cfg = args[len(args)-1]
	}
	return mode, cfg
}

// rewriteConfig writes the unit's config as the driver needs it, next to
// the original, and returns its name; skip says there is nothing to
// analyse (a test-only unit under -test=false).
//
// VetxOnly is cleared: go vet (Go 1.26) keys a unit's cached output the
// same whether it ran only for facts or to report, so a package first
// vetted as a dependency would replay empty output when later vetted as a
// root. Reporting for every unit makes the output a function of the unit
// alone; the driver keeps the units it asked for.
func rewriteConfig(name string, noTests bool) (string, bool, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return "", false, err
	}
	var cfg unitchecker.Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return "", false, err
	}
	cfg.VetxOnly = false
	if noTests {
		var kept []string
		for _, f := range cfg.GoFiles {
			if !strings.HasSuffix(f, "_test.go") {
				kept = append(kept, f)
			}
		}
		if len(kept) == 0 {
			// An external test package, or one with test files only.
			// An empty output file is a result go vet can cache.
			return "", true, writeEmpty(cfg.Stdout)
		}
		cfg.GoFiles = kept
	}
	out, err := json.Marshal(cfg)
	if err != nil {
		return "", false, err
	}
	rewritten := filepath.Join(filepath.Dir(name), "vet-standalone.cfg")
	return rewritten, false, os.WriteFile(rewritten, out, 0o644)
}

func writeEmpty(name string) error {
	if name == "" {
		return nil
	}
	return os.WriteFile(name, nil, 0o644)
}

// unitAnalyzer tells the driver which build of a package a unit of the
// stream is: go vet names "p", "p [p.test]" and "p [q.test]" alike. It
// reports one diagnostic, whose message is the kind:
//
//	plain       the package as built without tests
//	test        the package with its _test.go files (p [p.test], p_test)
//	recompiled  a dependency rebuilt for another package's tests
//	            (p [q.test]): go vet never reports it, nor does the driver
//
// A package fact marks every build that includes test files, directly or
// through an import, which is how a recompiled build is told apart.
var unitAnalyzer = &analysis.Analyzer{
	Name:      "confinelintunit",
	Doc:       "internal: tells the standalone driver which build of a package it analysed",
	FactTypes: []analysis.Fact{new(testBuild)},
	Run:       runUnit,
}

// testBuild marks a package built with test files, or built against one.
type testBuild struct{ WithTests bool }

func (*testBuild) AFact()         {}
func (*testBuild) String() string { return "testBuild" }

// Unit kinds, the messages of unitAnalyzer's diagnostic.
const (
	unitPlain      = "plain"
	unitTest       = "test"
	unitRecompiled = "recompiled"
)

func runUnit(pass *analysis.Pass) (any, error) {
	own := false
	for _, f := range pass.Files {
		own = own || strings.HasSuffix(pass.Fset.File(f.Pos()).Name(), "_test.go")
	}
	via := false
	for _, imp := range pass.Pkg.Imports() {
		via = via || pass.ImportPackageFact(imp, new(testBuild))
	}
	kind := unitPlain
	switch {
	case own:
		kind = unitTest
	case via:
		kind = unitRecompiled
	}
	if own || via {
		pass.ExportPackageFact(&testBuild{WithTests: true})
	}
	if len(pass.Files) > 0 {
		pass.Report(analysis.Diagnostic{Pos: pass.Files[0].Package, Message: kind})
	}
	return nil, nil
}
