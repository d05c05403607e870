package summary_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/confinelint/confinelint/internal/summary"
)

// TestFacts checks the Decl and Roles facts the summary exports, and that an
// importer resolves a role declared only in its dependency (no problem is
// recorded for roleuse; see TestImportedRole).
func TestFacts(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), summary.Analyzer, "rolesrc", "roleuse")
}

// TestLeafLocks checks that LockSummary facts leave out the private leaf
// lock classes (see locks.privateLeaves) and keep every other class.
func TestLeafLocks(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), summary.Analyzer, "leaflocks")
}

// TestParamFlows checks what the ParamFlows facts say exported functions
// do with their parameters, and that none is exported when all escape.
func TestParamFlows(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), summary.Analyzer, "paramflows")
}

func TestImportedRole(t *testing.T) {
	results := analysistest.Run(t, analysistest.TestData(), summary.Analyzer, "roleuse")
	for _, r := range results {
		res, ok := r.Result.(*summary.Result)
		if !ok {
			t.Fatalf("result type %T", r.Result)
		}
		for _, p := range res.Directives().Problems {
			t.Errorf("unexpected problem: %s", p.Message)
		}
	}
}
