package objects

import (
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// FieldTypes returns the dynamic types of the values the package stores
// into f, an unexported interface-typed field, when every store is a
// conversion of a concrete value: directly, or through a parameter of an
// unexported function whose every call is a static call of the package
// (in a package nothing imports, package main or a test-only package,
// exported fields and functions count as unexported: only it can use them)
// (`eventQueue{sink: sink}` in newEventQueue, called with &httpSink{}).
// ok is false when some store's value is not known that way, or when
// nothing is stored.
func (x *Index) FieldTypes(f *types.Var) (dynamic []types.Type, ok bool) {
	if f == nil || f.Exported() && x.closed == nil || !types.IsInterface(f.Type()) {
		return nil, false
	}
	fo := x.fieldRecord()
	if memo, seen := fo.dynamic[f]; seen {
		return memo.types, memo.ok
	}
	stores := fo.stores[f]
	ok = len(stores) > 0
	for _, st := range stores {
		if !x.dynamicTypes(st.Val, &dynamic, 0) {
			dynamic, ok = nil, false
			break
		}
	}
	fo.dynamic[f] = fieldTypes{dynamic, ok}
	return dynamic, ok
}

// dynamicTypes adds the dynamic types v, an interface value, may hold;
// false when they are not all known.
func (x *Index) dynamicTypes(v ssa.Value, out *[]types.Type, depth int) bool {
	if depth > maxOriginDepth {
		return false
	}
	switch o := v.(type) {
	case *ssa.MakeInterface:
		if !slices.ContainsFunc(*out, func(t types.Type) bool { return types.Identical(t, o.X.Type()) }) {
			*out = append(*out, o.X.Type())
		}
		return true
	case *ssa.ChangeInterface:
		return x.dynamicTypes(o.X, out, depth+1)
	case *ssa.Const:
		return true // nil: nothing to call
	case *ssa.Phi:
		for _, e := range o.Edges {
			if e != o && !x.dynamicTypes(e, out, depth+1) {
				return false
			}
		}
		return true
	case *ssa.Parameter:
		return x.paramTypes(o, out, depth)
	}
	return false
}

// ParamTypes returns the dynamic types of the values the package passes
// for p, an interface-typed parameter, when paramTypes knows them all.
func (x *Index) ParamTypes(p *ssa.Parameter) ([]types.Type, bool) {
	var dynamic []types.Type
	if !types.IsInterface(p.Type()) || !x.paramTypes(p, &dynamic, 0) {
		return nil, false
	}
	return dynamic, true
}

// paramTypes is dynamicTypes for a parameter: the arguments of the
// package's calls, when the function (unexported, not a closure) is only
// ever called here, never used as a value. A method counts in a closed
// program when no interface call of the package may run it: its every
// call is then a static one (span.RecordError(err), err an *queryError
// at its one call).
func (x *Index) paramTypes(p *ssa.Parameter, out *[]types.Type, depth int) bool {
	fn := p.Parent()
	if fn.Signature.Recv() != nil && x.closed == nil {
		return false
	}
	calls, ok := x.StaticCalls(fn)
	i := slices.Index(fn.Params, p)
	if !ok || i < 0 || len(calls) == 0 {
		return false
	}
	for _, c := range calls {
		if i >= len(c.Args) || !x.dynamicTypes(c.Args[i], out, depth+1) {
			return false
		}
	}
	return true
}

// StaticCalls returns the package's calls of fn when they are all the
// calls it has: fn is no closure, never used as a value, and unexported,
// or in a closed program, and, for a method, no interface call of the
// package may run it (an unexported method can be in no other package's
// interface).
func (x *Index) StaticCalls(fn *ssa.Function) ([]*ssa.CallCommon, bool) {
	fo := x.fieldRecord()
	if fn.Parent() != nil || fn.Object() == nil || fn.Object().Exported() && x.closed == nil || fo.values[fn] {
		return nil, false
	}
	if fn.Signature.Recv() != nil && x.invoked(fn.Name()) {
		return nil, false
	}
	return fo.calls[fn], true
}

// invoked reports whether some interface call of the package calls a
// method named name, or a method of that name is taken as a value (a
// bound method or a method expression, whose calls are the wrapper's).
func (x *Index) invoked(name string) bool { return x.fieldRecord().invoked[name] }
