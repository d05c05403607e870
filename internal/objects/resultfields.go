package objects

import (
	"go/token"

	"golang.org/x/tools/go/ssa"
)

// maxCallDepth bounds how many calls a result's field is followed through
// (`h := e.newPassiveHandshake()` returns what newHandshake returned).
const maxCallDepth = 3

// callFieldArg returns the argument of call that field of call's result
// holds, when the callee (a function with a body) returns on every path a
// fresh object whose field was stored exactly once, before the return, with
// one and the same parameter: `h := e.newHandshake()` where newHandshake
// returns &handshake{ep: e} makes h.ep the caller's e. Nil otherwise.
func callFieldArg(call *ssa.Call, field, depth int) ssa.Value {
	callee := call.Call.StaticCallee()
	if callee == nil || len(callee.Blocks) == 0 || depth > maxCallDepth || call.Call.Signature().Results().Len() != 1 {
		return nil
	}
	k := -1
	for _, b := range callee.Blocks {
		ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
		if !ok || b == callee.Recover {
			continue
		}
		if len(ret.Results) != 1 {
			return nil
		}
		j := paramIndex(callee, plain(storedField(plain(ret.Results[0]), field, ret, depth)))
		if j < 0 || k >= 0 && j != k {
			return nil
		}
		k = j
	}
	if k < 0 || k >= len(call.Call.Args) {
		return nil
	}
	return call.Call.Args[k]
}

// storedField is the value obj, an object made in at's function (an
// allocation, or a call returning one), holds in field when it was stored
// exactly once before at; nil otherwise.
func storedField(obj ssa.Value, field int, at ssa.Instruction, depth int) ssa.Value {
	switch o := obj.(type) {
	case *ssa.Alloc:
		if IsCell(o) {
			return nil
		}
		store := fieldStore(o, field)
		if store == nil {
			return lastStore(o, field, at, depth)
		}
		if !before(store, at) {
			return nil
		}
		return store.Val
	case *ssa.Call:
		return callFieldArg(o, field, depth+1)
	}
	return nil
}

// fieldStore returns the one store into field of obj in its function, or
// nil when there are several, the field's address escapes, or the whole
// object is overwritten.
func fieldStore(obj *ssa.Alloc, field int) *ssa.Store {
	var store *ssa.Store
	for _, r := range *obj.Referrers() {
		switch u := r.(type) {
		case *ssa.FieldAddr:
			if u.Field != field {
				continue
			}
			for _, rr := range *u.Referrers() {
				switch s := rr.(type) {
				case *ssa.Store:
					if s.Addr != u || store != nil {
						return nil
					}
					store = s
				case *ssa.UnOp, *ssa.DebugRef:
				default:
					return nil // the field's address escapes
				}
			}
		case *ssa.DebugRef:
		case *ssa.Store:
			if u.Addr == obj {
				return nil // the whole object overwritten
			}
		}
	}
	return store
}

// lastStore is the value field of the struct object obj holds at at when
// every store into obj (its field, or the whole object: `cp := src`, `src
// = T{...}`) runs before at on every path (earlier in at's block, or in a
// block dominating it): the last of them; a whole object copied from
// another struct variable holds what that one held when it was copied.
// Nil otherwise.
func lastStore(obj *ssa.Alloc, field int, at ssa.Instruction, depth int) ssa.Value {
	stores, ok := objectStores(obj, field)
	if !ok {
		return nil
	}
	d := LastDef(stores, at)
	if d == nil {
		return nil
	}
	last := d.(*ssa.Store)
	if last.Addr != obj {
		return last.Val
	}
	load, ok := last.Val.(*ssa.UnOp)
	if !ok || load.Op != token.MUL || depth >= maxSteps {
		return nil
	}
	src, ok := load.X.(*ssa.Alloc)
	if !ok || IsCell(src) || !before(load, last) {
		return nil
	}
	return storedField(src, field, load, depth+1)
}

