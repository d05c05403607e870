package locks

import (
	"go/token"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// boundLockOp recognises a call of a lock method taken as a value:
// `unlock := mu.Unlock; defer unlock()`, and a value that is one of
// several such methods of the same lock (`if fill { mu.Lock(); unlock =
// mu.Unlock } else { mu.RLock(); unlock = mu.RUnlock }`, gVisor's
// ReadToBlocks), which releases that lock whichever side ran. It returns
// lockop.None when the value is anything else.
func (e *engine) boundLockOp(call *ssa.CallCommon) (lockop.Op, ssa.Value) {
	if call.IsInvoke() || len(call.Args) != 0 {
		return lockop.None, nil
	}
	var vals []ssa.Value
	switch v := objects.Underlying(call.Value).(type) {
	case *ssa.MakeClosure:
		vals = []ssa.Value{v}
	case *ssa.Phi:
		vals = v.Edges
	default:
		return lockop.None, nil
	}
	return e.boundOpOfAll(vals)
}

// deferredCellOp recognises a deferred literal that only calls the method
// value kept in a variable it captures, the variable assigned one lock
// method value and then another: `unlock := b.RUnlock; defer func() {
// unlock() }()`, later `b.RUnlock(); b.Lock(); unlock = b.Unlock`
// (Vault's database backend upgrading its read lock). Whatever the
// variable holds when the defer runs lets the lock go.
func (e *engine) deferredCellOp(call *ssa.CallCommon) (lockop.Op, ssa.Value) {
	cell, mc := deferredCell(call)
	if cell == nil {
		return lockop.None, nil
	}
	stores, ok := objects.CellStores(cell, func(u *ssa.MakeClosure) bool { return u == mc })
	if !ok || len(stores) == 0 {
		return lockop.None, nil
	}
	vals := make([]ssa.Value, len(stores))
	for i, st := range stores {
		vals[i] = st.Val
	}
	return e.boundOpOfAll(vals)
}

// deferredCell is the variable a literal called with no arguments reads
// and calls, its only work (`func() { unlock() }`), and the literal; nil
// when the call is anything else.
func deferredCell(call *ssa.CallCommon) (*ssa.Alloc, *ssa.MakeClosure) {
	mc, ok := call.Value.(*ssa.MakeClosure)
	if !ok || len(call.Args) != 0 {
		return nil, nil
	}
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok || len(fn.Blocks) != 1 {
		return nil, nil
	}
	var called *ssa.Call
	for _, in := range fn.Blocks[0].Instrs {
		switch x := in.(type) {
		case *ssa.Call:
			if called != nil {
				return nil, nil
			}
			called = x
		case *ssa.UnOp, *ssa.Return, *ssa.DebugRef:
		default:
			return nil, nil
		}
	}
	if called == nil || len(called.Call.Args) != 0 {
		return nil, nil
	}
	load, ok := called.Call.Value.(*ssa.UnOp)
	if !ok || load.Op != token.MUL {
		return nil, nil
	}
	fv, ok := load.X.(*ssa.FreeVar)
	if !ok {
		return nil, nil
	}
	i := slices.Index(fn.FreeVars, fv)
	if i < 0 || i >= len(mc.Bindings) {
		return nil, nil
	}
	cell, ok := mc.Bindings[i].(*ssa.Alloc)
	if !ok {
		return nil, nil
	}
	return cell, mc
}

// boundOpOfAll is the one lock operation the method values vals all make
// on one lock (Unlock when some let go of it by RUnlock and others by
// Unlock), or lockop.None.
func (e *engine) boundOpOfAll(vals []ssa.Value) (lockop.Op, ssa.Value) {
	op, lv, path := lockop.None, ssa.Value(nil), ""
	for _, v := range vals {
		o, l := e.boundMethodOp(v)
		if o == lockop.None || path != "" && pathOf(l.Parent(), l) != path {
			return lockop.None, nil
		}
		if op != lockop.None && o != op {
			if !releases(o) || !releases(op) {
				return lockop.None, nil
			}
			o = lockop.Unlock // Unlock or RUnlock: the lock is let go either way
		}
		op, lv, path = o, l, pathOf(l.Parent(), l)
	}
	return op, lv
}

// boundMethodOp is the lock operation and lock of a method value
// (mu.Unlock as a value), or lockop.None.
func (e *engine) boundMethodOp(v ssa.Value) (lockop.Op, ssa.Value) {
	mc, ok := objects.Underlying(v).(*ssa.MakeClosure)
	if !ok || len(mc.Bindings) != 1 {
		return lockop.None, nil
	}
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok {
		return lockop.None, nil
	}
	m := e.boundMethod(fn)
	if m == nil {
		return lockop.None, nil
	}
	return lockop.Classify(&ssa.CallCommon{Value: m, Args: mc.Bindings})
}

func releases(op lockop.Op) bool { return op == lockop.Unlock || op == lockop.RUnlock }
