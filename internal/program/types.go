package program

import (
	"go/types"
	"sort"
)

// NamedTypes returns the package's named non-interface types (generic ones
// included, aliases not) in source order. Computed once per package, on
// first use: like TypesWithMethod, not safe for concurrent use (the engines
// call it from the summary analyzer's Run).
func (p *Package) NamedTypes() []*types.Named {
	if p.named != nil {
		return p.named
	}
	scope := p.Pass.Pkg.Scope()
	out := []*types.Named{} // non-nil: computed, possibly empty
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		if n, ok := tn.Type().(*types.Named); ok && !types.IsInterface(n) {
			out = append(out, n)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Obj().Pos() < out[j].Obj().Pos() })
	p.named = out
	return out
}

// TypesWithMethod returns the package's non-generic named types, in source
// order, whose pointer method set (a superset of the value one) has a
// method called name: the only candidates to implement an interface with
// that method, so an interface call is resolved with a few Implements
// checks instead of one per type of the package.
func (p *Package) TypesWithMethod(name string) []*types.Named {
	if p.byMethod == nil {
		p.byMethod = map[string][]*types.Named{}
		for _, n := range p.NamedTypes() {
			if n.TypeParams().Len() > 0 {
				continue
			}
			ms := types.NewMethodSet(types.NewPointer(n))
			for i := range ms.Len() {
				m := ms.At(i).Obj().Name()
				p.byMethod[m] = append(p.byMethod[m], n)
			}
		}
	}
	return p.byMethod[name]
}
