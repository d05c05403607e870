package vetmem

import (
	"go/ast"
	"go/types"
	"runtime"
	"runtime/metrics"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/buildssa"
	"golang.org/x/tools/go/analysis/passes/ctrlflow"
	"golang.org/x/tools/go/ssa"
)

// buildSSA is buildssa's run over the noReturn set: the same program (one
// per package, its direct imports created from types only, no builder
// mode), the same calls cut after a function that cannot return, and the
// same source functions in source order, literals after their enclosing
// function.
func buildSSA(pass *analysis.Pass) (any, error) {
	collectIfLarge()
	cannotReturn := pass.ResultOf[ctrlflow.Analyzer].(noReturn)
	prog := ssa.NewProgram(pass.Fset, 0)
	prog.SetNoReturn(func(fn *types.Func) bool { return cannotReturn[fn] })
	for _, imp := range pass.Pkg.Imports() {
		prog.CreatePackage(imp, nil, nil, true)
	}
	pkg := prog.CreatePackage(pass.Pkg, pass.Files, pass.TypesInfo, false)
	pkg.Build()
	srcFuncs := sourceFuncs(pass, prog)
	keepDeclTypes(pass.Files, pass.TypesInfo)
	collectIfLarge()
	return &buildssa.SSA{Pkg: pkg, SrcFuncs: srcFuncs}, nil
}

// sourceFuncs lists the package's declared functions and, after each, its
// function literals, depth first.
func sourceFuncs(pass *analysis.Pass, prog *ssa.Program) []*ssa.Function {
	var out []*ssa.Function
	var add func(fn *ssa.Function)
	add = func(fn *ssa.Function) {
		out = append(out, fn)
		for _, lit := range fn.AnonFuncs {
			add(lit)
		}
	}
	for _, file := range pass.Files {
		for _, decl := range file.Decls {
			if d, ok := decl.(*ast.FuncDecl); ok {
				add(prog.FuncValue(pass.TypesInfo.Defs[d.Name].(*types.Func)))
			}
		}
	}
	return out
}

// collectIfLarge collects garbage when the heap holds more than
// largeHeap bytes of objects. It runs where a phase ends and leaves most
// of its heap behind: type checking and the passes below SSA before the
// build, the builder's garbage and the type checker's records cut after
// it. The next collection's target is then twice what is live at that
// point, not twice what happened to be live mid-phase: on the benchmark
// corpus's largest package (sarama with its tests) the process peaked at
// 201-241 MiB without it and at 177-183 MiB with it (go vet's own: 152).
// A small heap is left alone: a collection costs about as much as the
// heap is live, and most packages are small (collecting in every
// process cost 28% more CPU on sarama's dependency closure; with this
// threshold none measurable, bench/RESULTS.md).
func collectIfLarge() {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	if sample[0].Value.Kind() == metrics.KindUint64 && sample[0].Value.Uint64() > largeHeap {
		runtime.GC()
	}
}

const largeHeap = 64 << 20
