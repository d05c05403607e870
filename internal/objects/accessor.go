package objects

import (
	"go/token"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// A lookup accessor (`func (dm *DMap) getFragment(hkey uint64) *fragment`)
// finds an object kept in its receiver's containers by a key: two calls
// with the same receiver and key return one object, so the caller's
// `dm.getFragment(k).RLock()` and a callee's `dm.getFragment(k).Lock()`
// name one lock (olric's lazy eviction under the fragment's read lock).
// The call is named as a selection on the receiver, then the key as a map
// key: p0.getFragment()[k:p1]; the key rewrites across calls as any index.
//
// An accessor qualifies when nothing in it can make two calls differ:
// every result is read from memory, or created and stored where the next
// call reads it; it stores only into maps and objects it made, and calls
// nothing but lock operations and other accessors.

// accessorCall returns, for a call of a lookup accessor of fn's package,
// the receiver (first argument) and the part naming the call.
func accessorCall(fn *ssa.Function, call *ssa.Call) (ssa.Value, Part, bool) {
	callee := call.Call.StaticCallee()
	args := call.Call.Args
	if callee == nil || fn == nil || callee.Pkg != fn.Pkg || len(args) == 0 || len(args) > 2 {
		return nil, Part{}, false
	}
	if StructOf(call.Type()) == nil || !IsAccessor(callee) {
		return nil, Part{}, false
	}
	return args[0], Part{Name: callee.Name() + "()", Base: NamedOf(args[0].Type()), Deref: true}, true
}

var accessors pkgCache[token.Pos, bool] // by the function's position

// IsAccessor reports whether fn is a lookup accessor (see accessorCall).
func IsAccessor(fn *ssa.Function) bool {
	if fn.Pkg == nil || !fn.Pos().IsValid() {
		return isAccessor(fn, 0)
	}
	if ok, seen := accessors.load(fn.Pkg, fn.Pos()); seen {
		return ok
	}
	ok := isAccessor(fn, 0)
	accessors.store(fn.Pkg, fn.Pos(), ok)
	return ok
}

const maxAccessorDepth = 3

func isAccessor(fn *ssa.Function, depth int) bool {
	if depth > maxAccessorDepth || len(fn.Blocks) == 0 || len(fn.FreeVars) > 0 ||
		fn.Signature.Results().Len() != 1 {
		return false
	}
	read := false
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			switch x := instr.(type) {
			case *ssa.Store:
				if !intoLocal(x.Addr) {
					return false
				}
			case *ssa.Defer:
				if op, _ := lockop.Classify(x.Common()); op == 0 || op.Acquires() {
					return false // only a deferred unlock
				}
			case *ssa.Go, *ssa.Select, *ssa.Send:
				return false
			case *ssa.Call:
				if !allowedInAccessor(x, depth) {
					return false
				}
			case *ssa.UnOp:
				if x.Op == token.ARROW {
					return false
				}
			case *ssa.Return:
				switch resultKind(x.Results[0]) {
				case resultFresh:
					return false
				case resultRead:
					read = true
				}
			}
		}
	}
	return read
}

func allowedInAccessor(call *ssa.Call, depth int) bool {
	if _, ok := call.Call.Value.(*ssa.Builtin); ok {
		return true
	}
	if op, _ := lockop.Classify(&call.Call); op != 0 {
		return true
	}
	callee := call.Call.StaticCallee()
	return callee != nil && callee.Pkg == call.Parent().Pkg && isAccessor(callee, depth+1)
}

type resultOrigin int

const (
	resultNil   resultOrigin = iota // nil: no object
	resultKept                      // made here and kept where the next call reads it
	resultRead                      // read from memory, or from another accessor
	resultFresh                     // made here and not kept: each call differs
)

// resultKind classifies a returned value, through phis.
func resultKind(v ssa.Value) resultOrigin {
	seen := map[ssa.Value]bool{}
	var visit func(v ssa.Value) resultOrigin
	visit = func(v ssa.Value) resultOrigin {
		if seen[v] {
			return resultNil
		}
		seen[v] = true
		switch x := v.(type) {
		case *ssa.Phi:
			kind := resultNil
			for _, e := range x.Edges {
				k := visit(e)
				if k == resultFresh {
					return resultFresh
				}
				kind = max(kind, k)
			}
			return kind
		case *ssa.Const:
			return resultNil
		case *ssa.UnOp:
			if cell, ok := x.X.(*ssa.Alloc); ok && !cell.Heap {
				return cellKind(cell, visit) // a result kept for the deferred calls
			}
			return resultRead
		case *ssa.Lookup, *ssa.Index, *ssa.Field:
			return resultRead
		case *ssa.Extract:
			if _, ok := x.Tuple.(*ssa.Lookup); ok && x.Index == 0 {
				return resultRead
			}
		case *ssa.Call:
			return resultRead // allowedInAccessor checked the callee
		case *ssa.Alloc:
			if keptInMap(x) {
				return resultKept // the miss side of a lookup, not a lookup itself
			}
		}
		return resultFresh
	}
	return visit(v)
}

// cellKind classifies what is stored into a local cell.
func cellKind(cell *ssa.Alloc, visit func(ssa.Value) resultOrigin) resultOrigin {
	kind := resultNil
	for _, r := range *cell.Referrers() {
		if st, ok := r.(*ssa.Store); ok && st.Addr == ssa.Value(cell) {
			k := visit(st.Val)
			if k == resultFresh {
				return resultFresh
			}
			kind = max(kind, k)
		}
	}
	return kind
}

// keptInMap reports whether a fresh object is stored as a map's value,
// where the next lookup finds it.
func keptInMap(a *ssa.Alloc) bool {
	for _, r := range *a.Referrers() {
		if u, ok := r.(*ssa.MapUpdate); ok && u.Value == ssa.Value(a) {
			return true
		}
	}
	return false
}

// intoLocal reports whether a store's address selects into an object the
// function allocated.
func intoLocal(addr ssa.Value) bool {
	for {
		switch x := addr.(type) {
		case *ssa.FieldAddr:
			addr = x.X
		case *ssa.IndexAddr:
			addr = x.X
		case *ssa.Alloc:
			return true
		default:
			return false
		}
	}
}
