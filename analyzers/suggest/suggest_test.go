package suggest_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/confinelint/confinelint/analyzers/suggest"
)

// Each scenario is a package under testdata/src whose .golden files are
// the source with every suggested directive added.
func TestGuardedBy(t *testing.T)        { run(t, "guarded") }
func TestControlAndEntry(t *testing.T)  { run(t, "loops") }
func TestSpawns(t *testing.T)           { run(t, "pools") }
func TestDeferredAndLocal(t *testing.T) { run(t, "deferred") }

func run(t *testing.T, pkgs ...string) {
	t.Helper()
	t.Parallel()
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), suggest.Analyzer, pkgs...)
}
