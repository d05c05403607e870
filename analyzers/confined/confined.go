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
}

func run(pass *analysis.Pass) (any, error) {
	res := pass.ResultOf[summary.Analyzer].(*summary.Result)
	r := diag.NewReporter(pass, Analyzer.Name, res.Directives())
	r.ReportProblems(res.Directives())
	// confined owns //confined:ignore, so it reports the ones that no
	// analyzer used; the other two ran before it (Requires).
	r.ReportUnusedIgnores(pass.ResultOf[lockorder.Analyzer].(diag.UsedIgnores), pass.ResultOf[revokepath.Analyzer].(diag.UsedIgnores))
	return r.Used(), nil
}
