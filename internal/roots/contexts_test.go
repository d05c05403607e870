package roots_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/confinelint/confinelint/internal/roots"
	"github.com/confinelint/confinelint/internal/summary"
)

// contextsAnalyzer reports, at every function reached by a root, the
// contexts it runs on: "ctx Kind(Via): chain" sorted and joined by "; ".
var contextsAnalyzer = &analysis.Analyzer{
	Name:     "contexts",
	Doc:      "test helper: reports roots.Contexts",
	Requires: []*analysis.Analyzer{summary.Analyzer},
	Run: func(pass *analysis.Pass) (any, error) {
		res := pass.ResultOf[summary.Analyzer].(*summary.Result)
		for _, fn := range res.Package.Funcs {
			var parts []string
			back := res.Contexts.RootsReaching(fn)
			for _, r := range res.Contexts.Of(fn) {
				parts = append(parts, fmt.Sprintf("%s(%s): %s", kindName(r.Root.Kind), r.Root.Via, strings.Join(r.Names(pass.Pkg), " -> ")))
				if !back[r.Root] {
					pass.Reportf(fn.Pos(), "RootsReaching lacks %s(%s)", kindName(r.Root.Kind), r.Root.Via)
				}
				delete(back, r.Root)
			}
			for r := range back {
				pass.Reportf(fn.Pos(), "RootsReaching has %s(%s), which Of does not", kindName(r.Kind), r.Via)
			}
			if len(parts) == 0 {
				continue
			}
			sort.Strings(parts)
			pass.Reportf(fn.Pos(), "ctx %s", strings.Join(parts, "; "))
		}
		return nil, nil
	},
}

func kindName(k roots.Kind) string {
	return [...]string{"entry", "declared", "go", "async", "interface", "callback", "serialized", "any", "unknown"}[k]
}

func TestContexts(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), contextsAnalyzer, "ctx")
}
