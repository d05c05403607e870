package locks

import (
	"go/token"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// A callback is called behind a test that it is set: `if h :=
// a.onChange; h != nil { h(s) }`. That branch is no condition on what
// the call does: with no callback there is nothing to call. So, for the
// call of a func value, the edge its own nil test takes when the value
// is nil is not a way around the call (stepAt), and a callback called
// through two or three guarded hops stays within the bound of
// conditional steps. So is a lock's own object for a Lock: `if in :=
// kv.intents[key]; in != nil { in.mu.Lock() }` takes the lock whenever
// there is one to take.

// nilEdges returns the edges (predecessor, successor index) on which v,
// a called func value, is nil: the branches of Ifs comparing v (or the
// same field of the same object) with nil, or testing the ok of the
// comma-ok type assertion that produced it. nil when there is none.
func nilEdges(fn *ssa.Function, v ssa.Value) map[[2]int]bool {
	return branchEdges(fn, func(_ *ssa.BasicBlock, cond ssa.Value) (int, bool) {
		if assertedOK(cond, v) {
			return 1, true // `cb, ok := x.(func()); if ok { cb() }`: not ok, cb is nil
		}
		cmp, ok := cond.(*ssa.BinOp)
		if !ok || cmp.Op != token.EQL && cmp.Op != token.NEQ {
			return 0, false
		}
		x := cmp.X
		if objects.NilConstant(x) {
			x = cmp.Y
		} else if !objects.NilConstant(cmp.Y) {
			return 0, false
		}
		if !sameFuncValue(x, v) {
			return 0, false
		}
		if cmp.Op == token.EQL {
			return 0, true // v == nil: the true branch
		}
		return 1, true // v != nil false: v is nil
	})
}

// nilEdgesOf is nilEdges, computed once per function and value.
func (e *engine) nilEdgesOf(fn *ssa.Function, v ssa.Value) map[[2]int]bool {
	k := valueIn{fn, v}
	if edges, ok := e.nilTests[k]; ok {
		return edges
	}
	if e.nilTests == nil {
		e.nilTests = map[valueIn]map[[2]int]bool{}
	}
	edges := nilEdges(fn, v)
	e.nilTests[k] = edges
	return edges
}

// sameFuncValue reports whether a and b are one value, or two loads of
// the same field of the same object (`if a.onX != nil { a.onX() }`).
func sameFuncValue(a, b ssa.Value) bool {
	a, b = objects.Underlying(a), objects.Underlying(b)
	if a == b {
		return true
	}
	fa, fb := fieldLoad(a), fieldLoad(b)
	return fa != nil && fb != nil && fa.Field == fb.Field && sameHolder(objects.Underlying(fa.X), objects.Underlying(fb.X))
}

// sameHolder reports whether a and b are one object: one value, or two
// loads of a captured variable the closure never assigns (go/ssa keeps
// a captured variable in a cell, loaded at each use: `if c.onX != nil {
// c.onX() }` in a closure over c).
func sameHolder(a, b ssa.Value) bool {
	if a == b {
		return true
	}
	la, ok1 := a.(*ssa.UnOp)
	lb, ok2 := b.(*ssa.UnOp)
	if !ok1 || !ok2 || la.Op != token.MUL || lb.Op != token.MUL || la.X != lb.X {
		return false
	}
	cell, ok := la.X.(*ssa.FreeVar)
	if !ok {
		return false
	}
	for _, u := range *cell.Referrers() {
		if st, ok := u.(*ssa.Store); ok && st.Addr == cell {
			return false
		}
	}
	return true
}

// assertedOK reports whether cond is the ok of the comma-ok type
// assertion that produced v.
func assertedOK(cond, v ssa.Value) bool {
	ok, isExtract := cond.(*ssa.Extract)
	val, isVal := objects.Underlying(v).(*ssa.Extract)
	if !isExtract || !isVal || ok.Index != 1 || val.Index != 0 || ok.Tuple != val.Tuple {
		return false
	}
	_, assert := ok.Tuple.(*ssa.TypeAssert)
	return assert
}
