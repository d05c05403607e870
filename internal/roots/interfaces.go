package roots

import (
	"go/types"
	"sort"

	"golang.org/x/tools/go/ssa"
)

// namedTypes returns the package's named non-interface types, in source
// order.
func (b *builder) namedTypes() []*types.Named {
	if b.named != nil {
		return b.named
	}
	scope := b.p.Pass.Pkg.Scope()
	var out []*types.Named
	for _, name := range scope.Names() {
		tn, ok := scope.Lookup(name).(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		n, ok := tn.Type().(*types.Named)
		if !ok || types.IsInterface(n) {
			continue
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Obj().Pos() < out[j].Obj().Pos() })
	if out == nil {
		out = []*types.Named{} // non-nil: computed, and empty
	}
	b.named = out
	return out
}

// methodFunc returns the source function of method name on T or *T.
func (b *builder) methodFunc(n *types.Named, name string) *ssa.Function {
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(n), false, b.p.Pass.Pkg, name)
	m, ok := obj.(*types.Func)
	if !ok || m.Pkg() != b.p.Pass.Pkg {
		return nil
	}
	return b.local(b.p.SSA.Pkg.Prog.FuncValue(m))
}

// implementations returns the package's methods that an interface call of
// method m can reach: those of its named types that implement m's
// interface.
func (b *builder) implementations(m *types.Func) []*ssa.Function {
	sig, ok := m.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return nil
	}
	iface, ok := sig.Recv().Type().Underlying().(*types.Interface)
	if !ok {
		return nil
	}
	var out []*ssa.Function
	for _, n := range b.namedTypes() {
		if n.TypeParams().Len() > 0 {
			continue
		}
		if !types.Implements(n, iface) && !types.Implements(types.NewPointer(n), iface) {
			continue
		}
		if fn := b.methodFunc(n, m.Name()); fn != nil {
			out = append(out, fn)
		}
	}
	return out
}

// interfaceRoots makes roots of the methods of types that implement a known
// asynchronous interface, whether or not the package converts them.
func (b *builder) interfaceRoots() {
	for _, ai := range builtinInterfaces {
		iface := b.lookupInterface(ai.Pkg, ai.Name)
		if iface == nil {
			continue
		}
		for _, n := range b.namedTypes() {
			if !types.Implements(n, iface) && !types.Implements(types.NewPointer(n), iface) {
				continue
			}
			for _, name := range ai.Methods {
				if fn := b.methodFunc(n, name); fn != nil {
					b.addRoot(&Root{Kind: KindInterface, Func: fn, Pos: fn.Pos(), Via: ai.Display + "." + name})
				}
			}
		}
	}
}

func (b *builder) lookupInterface(pkgPath, name string) *types.Interface {
	for _, imp := range b.p.Pass.Pkg.Imports() {
		if imp.Path() != pkgPath {
			continue
		}
		if tn, ok := imp.Scope().Lookup(name).(*types.TypeName); ok {
			if iface, ok := tn.Type().Underlying().(*types.Interface); ok {
				return iface
			}
		}
	}
	return nil
}
