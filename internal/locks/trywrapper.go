package locks

import (
	"go/constant"
	"go/types"
	"slices"

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

// A bool function that locks and reports whether it kept the lock
// (`func (p *Pool) lockIfOpen() bool { p.mu.Lock(); if p.closed {
// p.mu.Unlock(); return false }; return true }`) is a TryLock too: every
// return gives a constant, the lock is held on each `return true` and
// released on each `return false`. Callers hold it where the result is
// true; it is no leak at the true returns.

// boolTryAcquired finds the walked function's lock of that kind, from its
// return states, and records it as the function's TryLock. A function
// that declares its lock effects is checked against them instead, as
// checklocks does (a bool function that returns with an extra lock held
// on true is an incompatible return state there).
func (w *walker) boolTryAcquired() (tryLockOf, bool) {
	if len(items(w.e.p.FuncDecl(w.fn))) > 0 {
		return tryLockOf{}, false
	}
	trues, falses, ok := w.boolReturns()
	if !ok {
		return tryLockOf{}, false
	}
	for _, h := range trues[0].state.holds {
		if h.Maybe || h.Class == "" || !portable(h.Path) {
			continue
		}
		if root, _ := rootOf(h.Path); paramIndex(root, "p") < 0 {
			continue
		}
		if _, atEntry := w.entry.find(h.Path); atEntry || !heldIn(trues, h.Path) || heldAnyIn(falses, h.Path) || retakenIn(trues, h.Path) {
			continue
		}
		op := lockop.TryLock
		if h.Shared {
			op = lockop.TryRLock
		}
		t := tryLockOf{op: op, path: h.Path, class: h.Class, name: h.Name}
		w.e.tryWrappers[w.fn] = t
		return t, true
	}
	return tryLockOf{}, false
}

// resultSaysHeld reports whether path is held exactly where the walked
// function, a TryLock of another lock (boolTryAcquired), reports true:
// taken along with it. kubeedge's DTContext.Lock(id) read-locks the
// context and locks the device's mutex it looks up, both only when the
// device is known; the device's mutex has no path a caller could name.
// A bool function that keeps only such a lock (a list walk returning
// true with the found node locked) is no TryLock: an inconsistent return.
func (w *walker) resultSaysHeld(path string) bool {
	if t, ok := w.e.tryWrappers[w.fn]; !ok || t.op == lockop.None {
		return false
	}
	trues, falses, ok := w.boolReturns()
	return ok && heldIn(trues, path) && !heldAnyIn(falses, path)
}

// boolReturns splits the walked function's returns into those that
// return the constant true and those that return false; ok is false
// unless fn has one bool result, constant at every return, both ways.
func (w *walker) boolReturns() (trues, falses []retState, ok bool) {
	res := w.fn.Signature.Results()
	if res.Len() != 1 || !types.Identical(res.At(0).Type().Underlying(), types.Typ[types.Bool]) {
		return nil, nil, false
	}
	for _, r := range w.rets {
		c, ok := r.ret.Results[0].(*ssa.Const)
		if !ok || c.Value == nil {
			return nil, nil, false
		}
		if constant.BoolVal(c.Value) {
			trues = append(trues, r)
		} else {
			falses = append(falses, r)
		}
	}
	return trues, falses, len(trues) > 0 && len(falses) > 0
}

// tryLocksAt reports whether the walked function is a TryLock of the
// lock at path (a wrapper, or a bool function that keeps it on true).
func (w *walker) tryLocksAt(path string) bool {
	t, ok := w.e.tryWrappers[w.fn]
	return ok && t.op != lockop.None && t.path == path
}

// heldIn reports whether every return state of rets holds path for sure.
func heldIn(rets []retState, path string) bool {
	for _, r := range rets {
		if h, held := r.state.find(path); !held || h.Maybe {
			return false
		}
	}
	return true
}

// retakenIn reports whether some return of rets holds path again after
// letting go of the caller's hold of it: a helper that unlocks its
// caller's lock around some work and locks it again before it reports
// true (nats' flushOutbound) is no TryLock; its false returns never let
// the lock go.
func retakenIn(rets []retState, path string) bool {
	for _, r := range rets {
		if slices.Contains(r.state.outerRel, path) {
			return true
		}
	}
	return false
}

// heldAnyIn reports whether some return state of rets may hold path.
func heldAnyIn(rets []retState, path string) bool {
	for _, r := range rets {
		if _, held := r.state.find(path); held {
			return true
		}
	}
	return false
}

// resultDiscarded reports whether the call being walked is a statement
// whose result nobody reads. A TryLock wrapper called that way
// (kubeedge's DTContext.Lock(id), which locks the device if it is known)
// is taken by its caller for a plain lock: it goes on as if the lock
// were held.
func (w *walker) resultDiscarded() bool {
	c, ok := w.at.(*ssa.Call)
	if !ok {
		return false
	}
	for _, ref := range *c.Referrers() {
		if _, debug := ref.(*ssa.DebugRef); !debug {
			return false
		}
	}
	return true
}
