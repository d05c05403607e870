package objects

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// A local variable assigned more than once, or inside a closure run in
// place (`p := tc; func() { p = other }()`), is a cell with several
// stores. The value a load sees is the last store that runs before it on
// every path, a call of such a closure counting as the closure's store.

// maxDefs bounds the definitions of one cell looked at: a variable
// assigned more often than this is not followed.
const maxDefs = 8

// reachingCell returns the value the variable cell holds at load: the
// last of its definitions that runs before load on every path, when every
// other definition cannot reach load; nil when that is not known (the
// cell escapes, a closure assigns it conditionally, or two definitions
// meet at a join).
func reachingCell(cell *ssa.Alloc, load ssa.Instruction, depth int) ssa.Value {
	defs, ok := cellDefs(cell)
	if !ok || len(defs) > maxDefs || depth >= maxSteps {
		return nil
	}
	switch d := LastDef(defs, load).(type) {
	case *ssa.Store:
		return d.Val
	case *ssa.Call:
		return closureStoredValue(d, cell, depth)
	}
	return nil
}

// cellDefs lists the instructions that may write cell: its stores, and
// the calls of closures run in place that capture it or are given its
// address and store into it. ok is false when the cell's address goes
// anywhere else.
func cellDefs(cell *ssa.Alloc) (defs []ssa.Instruction, ok bool) {
	for _, r := range *cell.Referrers() {
		switch u := r.(type) {
		case *ssa.Store:
			if u.Addr != cell {
				return nil, false
			}
			defs = append(defs, u)
		case *ssa.UnOp:
			if u.Op != token.MUL {
				return nil, false
			}
		case *ssa.DebugRef:
		case *ssa.MakeClosure:
			// A closure that reads the cell names it by its free
			// variable, which knows nothing of these definitions: keep
			// both sides unresolved, as one path.
			reads, writes := closureUses(u, cell)
			if reads {
				return nil, false
			}
			if !writes {
				continue
			}
			calls, ok := inPlaceCalls(u)
			if !ok {
				return nil, false
			}
			defs = append(defs, calls...)
		case *ssa.Call:
			fn, inner, _ := calleeCell(u, cell)
			if fn == nil || fn.Parent() == nil {
				return nil, false // the address given to a function not seen here
			}
			if !onlyStored(inner) {
				return nil, false // read through there too (see closureUses above)
			}
			defs = append(defs, u)
		default:
			return nil, false
		}
	}
	return defs, true
}

// onlyStored reports whether a closure's parameter holding a cell's
// address is only stored through.
func onlyStored(addr ssa.Value) bool {
	for _, r := range *addr.Referrers() {
		switch r.(type) {
		case *ssa.Store, *ssa.DebugRef:
		default:
			return false
		}
	}
	return true
}

// inPlaceCalls returns the calls of the closure mc when it is only
// called (never stored, passed or deferred).
func inPlaceCalls(mc *ssa.MakeClosure) ([]ssa.Instruction, bool) {
	var calls []ssa.Instruction
	for _, r := range *mc.Referrers() {
		c, ok := r.(*ssa.Call)
		if !ok || c.Call.Value != mc {
			if _, dbg := r.(*ssa.DebugRef); dbg {
				continue
			}
			return nil, false
		}
		calls = append(calls, c)
	}
	return calls, true
}

// closureStoredValue is what the closure called by call leaves in cell
// (captured by it, or given as an argument): the value of its one store
// into it when that store is in its entry block (made on every run),
// translated into the caller's values; nil otherwise.
func closureStoredValue(call *ssa.Call, cell *ssa.Alloc, depth int) ssa.Value {
	fn, inner, binds := calleeCell(call, cell)
	if inner == nil {
		return nil
	}
	var store *ssa.Store
	for _, r := range *inner.Referrers() {
		switch u := r.(type) {
		case *ssa.Store:
			if u.Addr != inner || store != nil {
				return nil
			}
			store = u
		case *ssa.UnOp, *ssa.DebugRef:
		default:
			return nil
		}
	}
	if store == nil || store.Block() != fn.Blocks[0] {
		return nil
	}
	return intoCaller(fn, store.Val, call, binds, depth)
}

