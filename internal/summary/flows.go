package summary

import (
	"go/types"

	"golang.org/x/tools/go/analysis"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/program"
)

// exportParamFlows exports, for each exported function and method of the
// package, what it does with its parameters, so that a caller in another
// package handing it a fresh object knows whether that publishes it.
func exportParamFlows(pass *analysis.Pass, p *program.Package, x *objects.Index) {
	for _, fn := range p.Funcs {
		obj, ok := fn.Object().(*types.Func)
		if !ok || fn.Parent() != nil || fn.Synthetic != "" || obj.Pkg() != pass.Pkg || !obj.Exported() {
			continue
		}
		if flows := x.Flows(fn); flows != nil {
			pass.ExportObjectFact(obj, &facts.ParamFlows{Flows: flows})
		}
	}
}
