package locks

import (
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// A method that returns a TryLock's result (gVisor's Endpoint.TryLock:
// `return e.mu.TryLock()`, declared +checklocksacquire:e.mu) locks exactly
// when it reports true. At its call sites the lock is held on the branch
// where the result is true, as for TryLock itself; its declared acquire is
// not applied unconditionally (that made `if !ep.TryLock() { return }`
// a leak and the Lock in the failure branch a double lock).

// tryLockOf is a bool function's TryLock: the operation and the lock's
// path in fn when every return returns a TryLock's result on a lock of a
// parameter (or the receiver).
type tryLockOf struct {
	op    lockop.Op
	path  string
	class string
	name  string
}

// tryWrapper returns fn's TryLock if fn is such a wrapper. Cached.
func (e *engine) tryWrapper(fn *ssa.Function) (tryLockOf, bool) {
	if fn == nil {
		return tryLockOf{}, false
	}
	if t, ok := e.tryWrappers[fn]; ok {
		return t, t.op != lockop.None
	}
	t := e.findTryWrapper(fn)
	e.tryWrappers[fn] = t
	return t, t.op != lockop.None
}

func (e *engine) findTryWrapper(fn *ssa.Function) tryLockOf {
	res := fn.Signature.Results()
	if res.Len() != 1 || !types.Identical(res.At(0).Type().Underlying(), types.Typ[types.Bool]) {
		return tryLockOf{}
	}
	var found tryLockOf
	for _, b := range fn.Blocks {
		ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return)
		if !ok {
			continue
		}
		call, ok := ret.Results[0].(*ssa.Call)
		if !ok {
			return tryLockOf{}
		}
		op, lv := lockop.Classify(call.Common())
		if op != lockop.TryLock && op != lockop.TryRLock || lv == nil {
			return tryLockOf{}
		}
		path := pathOf(fn, lv)
		if root, _ := rootOf(path); paramIndex(root, "p") < 0 || found.op != lockop.None && found.path != path {
			return tryLockOf{}
		}
		v := lockop.ClassOf(lv)
		found = tryLockOf{op: op, path: path, class: lockop.ClassKey(v), name: lockop.ShortName(v)}
	}
	return found
}

// wrapperTryHold is the lock call, a call of a TryLock wrapper, takes when
// it returns true, as a hold of the caller; ok is false for other calls.
func (w *walker) wrapperTryHold(call *ssa.Call) (Hold, bool) {
	callee := call.Common().StaticCallee()
	tl, ok := w.e.tryWrapper(callee)
	if !ok {
		return Hold{}, false
	}
	t := target{fn: callee, vals: call.Common().Args, exact: true}
	p, ok := w.calleePath(&t, tl.path)
	if !ok {
		return Hold{}, false
	}
	return Hold{Path: p, Class: tl.class, Name: tl.name, Shared: tl.op.Shared(), Pos: call.Pos(), Try: true}, true
}
