package ownership

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// source is where a reference comes from, as far as ownership cares
// (rule 6): read out of owned state, or a parameter of the function the
// walk ended in, or neither.
type source struct {
	owned bool
	// For owned: the state read and where.
	role, state, key string
	load             ssa.Instruction // the owned field or var's address (or Field)
	loadFn           *ssa.Function
	// param is the parameter's index in fn when the value is one, else -1.
	param int
	fn    *ssa.Function // the function the walk ended in
	// crossed: the walk went through a closure's captured variable, so
	// the value is used in another function than the one that read it.
	crossed bool
}

// maxSourceSteps bounds the walk back from a value to its source.
const maxSourceSteps = 32

// sourceOf walks v of fn back through selections, indexing, loads,
// conversions, local variables, closures' captures and calls of the
// package's accessors to the owned state it was read from, or the
// parameter it is. A value received from a channel is its receiver's
// (rule 4); a fresh object, a copy made by a call (maps.Clone) or a
// local struct copy is nobody's.
func (e *engine) sourceOf(fn *ssa.Function, v ssa.Value) source {
	crossed := false
	for range maxSourceSteps {
		v = objects.Underlying(v)
		switch x := v.(type) {
		case *ssa.FieldAddr:
			if s, ok := e.ownedField(fn, x, x.X, x.Field); ok {
				s.crossed = crossed
				return s
			}
			v = x.X
		case *ssa.Field:
			if s, ok := e.ownedField(fn, x, x.X, x.Field); ok {
				s.crossed = crossed
				return s
			}
			v = x.X
		case *ssa.UnOp, *ssa.IndexAddr, *ssa.Index, *ssa.Lookup, *ssa.Slice:
			if c := copiedField(x); c != nil {
				v = c // a reference kept in a local copy of a struct is the original's
				continue
			}
			if v = selectedFrom(x); v == nil {
				return source{param: -1} // received from a channel: the receiver's
			}
		case *ssa.Extract:
			if call, ok := x.Tuple.(*ssa.Call); ok {
				return e.callSource(fn, call, x.Index, crossed)
			}
			v = x.Tuple
		case *ssa.Next:
			v = x.Iter
		case *ssa.Range:
			v = x.X
		case *ssa.Global:
			if s, ok := e.ownedGlobal(fn, x); ok {
				s.crossed = crossed
				return s
			}
			return source{param: -1}
		case *ssa.FreeVar:
			pf, pv := e.objects().Resolve(fn, x)
			if pf == fn {
				return source{param: -1}
			}
			fn, v, crossed = pf, pv, true
		case *ssa.Parameter:
			for i, p := range fn.Params {
				if p == x {
					return source{param: i, fn: fn, crossed: crossed}
				}
			}
			return source{param: -1}
		case *ssa.Call:
			return e.callSource(fn, x, 0, crossed)
		default:
			return source{param: -1}
		}
	}
	return source{param: -1}
}

// ownedField reports whether selecting field index of x at instruction at
// reads owned state that is not construction or received.
func (e *engine) ownedField(fn *ssa.Function, at ssa.Instruction, x ssa.Value, index int) (source, bool) {
	st := objects.StructOf(x.Type())
	if st == nil || index >= st.NumFields() {
		return source{}, false
	}
	field := st.Field(index)
	if isOwner(field.Type()) {
		return source{}, false
	}
	owner := ownerType(x.Type())
	role, ok := e.p.FieldRole(field, owner)
	if !ok || e.exempt(fn, x, at) {
		return source{}, false
	}
	key := field.Name()
	if owner != nil {
		key = owner.Name() + "." + key
	}
	return source{owned: true, role: orDefault(role), state: e.exprName(at.Pos(), x, field.Name()), key: key,
		load: at, loadFn: fn, param: -1, fn: fn}, true
}

