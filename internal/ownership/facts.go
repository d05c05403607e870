package ownership

import (
	"sort"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/program"
	"github.com/confinelint/confinelint/internal/roots"
)

// exportFacts exports, for every exported function, what callers in other
// packages need: the role an Assert implies, or the owned state an
// undeclared function reaches. Nothing is exported for an empty summary.
func (e *engine) exportFacts() {
	for _, fn := range e.p.Funcs {
		if !isExported(fn) || fn.Object().Pkg() != e.p.Pass.Pkg {
			continue
		}
		own := &facts.Ownership{Implied: e.implied[fn]}
		if r := e.rootOf[fn]; r != nil && r.Kind == roots.KindUnknown {
			for _, t := range e.summary(fn) {
				var chain []string
				for _, f := range t.path {
					chain = append(chain, program.FuncName(f, nil))
				}
				chain = append(chain, t.a.via...)
				own.Accesses = append(own.Accesses, facts.Access{
					State: t.a.key, Role: t.a.role, Write: t.a.kind == write, Call: t.a.kind == call, Chain: chain,
				})
			}
		}
		if own.Implied == "" && len(own.Accesses) == 0 {
			continue
		}
		sort.SliceStable(own.Accesses, func(i, j int) bool {
			a, b := own.Accesses[i], own.Accesses[j]
			if a.State != b.State {
				return a.State < b.State
			}
			return a.Role < b.Role
		})
		e.p.Pass.ExportObjectFact(fn.Object(), own)
	}
}
