package confined

import (
	_ "embed"
	"flag"

	"golang.org/x/tools/go/analysis"

	"github.com/confinelint/confinelint/analyzers/lockorder"
	"github.com/confinelint/confinelint/analyzers/revokepath"
	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/roots"
	"github.com/confinelint/confinelint/internal/summary"
)

//go:embed doc.go
var doc string

// Analyzer is the confined check.
var Analyzer = &analysis.Analyzer{
	Name:     directive.Confined,
	Doc:      diag.Doc(doc, "confined"),
	URL:      "https://github.com/confinelint/confinelint/blob/main/docs/checks.md#confined",
	Requires: []*analysis.Analyzer{summary.Analyzer, lockorder.Analyzer, revokepath.Analyzer},
	Run:      run,
	Flags:    flags(),
}

// flags declares -confined.async (as go vet forwards it). Each use adds
// asynchronous APIs to roots.Default, which the summary analyzer (run first,
// for every package) reads. A function, not init, so that importing the
// package (the golangci-lint plugin does) has no side effect.
func flags() (fs flag.FlagSet) {
	fs.Var(new(roots.Flag), "async", "comma-separated asynchronous APIs whose function argument runs on another goroutine, e.g. example.com/pool.(*Pool).Submit:arg0 (repeatable)")
	return fs
}

func run(pass *analysis.Pass) (any, error) {
	if roots.Default.HasUserEntries() {
		// A -confined.async entry that names nothing fails the run. Under
		// go vet each package sees only its imports, so each judges the
		// entries whose package it can see.
		if err := roots.Default.Check(directive.VisiblePackages(pass.Pkg), true); err != nil {
			return nil, err
		}
	}
	res := pass.ResultOf[summary.Analyzer].(*summary.Result)
	r := diag.NewReporter(pass, directive.Confined, res.Directives())
	r.ReportProblems(res.Directives())
	for _, f := range res.Ownership.Findings {
		r.Report(f)
	}
	// confined owns //confined:ignore, so it reports the ones that no
	// analyzer used; the other two ran before it (Requires).
	r.ReportUnusedIgnores(pass.ResultOf[lockorder.Analyzer].(diag.UsedIgnores), pass.ResultOf[revokepath.Analyzer].(diag.UsedIgnores))
	return nil, nil
}
