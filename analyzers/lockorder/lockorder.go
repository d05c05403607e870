package lockorder

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

// Analyzer is the lockorder check.
var Analyzer = &analysis.Analyzer{
	Name:       directive.LockOrder,
	Doc:        diag.Doc(doc, "lockorder"),
	URL:        "https://github.com/confinelint/confinelint/blob/main/docs/checks.md#lockorder",
	Requires:   []*analysis.Analyzer{summary.Analyzer},
	ResultType: reflect.TypeOf(diag.UsedIgnores(nil)),
	Run:        run,
}

func run(pass *analysis.Pass) (any, error) {
	res := pass.ResultOf[summary.Analyzer].(*summary.Result)
	r := diag.NewReporter(pass, directive.LockOrder, res.Directives())
	r.ReportProblems(res.Directives())
	for _, f := range res.Locks.Findings() {
		r.Report(f)
	}
	return r.Used(), nil
}
