package revokepath

import (
	_ "embed"
	"reflect"

	"golang.org/x/tools/go/analysis"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/summary"
)

//go:embed doc.go
var doc string

// Analyzer is the revokepath check.
var Analyzer = &analysis.Analyzer{
	Name:       directive.RevokePath,
	Doc:        diag.Doc(doc, "revokepath"),
	URL:        "https://github.com/confinelint/confinelint/blob/main/docs/checks.md#revokepath",
	Requires:   []*analysis.Analyzer{summary.Analyzer},
	ResultType: reflect.TypeOf(diag.UsedIgnores(nil)),
	Run:        run,
}

func run(pass *analysis.Pass) (any, error) {
	res := pass.ResultOf[summary.Analyzer].(*summary.Result)
	r := diag.NewReporter(pass, directive.RevokePath, res.Directives())
	r.ReportProblems(res.Directives())
	if res.Commits != nil {
		for _, f := range res.Commits.Findings {
			r.Report(f)
		}
	}
	return r.Used(), nil
}
