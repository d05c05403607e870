package revokepath_test

import (
	"os"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/confinelint/confinelint/analyzers/revokepath"
)

func TestRevokePath(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), revokepath.Analyzer,
		"controlloop",                      // lock-drain-commit loop beside a lock-commit callback
		"drainorder",                       // drains that do not count: before the lock, on some paths, len checks
		"helpers",                          // obligations passed through helpers and closures
		"obliga",                           // exported helpers pass their obligation on: silent
		"obligb",                           // obligations across packages (obliga's facts)
		"handoff",                          // callback committing inline vs. posting a request
		"kgorevoke",                        // franz-go revoke callback committing inline
		"kgohandoff",                       // franz-go handoff design: silent
		"nodirectives",                     // no directives: silent, no panic
		"problems",                         // misplaced directives; //confined:ignore
		"closurestart", "closurestart/app", // entries started from closures and errgroup: silent
		"sharedcommit",  // inline commits through a shared helper: at each root's own call
		"kgoserialized", // //confined:serialized revoke callbacks: checked as control
		"drains",        // a drain must receive from a channel
	)
}

// quiet satisfies analysistest.Testing without failing: the expectations
// are checked by TestRevokePath; here only the output matters.
type quiet struct{}

func (quiet) Errorf(string, ...any) {}

// TestDeterministic runs the analyzer twice and wants the same findings in
// the same order, with the same related information.
func TestDeterministic(t *testing.T) {
	render := func() []string {
		var out []string
		for _, r := range analysistest.Run(quiet{}, analysistest.TestData(), revokepath.Analyzer, "helpers", "obligb", "kgorevoke") {
			for _, d := range r.Diagnostics {
				out = append(out, r.Pass.Fset.Position(d.Pos).String()+" "+d.Message)
				for _, rel := range d.Related {
					out = append(out, "  "+r.Pass.Fset.Position(rel.Pos).String()+" "+rel.Message)
				}
			}
		}
		return out
	}
	first, second := render(), render()
	if len(first) == 0 {
		t.Fatal("no findings")
	}
	if strings.Join(first, "\n") != strings.Join(second, "\n") {
		t.Fatalf("findings differ between runs:\n%s\n---\n%s", strings.Join(first, "\n"), strings.Join(second, "\n"))
	}
}

// Go features, each with findings and silent correct code (issue 9).
func TestFeatures(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), revokepath.Analyzer,
		"features_revoke",    // generics, method values, loops, deferred closures, range-over-func
		"features_generated", // findings in generated files are not reported
	)
}

// TestFindingsAtCalleeName: a finding at a call points at the callee's
// name ("commit" in c.commit()), not at the '(' where SSA puts the call.
func TestFindingsAtCalleeName(t *testing.T) {
	n := 0
	for _, r := range analysistest.Run(quiet{}, analysistest.TestData(), revokepath.Analyzer, "sharedcommit", "kgorevoke", "closurestart") {
		for _, d := range r.Diagnostics {
			posn := r.Pass.Fset.Position(d.Pos)
			src, err := os.ReadFile(posn.Filename)
			if err != nil {
				t.Fatal(err)
			}
			if c := src[posn.Offset]; !unicode.IsLetter(rune(c)) {
				t.Errorf("%s: finding starts at %q, not at the callee's name: %s", posn, c, d.Message)
			}
			n++
		}
	}
	if n < 4 {
		t.Fatalf("only %d findings checked", n)
	}
}
