package locks

import (
	"go/token"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A loop over a slice of keys that takes each key's lock and keeps it
// held past the iteration (a deferred unlock) holds them all at once, in
// the slice's order. When the slice is made per call (a parameter, what a
// call returns, a literal) and nothing sorts it, that order is the data's:
// two calls at once with the same keys in another order each take one
// first and wait for the other's (ovn-kubernetes' EgressIP locking the
// egress node and the pod's node, in the order of the event). A slice
// kept in a field has one order for everyone (maporder.go's reason), and a
// sorted one is the fix. Not when the lock is only read-locked, nor when
// the function holds another lock exclusively across the loop.

// noteSliceOrder reports h, a key's lock the walked function takes at pos
// (its own Lock on an element, or a helper's acquire given the key in
// args), when it is such a lock.
func (w *walker) noteSliceOrder(h Hold, args []ssa.Value, s State) {
	if !w.report || h.Shared || h.Class == "" || !h.Keyed || w.private(h) {
		return
	}
	for _, a := range args {
		elem, slice, header := sliceRangeElem(a)
		if elem == nil || !perCall(slice) || w.sortedHere(slice) {
			continue
		}
		if w.blk == nil || !loopsBackTo(w.blk, header, elem.Block()) || releasedInLoop(w.e, elem, elem.Block()) {
			continue
		}
		if serializedAcross(h, s, true) {
			return
		}
		what := "the keys in " + sliceName(slice)
		w.reportLoopOrder(h, elem.Pos(), "iterates over "+what, func(fname string) string {
			return "lock order by slice order: " + fname + " takes the " + h.Name + " of each of " + what +
				" and holds them all, in the order the slice's contents give (it is made per call and not sorted): two calls at once with the same keys in another order deadlock"
		})
		return
	}
}

// elementKeys returns the key a keyed lock value is looked up by
// (l.m[k].mu, l.m[k]), or nil.
func elementKeys(lv ssa.Value) []ssa.Value {
	for range maxSymDepth {
		switch x := lv.(type) {
		case *ssa.FieldAddr:
			lv = x.X
		case *ssa.UnOp:
			lv = x.X
		case *ssa.Extract:
			lv = x.Tuple
		case *ssa.Lookup:
			return []ssa.Value{x.Index}
		case *ssa.IndexAddr:
			return []ssa.Value{x.Index}
		default:
			return nil
		}
	}
	return nil
}

// sliceRangeElem returns v as an element of a slice a loop indexes (for
// _, k := range keys): the element's address, the slice and the loop's
// header; nil when it is not one.
func sliceRangeElem(v ssa.Value) (*ssa.IndexAddr, ssa.Value, *ssa.BasicBlock) {
	load, ok := v.(*ssa.UnOp)
	if !ok || load.Op != token.MUL {
		return nil, nil, nil
	}
	ia, ok := load.X.(*ssa.IndexAddr)
	if !ok {
		return nil, nil, nil
	}
	idx := ia.Index
	if b, ok := idx.(*ssa.BinOp); ok && b.Op == token.ADD {
		idx = b.X
	}
	phi, ok := idx.(*ssa.Phi)
	if !ok || !phi.Block().Dominates(ia.Block()) {
		return nil, nil, nil
	}
	return ia, ia.X, phi.Block()
}

// perCall reports whether slice is made for this call: a parameter, a
// call's result, or a slice of a local array (a literal), not a field's
// or a package variable's, whose order is the same for every caller.
func perCall(slice ssa.Value) bool {
	switch x := slice.(type) {
	case *ssa.Parameter, *ssa.Call:
		return true
	case *ssa.Slice:
		_, local := x.X.(*ssa.Alloc)
		return local
	}
	return false
}

// sortedHere reports whether the walked function, or the function whose
// result slice is, sorts something: the slice is then in a fixed order.
func (w *walker) sortedHere(slice ssa.Value) bool {
	if sorts(w.fn) {
		return true
	}
	if c, ok := slice.(*ssa.Call); ok {
		if fn := c.Call.StaticCallee(); fn != nil && sorts(fn) {
			return true
		}
	}
	return false
}

// sorts reports whether fn calls a sort of the sort or slices package.
func sorts(fn *ssa.Function) bool {
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			c, ok := instr.(ssa.CallInstruction)
			if !ok {
				continue
			}
			callee := c.Common().StaticCallee()
			if callee == nil || callee.Object() == nil || callee.Object().Pkg() == nil {
				continue // an instance of a generic sort has its origin's object
			}
			switch callee.Object().Pkg().Path() {
			case "sort":
				return true
			case "slices":
				if strings.HasPrefix(callee.Name(), "Sort") {
					return true
				}
			}
		}
	}
	return false
}

// releasedInLoop reports whether the loop body releases a lock without
// a defer: any unlock, or a call whose summary releases one (the key's
// lock is not named by the element's value: `m[k].Unlock()`, `UnlockKey(k)`).
func releasedInLoop(e *engine, elem *ssa.IndexAddr, body *ssa.BasicBlock) bool {
	return releasedIn(e, elem.Parent(), body, func(*ssa.CallCommon) bool { return true })
}

// sliceName renders the slice a loop is over: a variable's name, or
// "a slice".
func sliceName(v ssa.Value) string {
	if name := sourceName(v); name != unnamed {
		return name
	}
	if c, ok := v.(*ssa.Call); ok {
		if fn := c.Call.StaticCallee(); fn != nil {
			return "what " + fn.Name() + " returns"
		}
	}
	return "a slice"
}
