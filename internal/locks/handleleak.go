package locks

import (
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// A function that returns a handle and an error, and takes a lock that
// only the handle's methods release (containerd's StartCollection: the
// collection context it returns unlocks the manager on Finish or
// Cancel), leaks the lock on a failure return that gives no handle: the
// caller gets an error and nothing that can release the lock. Such a
// function holds the lock on every return, so it is inferred as a lock
// helper and no other rule sees the failure path. Not reported when a
// caller in the package unlocks the lock itself (it may do so when the
// call fails).

// reportHandleLeaks reports, for each lock held on every return, the
// failure returns without a handle (see above).
func (w *walker) reportHandleLeaks(count map[string]int) {
	idx, successNil, ok := successResult(w.fn.Signature)
	if !w.report || !ok || !successNil || idx == 0 || len(w.rets) < 2 {
		return
	}
	handle := w.handleType()
	if handle == nil {
		return
	}
	for _, h := range w.rets[0].state.holds {
		if count[h.Path] != len(w.rets) || h.Maybe || h.Try || h.Class == "" || !portable(h.Path) || w.fresh(h.Path) {
			continue
		}
		if _, atEntry := w.entry.find(h.Path); atEntry || !w.e.onlyReleasedBy(h.Class, handle) || w.e.callerUnlocks(w.fn, h.Class) {
			continue
		}
		for _, r := range w.rets {
			if r.ret == nil || !nilConstant(r.ret.Results[0]) {
				continue
			}
			if isNil, known := nilness(r.ret.Results[idx]); known && isNil {
				continue // success without a handle: not this rule's
			}
			w.e.find(r.pos, "lock-leak", h.Name+" taken at "+w.e.at(h.Pos)+" is still held on this failure return, which gives the caller no "+handle.Obj().Name()+": only its methods release "+h.Name,
				takenHops(h)...)
		}
	}
}

// handleType is the named type of the fresh object every success return
// of fn gives as its first result, nil when there is none or they differ.
func (w *walker) handleType() *types.Named {
	var out *types.Named
	idx, _, _ := successResult(w.fn.Signature)
	for _, r := range w.rets {
		if r.ret == nil {
			return nil
		}
		if isNil, known := nilness(r.ret.Results[idx]); !known || !isNil {
			continue // a failure return
		}
		a, ok := objects.Underlying(r.ret.Results[0]).(*ssa.Alloc)
		if !ok {
			return nil
		}
		n := namedOf(a.Type())
		if n == nil || out != nil && n != out {
			return nil
		}
		out = n
	}
	return out
}

func namedOf(t types.Type) *types.Named {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, _ := types.Unalias(t).(*types.Named)
	return n
}

var nilConstant = objects.NilConstant

// onlyReleasedBy reports whether some function of the package releases
// class for its caller, and every such function is a method of handle
// (or a closure in one).
func (e *engine) onlyReleasedBy(class string, handle *types.Named) bool {
	found := false
	for _, fn := range e.p.Funcs {
		info := e.infos[fn]
		if info == nil || !slices.ContainsFunc(info.releases, func(h Hold) bool { return h.Class == class }) {
			continue
		}
		outer := fn
		for outer.Parent() != nil {
			outer = outer.Parent()
		}
		recv := outer.Signature.Recv()
		if recv == nil || namedOf(recv.Type()) != handle {
			return false
		}
		found = true
	}
	return found
}

// callerUnlocks reports whether a function of the package that calls fn
// unlocks class itself.
func (e *engine) callerUnlocks(fn *ssa.Function, class string) bool {
	for _, call := range e.objs.CallsOf(fn) {
		for _, b := range call.Parent().Blocks {
			for _, instr := range b.Instrs {
				c, ok := instr.(ssa.CallInstruction)
				if !ok {
					continue
				}
				if op, lv := e.classify(c.Common()); (op == lockop.Unlock || op == lockop.RUnlock) && lockop.ClassKey(lockop.ClassOf(lv)) == class {
					return true
				}
			}
		}
	}
	return false
}
