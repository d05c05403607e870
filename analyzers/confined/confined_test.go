package confined_test

import (
	"bytes"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/confinelint/confinelint/analyzers/confined"
	"github.com/confinelint/confinelint/internal/roots"
)

// Each scenario is one package under testdata/src with a buggy and a
// fixed variant side by side; // want marks every expected finding.

func TestRebalanceKgo(t *testing.T)               { run(t, "rebalancekgo") }
func TestRebalanceSarama(t *testing.T)            { run(t, "rebalancesarama") }
func TestDiskRead(t *testing.T)                   { run(t, "diskread") }
func TestAsyncAPIs(t *testing.T)                  { run(t, "asyncapis") }
func TestSharedHelper(t *testing.T)               { run(t, "sharedhelper") }
func TestCrossPackage(t *testing.T)               { run(t, "crosspkg/a", "crosspkg/b") }
func TestConstruction(t *testing.T)               { run(t, "construction") }
func TestDeclareAssert(t *testing.T)              { run(t, "declareassert") }
func TestReadsAndWrites(t *testing.T)             { run(t, "readwrite") }
func TestAnyFunctions(t *testing.T)               { run(t, "anyfunc") }
func TestIgnore(t *testing.T)                     { run(t, "ignore") }
func TestCheckLocksIgnore(t *testing.T)           { run(t, "checklocksignore") }
func TestNoAnnotations(t *testing.T)              { run(t, "plain") }
func TestOtherRoleAndRecv(t *testing.T)           { run(t, "roles") }
func TestRoleCalls(t *testing.T)                  { run(t, "calls") }
func TestCommitCallLeftToRevokepath(t *testing.T) { run(t, "commitcall") }
func TestDerivedValues(t *testing.T)              { run(t, "derived") }
func TestOwnedTypeMethods(t *testing.T)           { run(t, "ownedtype") }
func TestSerialized(t *testing.T)                 { run(t, "serialized") }
func TestAsyncDirective(t *testing.T)             { run(t, "asyncdecl/app", "asyncdecl/user") }
func TestHandoffHelpers(t *testing.T)             { run(t, "handoffhelper") }

func TestSuggestedFixes(t *testing.T) {
	t.Parallel()
	analysistest.RunWithSuggestedFixes(t, analysistest.TestData(), confined.Analyzer, "apiboundary", "runtimefix", "directivefix")
}

// TestAsyncFlag checks that -confined.async makes a user API's function
// argument a goroutine root; the flag edits roots.Default, restored after.
// It is the one sequential test: Go resumes the parallel ones after it.
func TestAsyncFlag(t *testing.T) {
	saved := roots.Default
	t.Cleanup(func() { roots.Default = saved })
	roots.Default = roots.NewTable()
	if err := confined.Analyzer.Flags.Set("async", "asyncflag.(*Pool).Run:arg0"); err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, analysistest.TestData(), confined.Analyzer, "asyncflag")

	// Entries that match nothing fail the run, naming the closest match;
	// the value receiver form and the star-less method form are one API.
	for spec, want := range map[string]string{
		"asyncflag.(*Pool).Rnu:arg0": "-confined.async=asyncflag.(*Pool).Rnu:arg0: package asyncflag has no method Pool.Rnu; did you mean asyncflag.(*Pool).Run?",
		"asyncflag.Pool.Run:arg1":    "-confined.async=asyncflag.Pool.Run:arg1: asyncflag.(*Pool).Run takes 1 arguments (arg0 func()), so it has no arg1",
	} {
		roots.Default = roots.NewTable()
		if err := confined.Analyzer.Flags.Set("async", spec); err != nil {
			t.Fatal(err)
		}
		var rec recordingT
		analysistest.Run(&rec, analysistest.TestData(), confined.Analyzer, "asyncflag")
		if !strings.Contains(rec.String(), want) {
			t.Errorf("-confined.async=%s: want an error containing %q, got:\n%s", spec, want, rec.String())
		}
	}
	roots.Default = roots.NewTable()
	if err := confined.Analyzer.Flags.Set("async", "asyncflag.Pool.Run:arg0"); err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, analysistest.TestData(), confined.Analyzer, "asyncflag")
}

// recordingT collects what analysistest reports instead of failing.
type recordingT struct{ strings.Builder }

func (r *recordingT) Errorf(format string, args ...any) { fmt.Fprintf(r, format+"\n", args...) }

func run(t *testing.T, pkgs ...string) {
	t.Helper()
	t.Parallel()
	analysistest.Run(t, analysistest.TestData(), confined.Analyzer, pkgs...)
}

// TestDirectiveProblems: every malformed-directive class confined owns.
func TestDirectiveProblems(t *testing.T) { run(t, "directives") }

// Go features, each with findings and silent correct code (issue 9).
func TestFeatureGenerics(t *testing.T)  { run(t, "features_generics") }
func TestFeatureLoops(t *testing.T)     { run(t, "features_loops") }
func TestFeatureMethods(t *testing.T)   { run(t, "features_methods") }
func TestFeatureEmbedded(t *testing.T)  { run(t, "features_embedded") }
func TestFeatureDefer(t *testing.T)     { run(t, "features_defer") }
func TestFeatureRangeFunc(t *testing.T) { run(t, "features_rangefunc") }
func TestFeatureBuildTags(t *testing.T) { run(t, "features_buildtags") }
func TestFeatureGenerated(t *testing.T) { run(t, "features_generated") }
func TestFeatureTests(t *testing.T)     { run(t, "features_tests") }
func TestFeatureCgo(t *testing.T)       { run(t, "features_cgo") }
func TestFeatureSuppress(t *testing.T)  { run(t, "features_suppress") }

// TestFixedFilesAreGofmtClean: applying the suggested fixes leaves gofmt'd
// code gofmt'd (the blank // before a directive, bodies spread over lines).
func TestFixedFilesAreGofmtClean(t *testing.T) {
	for _, name := range []string{"apiboundary/apiboundary.go.golden", "runtimefix/runtimefix.go.golden"} {
		src, err := os.ReadFile(filepath.Join(analysistest.TestData(), "src", name))
		if err != nil {
			t.Fatal(err)
		}
		if formatted, err := format.Source(src); err != nil || !bytes.Equal(formatted, src) {
			t.Errorf("%s is not gofmt-clean (err %v):\n%s", name, err, formatted)
		}
	}
}
