// Package alltest runs the three confinelint analyzers as one analyzer, so
// that a test checks every finding of a package, whichever analyzer
// reports it, in one analysistest run: documentation examples and whole
// user-style modules mix findings of all three.
package alltest

import (
	"golang.org/x/tools/go/analysis"

	"github.com/confinelint/confinelint/analyzers/confined"
	"github.com/confinelint/confinelint/analyzers/lockorder"
	"github.com/confinelint/confinelint/analyzers/revokepath"
	"github.com/confinelint/confinelint/internal/summary"
)

// Analyzer reports what confined, lockorder and revokepath report, in
// that order, with their suppression (including unused ignores).
var Analyzer = &analysis.Analyzer{
	Name:     "confinelint",
	Doc:      "test helper: the confined, lockorder and revokepath analyzers as one",
	Requires: []*analysis.Analyzer{summary.Analyzer},
	Run:      run,
}

func run(pass *analysis.Pass) (any, error) {
	// The reporting analyzers read only the summary and each other's
	// used ignores from ResultOf; give them those and run them in
	// dependency order on this pass.
	for _, a := range []*analysis.Analyzer{lockorder.Analyzer, revokepath.Analyzer, confined.Analyzer} {
		res, err := a.Run(pass)
		if err != nil {
			return nil, err
		}
		pass.ResultOf[a] = res
	}
	return nil, nil
}
