package lockorder_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/confinelint/confinelint/analyzers/lockorder"
	"github.com/confinelint/confinelint/internal/summary"
)

// Each scenario package holds buggy code (with // want) and correct code
// that must stay silent.
var scenarios = []string{
	"inversion", "interfunc", "doublelock", "leak", "unlock", "deferlock", "trylock", "guarded", "annotated", "atomics", "crossa", "crossb", "methodvalue", "callback", "ifacecall", "blocking", "checklocks", "rangefunc", "alias",
	// Precision on real code: each must stay silent on its correct code.
	"accidentiface", "subclass", "mayacquire", "deepchain", "bufferedchan", "unblocker", "loopvariant", "freshleak", "unpublished", "tworoles", "capturedcell", "panicleak", "branches", "tryacquire", "cyclegroups", "teststaged", "handleiface", "handover", "gatelock", "recursiveread", "unblockfirst", "composite", "handleleak", "accessor", "mainunblock", "wrapperfields", "readwait", "twopaths", "retake", "mergedleak", "looprelock", "backpointer", "crosspublish", "handoverhand", "onceguard", "getter", "lookupaccessor", "paramcallbranch", "failpath", "closedfield", "iterations", "readinversion", "samecondition", "heldresult", "dispatcha", "dispatchb", "releasefunc", "testmodel", "somepaths", "triggerloops", "sentinelerr", "guardclause", "failbranch", "treeorder", "symmetric", "maporder", "dispatchtable", "vartable", "branchdefer", "errcallback", "sliceorder", "eachturn",
}

func TestScenarios(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), lockorder.Analyzer, scenarios...)
}

// TestChecklocks holds gVisor checklocks semantics, one package per
// behaviour, each with findings and silent correct code (issue 15).
func TestChecklocks(t *testing.T) {
	for _, pkg := range []string{"checklocks_globals", "checklocks_multiguard", "checklocks_results", "checklocks_closures",
		"checklocks_force", "checklocks_musthold", "checklocks_instances", "checklocks_returns", "checklocks_ignore", "checklocks_inferred", "checklocks_wrapper", "checklocks_identity", "checklocks_prepare", "checklocks_forcedreturn", "checklocks_downgrade",
		"checklocks_atomic", "checklocks_alias", "checklocks_excludes", "checklocks_readany"} {
		t.Run(pkg, func(t *testing.T) {
			analysistest.Run(t, analysistest.TestData(), lockorder.Analyzer, pkg)
		})
	}
}

// TestFacts checks the lock facts exported for callers in other packages.
func TestFacts(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), summary.Analyzer, "lockfacts")
}

// Go features, each with findings and silent correct code (issue 9).
func TestFeatures(t *testing.T) {
	for _, pkg := range []string{"features_generics", "features_embedded", "features_select", "features_rangefunc", "features_methodexpr", "features_loops", "features_generated", "features_tests"} {
		t.Run(pkg, func(t *testing.T) {
			analysistest.Run(t, analysistest.TestData(), lockorder.Analyzer, pkg)
		})
	}
}

// TestFeatureBugs holds Go-feature cases lockorder once got wrong: a
// generic type's guarded field named without its type, a method
// expression call (*T).m(x) not followed, and go x.m() not publishing a
// fresh allocation.
func TestFeatureBugs(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), lockorder.Analyzer, "features_lockbugs")
}

// Shapes of deadlocks real projects shipped (issue 14): per-key locks in
// containers, Lockers made from a mutex (RLocker, Cond.L), a read lock
// held across a wait inside a callee, and chains of certain takes deeper
// than the bound on possible ones.
func TestKeyedLockersWaitsChains(t *testing.T) {
	for _, pkg := range []string{"perkey", "lockeralias", "condwait", "condwaitmain", "mustchain"} {
		t.Run(pkg, func(t *testing.T) {
			analysistest.Run(t, analysistest.TestData(), lockorder.Analyzer, pkg)
		})
	}
}

// TestCallResolution: what a call runs and what it does to the lock state
// (issue 14): callbacks stored by setters, passed as parameters, run by
// sync.Once or kept in tables; effects through interface calls; String
// and Error called by fmt and log; Lockers whose effects are declared;
// the one object of a type a closed program makes, however reached.
func TestCallResolution(t *testing.T) {
	for _, pkg := range []string{"callbacksetter", "callbackparam", "callbackonce", "ifaceeffect", "ifacetxn", "implicitstring", "lockerdecl", "lockerdeclb", "singleton", "singletonlib", "singletontest", "callbackslice", "registry"} {
		t.Run(pkg, func(t *testing.T) {
			analysistest.Run(t, analysistest.TestData(), lockorder.Analyzer, pkg)
		})
	}
}

// TestImplicitReturnRelated: a finding at an implicit return, reported at
// the function's name, points at the closing brace and at the unlock (or,
// for a lock left held, at where it was taken).
func TestImplicitReturnRelated(t *testing.T) {
	results := analysistest.Run(t, analysistest.TestData(), lockorder.Analyzer, "checklocks_returns")
	related := relatedLines(results, func(d analysis.Diagnostic, _ analysis.RelatedInformation) bool {
		return strings.Contains(d.Message, "at the implicit return")
	})
	want := []string{
		"implicit.go:12 the function returns here, at the end of its body",
		"implicit.go:11 cache.mu released here",
		"undeclared.go:13 the function returns here, at the end of its body",
		"undeclared.go:12 cache.mu taken here",
		"undeclared.go:46 the function returns here, at the end of its body",
		"undeclared.go:45 cache.rw taken here",
	}
	slices.Sort(related)
	slices.Sort(want)
	if !slices.Equal(related, want) {
		t.Errorf("related information:\n got %q\nwant %q", related, want)
	}
}

// TestCalleeLockRelated: a lock taken through a call is reported at the
// call, and the related information also names the Lock in the callee,
// for a lock-order witness and for a double lock.
func TestCalleeLockRelated(t *testing.T) {
	results := analysistest.Run(t, analysistest.TestData(), lockorder.Analyzer, "failpath", "interfunc")
	related := relatedLines(results, func(_ analysis.Diagnostic, rel analysis.RelatedInformation) bool {
		return strings.Contains(rel.Message, " locked ")
	})
	want := []string{
		"watch.go:40 Owner.mu locked again here",
		"interfunc.go:18 Store.index locked here",
		"interfunc.go:29 Store.mu locked here",
	}
	for _, w := range want {
		if !slices.Contains(related, w) {
			t.Errorf("related information lacks %q; has %q", w, related)
		}
	}
}

// relatedLines renders the related information keep selects as
// "file.go:12 message".
func relatedLines(results []*analysistest.Result, keep func(analysis.Diagnostic, analysis.RelatedInformation) bool) []string {
	var out []string
	for _, r := range results {
		for _, d := range r.Diagnostics {
			for _, rel := range d.Related {
				if keep(d, rel) {
					p := r.Pass.Fset.Position(rel.Pos)
					out = append(out, fmt.Sprintf("%s:%d %s", filepath.Base(p.Filename), p.Line, rel.Message))
				}
			}
		}
	}
	return out
}
