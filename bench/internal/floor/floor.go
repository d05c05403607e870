// Package floor holds the benchmark's floor analyzer: the cheapest analyzer
// with confinelint's shape. It requires buildssa (so SSA is built for every
// package, dependencies and the standard library included) and owns a
// trivial fact type (so go vet runs it on every dependency and plumbs a vetx
// file through, as it does for confinelint's summary analyzer). It exports
// one package fact per package and reports nothing.
package floor

import (
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
)

// Seen is the trivial fact: the number of source functions in the package.
type Seen struct{ Funcs int }

func (*Seen) AFact()           {}
func (s *Seen) String() string { return "seen" }

// Analyzer is the floor analyzer.
var Analyzer = &analysis.Analyzer{
	Name:      "floor",
	Doc:       "builds SSA, exports one trivial package fact, reports nothing",
	Requires:  []*analysis.Analyzer{buildssa.Analyzer},
	FactTypes: []analysis.Fact{new(Seen)},
	Run: func(pass *analysis.Pass) (any, error) {
		ssa := pass.ResultOf[buildssa.Analyzer].(*buildssa.SSA)
		pass.ExportPackageFact(&Seen{Funcs: len(ssa.SrcFuncs)})
		return nil, nil
	},
}
