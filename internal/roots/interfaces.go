package roots

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

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
// interface. Memoized per method: a package calls io.Writer.Write in many
// places, and each answer costs an Implements check per candidate type.
func (b *builder) implementations(m *types.Func) []*ssa.Function {
	if impls, ok := b.impls[m]; ok {
		return impls
	}
	impls := b.findImplementations(m)
	if b.impls == nil {
		b.impls = map[*types.Func][]*ssa.Function{}
	}
	b.impls[m] = impls
	return impls
}

func (b *builder) findImplementations(m *types.Func) []*ssa.Function {
	sig, ok := m.Type().(*types.Signature)
	if !ok || sig.Recv() == nil {
		return nil
	}
	iface, ok := sig.Recv().Type().Underlying().(*types.Interface)
	if !ok {
		return nil
	}
	var out []*ssa.Function
	for _, n := range b.p.TypesWithMethod(m.Name()) {
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
		for _, n := range b.p.NamedTypes() {
			if !types.Implements(n, iface) && !types.Implements(types.NewPointer(n), iface) {
				continue
			}
			for _, name := range ai.Methods {
				if fn := b.methodFunc(n, name); fn != nil {
					b.addForeignRoot(&Root{Kind: KindInterface, Func: fn, Pos: fn.Pos(), Via: ai.Display + "." + name})
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
