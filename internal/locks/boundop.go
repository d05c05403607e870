package locks

import (
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
