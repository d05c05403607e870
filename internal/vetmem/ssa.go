package vetmem

import (
	"go/ast"
	"go/types"

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
