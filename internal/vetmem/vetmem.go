// Package vetmem holds what the vet tool does to its own memory, shared
// with the benchmark's profiling copy of it (bench/vetprof) so that the
// profile shows what the tool keeps.
//
// unitchecker keeps every analyzer's result until the process exits, so a
// result nobody reads after its one consumer ran is carried through the
// summary's work, when the heap peaks. For a process of one package only
// (go vet's), never in the in-process driver or in tests, Lean replaces
// the two standard passes below SSA with the same computations that keep
// only what their consumers read, and once SSA is built drops the type
// checker's records nothing reads any more (info.go); SSA and everything
// after it are the same.
package vetmem

import (
	"go/types"
	"reflect"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/analysis/passes/ctrlflow"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// Lean installs the replacements: ctrlflow without the inspect analyzer and
// with its result cut to the no-return set, and buildssa over that set,
// cutting the type checker's records once SSA is built. Only buildssa may
// read ctrlflow's result, only ctrlflow the inspector, and no analyzer the
// records cut (cmd/confinelint tests all three).
func Lean() {
	keepHeapFloor()
	dropInspector()
	keepNoReturnOnly()
	buildssa.Analyzer.Run = buildSSA
}

// dropInspector lets ctrlflow build the AST inspector it needs and drop it
// when done, instead of requiring the inspect analyzer. On the largest
// package of the benchmark corpus the inspector was a tenth of the peak
// memory (bench/RESULTS.md).
func dropInspector() {
	run := ctrlflow.Analyzer.Run
	ctrlflow.Analyzer.Requires = nil
	ctrlflow.Analyzer.Run = func(pass *analysis.Pass) (any, error) {
		p := *pass
		p.ResultOf = map[*analysis.Analyzer]any{inspect.Analyzer: inspector.New(pass.Files)}
		return run(&p)
	}
}

// noReturn is the set of functions ctrlflow found cannot return: what
// buildssa asks of its result, without the control-flow graph of every
// function of the package that ctrlflow's own result holds (7 MB live on
// the corpus's largest package).
type noReturn map[*types.Func]bool

// keepNoReturnOnly runs ctrlflow as it is and keeps the functions it marks.
// ctrlflow marks a function of this package exactly when it exports its
// fact, and one of another package exactly when it imports that fact, so
// watching both gives its answer for every function.
func keepNoReturnOnly() {
	run := ctrlflow.Analyzer.Run
	ctrlflow.Analyzer.ResultType = reflect.TypeFor[noReturn]()
	ctrlflow.Analyzer.Run = func(pass *analysis.Pass) (any, error) {
		marked := noReturn{}
		p := *pass
		p.ExportObjectFact = func(obj types.Object, fact analysis.Fact) {
			pass.ExportObjectFact(obj, fact)
			if fn, ok := obj.(*types.Func); ok {
				marked[fn] = true
			}
		}
		p.ImportObjectFact = func(obj types.Object, fact analysis.Fact) bool {
			found := pass.ImportObjectFact(obj, fact)
			if fn, ok := obj.(*types.Func); ok && found {
				marked[fn] = true
			}
			return found
		}
		if _, err := run(&p); err != nil {
			return nil, err
		}
		return marked, nil
	}
}
