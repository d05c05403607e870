package lockorder_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/confinelint/confinelint/analyzers/lockorder"
	"github.com/confinelint/confinelint/internal/summary"
)

// Each scenario package holds buggy code (with // want) and correct code
// that must stay silent.
var scenarios = []string{
	"inversion", "interfunc", "doublelock", "leak", "unlock", "deferlock", "trylock", "guarded", "annotated", "atomics", "crossa", "crossb", "methodvalue", "callback", "ifacecall", "blocking", "checklocks", "rangefunc", "alias",
}

func TestScenarios(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), lockorder.Analyzer, scenarios...)
}

// TestFacts checks the lock facts exported for callers in other packages.
func TestFacts(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), summary.Analyzer, "lockfacts")
}
