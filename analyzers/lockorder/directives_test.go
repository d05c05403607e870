package lockorder_test

import (
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/confinelint/confinelint/analyzers/lockorder"
)

// TestDirectiveProblems: every malformed-directive class lockorder owns,
// including a misspelled checklocks comment (silence in checklocks).
func TestDirectiveProblems(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), lockorder.Analyzer, "directives")
}
