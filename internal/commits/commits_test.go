package commits_test

import (
	"bytes"
	"encoding/gob"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/summary"
)

// factReporter turns the commit facts the summary exported into
// diagnostics at their functions, so analysistest can match them.
var factReporter = &analysis.Analyzer{
	Name:     "commitfacts",
	Doc:      "reports exported commit facts (test only)",
	Requires: []*analysis.Analyzer{summary.Analyzer},
	Run: func(pass *analysis.Pass) (any, error) {
		res := pass.ResultOf[summary.Analyzer].(*summary.Result)
		for _, e := range res.Commits.Exported {
			pass.Reportf(e.Func.Pos(), "%s:%s", e.Func.Name(), e.Fact)
		}
		return nil, nil
	},
}

func TestExportedFacts(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), factReporter, "exported")
}

// TestFactGob checks the fact encodes identically every time (the build
// cache keys on it) and round-trips.
func TestFactGob(t *testing.T) {
	f := &facts.CommitObligation{
		Undrained: []facts.CommitPath{{Role: "control", Lock: "a.C.mu", LockName: "C.mu", Commit: "a.C.commit", Chain: []string{"a.F", "a.C.commit"}}},
		Reaches:   []facts.CommitPath{{Role: "control", Commit: "a.C.commit", Chain: []string{"a.F", "a.C.commit"}}},
	}
	var first []byte
	for i := 0; i < 3; i++ {
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(f); err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = buf.Bytes()
		} else if !bytes.Equal(first, buf.Bytes()) {
			t.Fatal("gob encoding differs between runs")
		}
	}
	var back facts.CommitObligation
	if err := gob.NewDecoder(bytes.NewReader(first)).Decode(&back); err != nil {
		t.Fatal(err)
	}
	if back.String() != f.String() {
		t.Fatalf("round trip: got %s, want %s", back.String(), f.String())
	}
}
