package objects

import "golang.org/x/tools/go/ssa"

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
		if store == nil || !before(store, at) {
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
