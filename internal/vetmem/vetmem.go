// Package vetmem holds what the vet tool does to its own memory, shared
// with the benchmark's profiling copy of it (bench/vetprof) so that the
// profile shows what the tool keeps.
package vetmem

import (
	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/ctrlflow"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"
)

// DropInspector lets ctrlflow build the AST inspector it needs and drop it
// when done, instead of requiring the inspect analyzer: unitchecker keeps
// every analyzer's result until the process exits, and nothing else here
// uses the inspector. For a process of one package only (go vet's), never
// in the in-process driver; ctrlflow's code and results are the same. On
// the largest package of the benchmark corpus the inspector is a tenth of
// the peak memory (bench/RESULTS.md).
func DropInspector() {
	run := ctrlflow.Analyzer.Run
	ctrlflow.Analyzer.Requires = nil
	ctrlflow.Analyzer.Run = func(pass *analysis.Pass) (any, error) {
		p := *pass
		p.ResultOf = map[*analysis.Analyzer]any{inspect.Analyzer: inspector.New(pass.Files)}
		return run(&p)
	}
}
