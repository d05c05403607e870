package objects

import (
	"go/token"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// maxSteps bounds every walk over SSA value chains: real chains are short,
// and a bound keeps malformed or cyclic shapes from looping.
const maxSteps = 32

// Underlying returns the value v stands for inside its function: through
// conversions (ChangeType, MakeInterface, ChangeInterface, a type assertion
// without comma-ok), a local variable cell stored exactly once (a captured
// variable: SSA spills it to the heap), a load of a fresh object's field
// stored exactly once before the load (`(&API{c: c}).c` is c), and a phi
// whose edges are all one value (or the phi itself, around a loop).
func Underlying(v ssa.Value) ssa.Value {
	for range maxSteps {
		next := step(v, false)
		if next == nil {
			return v
		}
		v = next
	}
	return v
}

// step is one move of Underlying, nil when v stands for itself. For paths
// (naming), a fresh object's field read back is the stored value only when
// that has a name outside the function (a parameter, free variable or
// package var): `(&API{c: c}).c` is c, but p.next stays p.next when
// p.next = new(conn), so that paths built by selection (a result's
// declared lock "p.next.mu") still meet.
func step(v ssa.Value, naming bool) ssa.Value {
	switch x := v.(type) {
	case *ssa.ChangeType:
		return x.X
	case *ssa.MakeInterface:
		return x.X
	case *ssa.ChangeInterface:
		return x.X
	case *ssa.TypeAssert:
		if !x.CommaOk {
			return x.X
		}
	case *ssa.Extract:
		// v, ok := x.(T): v is x where ok is true (and nil elsewhere).
		if ta, ok := x.Tuple.(*ssa.TypeAssert); ok && x.Index == 0 {
			return ta.X
		}
	case *ssa.Alloc:
		// A variable cell (not the object itself) stands for what it holds.
		if IsCell(x) {
			return StoredOnce(x)
		}
	case *ssa.UnOp:
		if x.Op != token.MUL {
			return nil
		}
		if a, ok := x.X.(*ssa.Alloc); ok && IsCell(a) {
			if v := StoredOnce(a); v != nil {
				return v
			}
			return reachingCell(a, x, 0)
		}
		if v, _, stored := storedThrough(x); stored && v != nil {
			return v
		}
		if fa, ok := x.X.(*ssa.FieldAddr); ok {
			stored := fieldStoredOnce(fa, x)
			if naming && stored != nil && !named(stored) {
				return nil
			}
			return stored
		}
	case *ssa.Phi:
		return samePhi(x)
	}
	return nil
}

// named reports whether v stands for a parameter, free variable or
// package var.
func named(v ssa.Value) bool {
	switch Underlying(v).(type) {
	case *ssa.Parameter, *ssa.FreeVar, *ssa.Global:
		return true
	}
	return false
}

// IsCell reports whether a is a local variable's cell (a variable of
// reference type: pointer, map, chan, func, interface, slice), as opposed
// to a struct or array object allocated by the function.
func IsCell(a *ssa.Alloc) bool {
	switch a.Type().(*types.Pointer).Elem().Underlying().(type) {
	case *types.Struct, *types.Array:
		return false
	}
	return true
}

// StoredOnce returns the one value ever stored into the cell a, or nil
// when it is stored more than once (or never, or its address escapes
// into anything but loads and stores).
func StoredOnce(a *ssa.Alloc) ssa.Value {
	var val ssa.Value
	for _, r := range *a.Referrers() {
		switch u := r.(type) {
		case *ssa.Store:
			if u.Addr != a {
				return nil // the cell's address itself stored away
			}
			if val != nil {
				return nil
			}
			val = u.Val
		case *ssa.MakeClosure:
			if closureStores(u, a) {
				return nil // assigned inside the closure too
			}
		case *ssa.UnOp, *ssa.DebugRef:
		default:
			return nil // passed by address: may be written elsewhere
		}
	}
	return val
}

// closureStores reports whether the closure mc, capturing cell, stores
// into it (or hands its address on) anywhere but loads.
func closureStores(mc *ssa.MakeClosure, cell ssa.Value) bool {
	_, writes := closureUses(mc, cell)
	return writes
}

// closureUses says whether the closure mc, capturing cell, loads it and
// whether it does anything else with it (stores into it, hands its
// address on), directly or through closures of its own.
func closureUses(mc *ssa.MakeClosure, cell ssa.Value) (reads, writes bool) {
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok {
		return true, true
	}
	for i, b := range mc.Bindings {
		if b != cell || i >= len(fn.FreeVars) {
			continue
		}
		for _, r := range *fn.FreeVars[i].Referrers() {
			switch u := r.(type) {
			case *ssa.UnOp:
				reads = true
			case *ssa.DebugRef:
			case *ssa.MakeClosure:
				r, w := closureUses(u, fn.FreeVars[i])
				reads, writes = reads || r, writes || w
			default:
				writes = true
			}
		}
	}
	return reads, writes
}

// fieldStoredOnce returns the value stored into field fa of a fresh
// object when that is the field's only store in the function and the
// store comes before load in the same block or in a dominating one; for an
// object a call returned, the argument the callee stored there
// (callFieldArg).
func fieldStoredOnce(fa *ssa.FieldAddr, load *ssa.UnOp) ssa.Value {
	return storedField(fa.X, fa.Field, load, 0)
}

// before reports whether a runs before b on every path: same block and
// earlier, or a's block strictly dominates b's.
func before(a, b ssa.Instruction) bool {
	ab, bb := a.Block(), b.Block()
	if ab == nil || bb == nil {
		return false
	}
	if ab == bb {
		for _, in := range ab.Instrs {
			if in == a {
				return true
			}
			if in == b {
				return false
			}
		}
		return false
	}
	return ab.Dominates(bb)
}

// samePhi returns the one value every edge of phi carries (ignoring edges
// that carry the phi itself), or nil.
func samePhi(phi *ssa.Phi) ssa.Value {
	var same ssa.Value
	for _, e := range phi.Edges {
		if e == phi {
			continue
		}
		if same != nil && e != same {
			return nil
		}
		same = e
	}
	return same
}

// Binding returns the value a closure's free variable is bound to in the
// function that creates the closure, when the closure is created at one
// place only; ok is false otherwise.
func (x *Index) Binding(fn *ssa.Function, fv *ssa.FreeVar) (parent *ssa.Function, v ssa.Value, ok bool) {
	mc := x.ClosureOf(fn)
	if mc == nil {
		return nil, nil, false
	}
	for i, f := range fn.FreeVars {
		if f == fv && i < len(mc.Bindings) {
			return mc.Parent(), mc.Bindings[i], true
		}
	}
	return nil, nil, false
}

// Resolve is Underlying across closures: a free variable continues as its
// binding in the creating function (through as many enclosing closures as
// needed). It returns the function the result lives in.
func (x *Index) Resolve(fn *ssa.Function, v ssa.Value) (*ssa.Function, ssa.Value) {
	for range maxSteps {
		v = Underlying(v)
		fv, ok := v.(*ssa.FreeVar)
		load := false
		if u, isLoad := v.(*ssa.UnOp); isLoad && u.Op == token.MUL {
			fv, ok = u.X.(*ssa.FreeVar) // a load of a captured variable's cell
			load = true
		}
		if !ok {
			return fn, v
		}
		parent, b, ok := x.Binding(fn, fv)
		if !ok {
			return fn, v
		}
		if load {
			cell, ok := b.(*ssa.Alloc)
			if !ok || !IsCell(cell) || StoredOnce(cell) == nil {
				return fn, v
			}
			b = StoredOnce(cell)
		}
		fn, v = parent, b
	}
	return fn, v
}

// Through names the object at path rest (".c.mu") from v, a value of fn,
// when v is an object fn created and the first field of rest was stored
// exactly once, before at, with a value named outside fn: that value's
// path with the rest of rest ("p0.mu" for (&API{c: c}).c.mu). ok is false
// when rest does not go through such a field.
func Through(fn *ssa.Function, v ssa.Value, rest string, at ssa.Instruction) (string, bool) {
	if at == nil || !strings.HasPrefix(rest, ".") {
		return "", false
	}
	name, tail := rest[1:], ""
	if i := strings.IndexAny(name, ".["); i >= 0 {
		name, tail = name[:i], name[i:]
	}
	obj := Underlying(v)
	field := fieldIndex(obj.Type(), name)
	var val ssa.Value
	if call, ok := obj.(*ssa.Call); ok {
		val = callFieldArg(call, field, 0) // the argument its callee stored there
	} else {
		val = storedField(obj, field, at, 0)
	}
	if val == nil || !named(val) {
		return "", false
	}
	return PathOf(fn, val) + tail, true
}

// fieldIndex is the index of the field called name in the struct t points
// to, or -1.
func fieldIndex(t types.Type, name string) int {
	if st := StructOf(t); st != nil {
		for i := range st.NumFields() {
			if st.Field(i).Name() == name {
				return i
			}
		}
	}
	return -1
}