// calleeCell names cell inside the closure call runs: its free variable
// or parameter; binds are the closure's bindings (nil for a literal
// called directly).
func calleeCell(call *ssa.Call, cell *ssa.Alloc) (*ssa.Function, ssa.Value, []ssa.Value) {
	if mc, ok := call.Call.Value.(*ssa.MakeClosure); ok {
		fn, _ := mc.Fn.(*ssa.Function)
		for i, b := range mc.Bindings {
			if b == cell && fn != nil && i < len(fn.FreeVars) {
				return fn, fn.FreeVars[i], mc.Bindings
			}
		}
		for i, a := range call.Call.Args {
			if a == cell && fn != nil && i < len(fn.Params) {
				return fn, fn.Params[i], mc.Bindings
			}
		}
		return nil, nil, nil
	}
	fn, _ := call.Call.Value.(*ssa.Function)
	for i, a := range call.Call.Args {
		if a == cell && fn != nil && i < len(fn.Params) {
			return fn, fn.Params[i], nil
		}
	}
	return nil, nil, nil
}

// intoCaller translates v, a value of the closure fn, into the caller's
// value at call: a free variable is its binding, a parameter the
// argument, a load of a captured cell what that cell holds at the call.
func intoCaller(fn *ssa.Function, v ssa.Value, call *ssa.Call, binds []ssa.Value, depth int) ssa.Value {
	switch x := v.(type) {
	case *ssa.FreeVar:
		for i, f := range fn.FreeVars {
			if f == x && i < len(binds) {
				return binds[i]
			}
		}
	case *ssa.Parameter:
		for i, p := range fn.Params {
			if p == x && i < len(call.Call.Args) {
				return call.Call.Args[i]
			}
		}
	case *ssa.Global, *ssa.Const:
		return v
	case *ssa.UnOp:
		if x.Op != token.MUL {
			return nil
		}
		outer, ok := intoCaller(fn, x.X, call, binds, depth).(*ssa.Alloc)
		if !ok || !IsCell(outer) {
			return nil
		}
		if v := StoredOnce(outer); v != nil {
			return v
		}
		return reachingCell(outer, call, depth+1)
	}
	return nil
}

// StoredAt is the value the variable cell holds at at: its last store
// before at on every path, when only stores write it (closures may read
// it, as a deferred `func() { unlock() }` does); nil otherwise.
func StoredAt(cell *ssa.Alloc, at ssa.Instruction) ssa.Value {
	stores, ok := CellStores(cell, func(mc *ssa.MakeClosure) bool {
		_, writes := closureUses(mc, cell)
		return !writes
	})
	if !ok || len(stores) > maxDefs {
		return nil
	}
	defs := make([]ssa.Instruction, len(stores))
	for i, st := range stores {
		defs[i] = st
	}
	if st, ok := LastDef(defs, at).(*ssa.Store); ok {
		return st.Val
	}
	return nil
}

// CellStores lists the stores into the variable cell when nothing else
// writes it: its other uses are loads and the closures admit accepts.
func CellStores(cell *ssa.Alloc, admit func(*ssa.MakeClosure) bool) ([]*ssa.Store, bool) {
	var stores []*ssa.Store
	for _, r := range *cell.Referrers() {
		switch u := r.(type) {
		case *ssa.Store:
			if u.Addr != cell {
				return nil, false
			}
			stores = append(stores, u)
		case *ssa.UnOp:
			if u.Op != token.MUL {
				return nil, false
			}
		case *ssa.DebugRef:
		case *ssa.MakeClosure:
			if !admit(u) {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	return stores, true
}

// CalledCell is the function a call through a func variable calls
// (`unlock()`, the variable assigned `func() { mu.Unlock() }` and later
// `func() {}`): what StoredAt says the variable holds there, or nil.
func CalledCell(v ssa.Value) ssa.Value {
	load, ok := v.(*ssa.UnOp)
	if !ok || load.Op != token.MUL {
		return nil
	}
	cell, ok := load.X.(*ssa.Alloc)
	if !ok {
		return nil
	}
	if _, fn := cell.Type().(*types.Pointer).Elem().Underlying().(*types.Signature); !fn {
		return nil
	}
	return StoredAt(cell, load)
}