// LastDef is the last of defs that runs before use on every path (in
// use's block before it, or in a dominating block), when no other of defs
// can reach use; nil otherwise. Defs that never precede use are ignored.
func LastDef(defs []ssa.Instruction, use ssa.Instruction) ssa.Instruction {
	var last ssa.Instruction
	for _, d := range defs {
		if !before(d, use) {
			if reachesAgain(d, use) {
				return nil
			}
			continue // a definition use never sees
		}
		if last == nil || before(last, d) {
			last = d
		}
	}
	return last
}

// reachesAgain reports whether control can go from st to at (st not
// before at): a later instruction of at's block on a cycle, or a block
// from which at's block is reachable.
func reachesAgain(st, at ssa.Instruction) bool {
	return BlockReaches(st.Block().Succs, at.Block(), nil)
}

// BlockReaches reports whether a search from the blocks from reaches
// block to without entering a block blocked says no to (nil: none).
func BlockReaches(from []*ssa.BasicBlock, to *ssa.BasicBlock, blocked func(*ssa.BasicBlock) bool) bool {
	return BlockReachesAny(from, blocked, func(b *ssa.BasicBlock) bool { return b == to })
}

// BlockReachesAny reports whether a search from the blocks from reaches
// a block hit accepts, without entering a block blocked says no to (nil:
// none).
func BlockReachesAny(from []*ssa.BasicBlock, blocked, hit func(*ssa.BasicBlock) bool) bool {
	_, found := searchBlocks(from, blocked, hit)
	return found
}

// BlocksFrom returns the blocks a search from the blocks from reaches
// (from included) without entering a block blocked says no to (nil:
// none).
func BlocksFrom(from []*ssa.BasicBlock, blocked func(*ssa.BasicBlock) bool) map[*ssa.BasicBlock]bool {
	seen, _ := searchBlocks(from, blocked, func(*ssa.BasicBlock) bool { return false })
	return seen
}

// searchBlocks walks the blocks reachable from from, depth first, until
// stop says so of one: it returns the blocks walked and whether it
// stopped.
func searchBlocks(from []*ssa.BasicBlock, blocked, stop func(*ssa.BasicBlock) bool) (map[*ssa.BasicBlock]bool, bool) {
	seen := map[*ssa.BasicBlock]bool{}
	stack := append([]*ssa.BasicBlock(nil), from...)
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[b] || blocked != nil && blocked(b) {
			continue
		}
		if stop(b) {
			return seen, true
		}
		seen[b] = true
		stack = append(stack, b.Succs...)
	}
	return seen, false
}

// objectStores lists the stores into field of obj and into obj as a
// whole; ok is false when the field's or the object's address escapes.
func objectStores(obj *ssa.Alloc, field int) (stores []ssa.Instruction, ok bool) {
	for _, r := range *obj.Referrers() {
		switch u := r.(type) {
		case *ssa.Store:
			if u.Addr != obj {
				return nil, false
			}
			stores = append(stores, u)
		case *ssa.FieldAddr:
			if u.Field != field {
				continue
			}
			for _, rr := range *u.Referrers() {
				switch st := rr.(type) {
				case *ssa.Store:
					if st.Addr != u {
						return nil, false
					}
					stores = append(stores, st)
				case *ssa.UnOp, *ssa.DebugRef:
				default:
					return nil, false // the field's address escapes
				}
			}
		case *ssa.UnOp, *ssa.DebugRef: // the whole object read (copied)
		default:
			return nil, false // the object's address escapes: a call may store
		}
	}
	return stores, true
}

// plain is Underlying without following fields read back, so that
// following a call's result cannot recurse without bound.
func plain(v ssa.Value) ssa.Value {
	for range maxSteps {
		if ld, ok := v.(*ssa.UnOp); ok {
			if _, field := ld.X.(*ssa.FieldAddr); field {
				return v
			}
		}
		next := step(v, false)
		if next == nil {
			return v
		}
		v = next
	}
	return v
}