// ownedGlobal reports whether g is an owned package var.
func (e *engine) ownedGlobal(fn *ssa.Function, g *ssa.Global) (source, bool) {
	v, ok := g.Object().(*types.Var)
	if !ok || isOwner(v.Type()) {
		return source{}, false
	}
	role, ok := e.p.FieldRole(v, nil)
	if !ok {
		return source{}, false
	}
	name := v.Pkg().Name() + "." + v.Name()
	return source{owned: true, role: orDefault(role), state: v.Name(), key: name, loadFn: fn, param: -1, fn: fn}, true
}

// callSource is the source of result index of a call of one of the
// package's functions that returns owned state (an accessor such as
// `func (c *C) part(k string) *partState { return c.parts[k] }`): the
// read happens in the callee, on the caller's goroutine.
func (e *engine) callSource(fn *ssa.Function, call *ssa.Call, index int, crossed bool) source {
	callee := call.Call.StaticCallee()
	if callee == nil || !e.p.FuncSet[callee] || e.returning[callee] {
		return source{param: -1}
	}
	e.returning[callee] = true
	defer delete(e.returning, callee)
	for _, b := range callee.Blocks {
		r, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
		if !ok || index >= len(r.Results) {
			continue
		}
		if s := e.sourceOf(callee, r.Results[index]); s.owned {
			s.crossed = crossed
			return s
		}
	}
	return source{param: -1}
}

// isReference reports whether a value of type t shares memory with the
// value it was copied from: a pointer, map or slice, or a struct or array
// holding one. Channels, functions and interfaces are left out (a channel
// is made to be shared; what an interface holds is not known).
func isReference(t types.Type) bool { return reference(t, 0) }

func reference(t types.Type, depth int) bool {
	if depth > 4 {
		return false
	}
	switch u := t.Underlying().(type) {
	case *types.Pointer:
		return !isOwner(u.Elem()) && !lockop.IsSyncType(u.Elem())
	case *types.Map, *types.Slice:
		return true
	case *types.Array:
		return reference(u.Elem(), depth+1)
	case *types.Struct:
		for f := range u.Fields() {
			if reference(f.Type(), depth+1) {
				return true
			}
		}
	}
	return false
}

// selectedFrom returns the value v selects, indexes, slices or loads
// from, or nil (a receive, or anything else).
func selectedFrom(v ssa.Value) ssa.Value {
	switch x := v.(type) {
	case *ssa.FieldAddr:
		return x.X
	case *ssa.Field:
		return x.X
	case *ssa.UnOp:
		if x.Op == token.MUL {
			return x.X
		}
	case *ssa.IndexAddr:
		return x.X
	case *ssa.Index:
		return x.X
	case *ssa.Lookup:
		return x.X
	case *ssa.Slice:
		return x.X
	}
	return nil
}

// copiedField returns, for a reference loaded from a field of a local
// struct or array variable assigned once as a whole (st := *ps, or a
// parameter the function takes the address of), the value copied in: the
// copy shares what its reference fields point to.
func copiedField(v ssa.Value) ssa.Value {
	ld, ok := v.(*ssa.UnOp)
	if !ok || ld.Op != token.MUL || !isShared(ld.Type()) {
		return nil
	}
	var base ssa.Value
	switch a := ld.X.(type) {
	case *ssa.FieldAddr:
		base = a.X
	case *ssa.IndexAddr:
		base = a.X
	default:
		return nil
	}
	local, ok := base.(*ssa.Alloc)
	if !ok || objects.IsCell(local) {
		return nil
	}
	var whole ssa.Value
	for _, r := range *local.Referrers() {
		if st, ok := r.(*ssa.Store); ok && st.Addr == local {
			if whole != nil {
				return nil
			}
			whole = st.Val
		}
	}
	return whole
}

// isShared reports whether t is itself a pointer, map or slice.
func isShared(t types.Type) bool {
	switch t.Underlying().(type) {
	case *types.Pointer, *types.Map, *types.Slice:
		return true
	}
	return false
}
