package locks

import (
	"go/constant"
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// A function that takes a lock and lets a deferred literal release it
// only when the function fails,
//
//	func (c *Container) prepare() (retErr error) {
//		c.lock.Lock()
//		defer func() {
//			if retErr != nil {
//				c.lock.Unlock()
//			}
//		}()
//
// returns holding the lock exactly on success: an acquire on success
// (tryacquire.go). The literal's branch reads the named result, so at
// each return it is decided by what that return gives: nil keeps the
// lock, an error known not nil lets it go, and a value the walk cannot
// tell (`return ctx.Err()`) keeps it held where the result is nil.

// resultGuard is a deferred literal's test of a named result: the
// literal's input that reads it and the result's load at the return.
type resultGuard struct {
	in   input
	load ssa.Value // the return's value of the result
}

// resultGuardOf finds, for the deferred call d replayed at the return
// after rd, the literal's test of a named result slot of the walked
// function against nil.
func (w *walker) resultGuardOf(d *ssa.Defer, rd ssa.Instruction) (resultGuard, bool) {
	mc, ok := d.Call.Value.(*ssa.MakeClosure)
	if !ok {
		return resultGuard{}, false
	}
	fn, ok := mc.Fn.(*ssa.Function)
	if !ok {
		return resultGuard{}, false
	}
	ret := returnAfter(rd)
	if ret == nil {
		return resultGuard{}, false
	}
	for _, in := range w.e.testedInputs(fn) {
		if !in.free || in.asserted != nil || in.index >= len(mc.Bindings) {
			continue
		}
		slot, ok := mc.Bindings[in.index].(*ssa.Alloc)
		if !ok {
			continue
		}
		for _, r := range ret.Results {
			if ld, ok := r.(*ssa.UnOp); ok && ld.Op == token.MUL && ld.X == slot && types.Identical(ld.Type(), types.Universe.Lookup("error").Type()) {
				return resultGuard{in: in, load: ld}, true
			}
		}
	}
	return resultGuard{}, false
}

// returnAfter is the Return ending rd's block, when rd is the block's
// RunDefers.
func returnAfter(rd ssa.Instruction) *ssa.Return {
	if _, ok := rd.(*ssa.RunDefers); !ok || rd.Block() == nil {
		return nil
	}
	instrs := rd.Block().Instrs
	ret, _ := instrs[len(instrs)-1].(*ssa.Return)
	return ret
}

// guardedDeferCall replays the deferred literal call under s, its test of
// the named result decided by what this return stores there (g).
func (w *walker) guardedDeferCall(call *ssa.CallCommon, g resultGuard, pos token.Pos, s State) State {
	nilFact := fact{key: g.in.key, val: nilConst}
	errFact := fact{key: g.in.key + "!=nil", val: constant.MakeBool(true)}
	switch w.nilOrNot(resultSlotValue(g.load), s) {
	case isNil:
		return w.callWithFacts(call, pos, s, nilFact)
	case notNil:
		return w.callWithFacts(call, pos, s, errFact)
	}
	// Either: the success side runs, and what only the failure side lets
	// go stays held where the result is nil.
	kept := w.callWithFacts(call, pos, s, nilFact)
	key := w.condKey(g.load)
	ts := w.targets(call)
	if key == "" || len(ts) != 1 || !ts[0].exact {
		return kept
	}
	t := ts[0]
	w.deferFacts = []fact{errFact}
	failed := w.summaryFor(&t, s)
	w.deferFacts = nil
	if failed == nil {
		return kept
	}
	for _, r := range failed.releases {
		p, ok := w.calleePath(&t, r.Path)
		if !ok {
			continue
		}
		if h, held := kept.find(p); held && !h.Maybe {
			h.Maybe = true
			h.untag()
			h.tagKey, h.tagVal, h.tagNeg = key, nilConst, false
			kept = kept.with(h)
		}
	}
	return kept
}

// callWithFacts is w.call with what the walk knows of the called
// literal's test of a result (summaryFor).
func (w *walker) callWithFacts(call *ssa.CallCommon, pos token.Pos, s State, f fact) State {
	w.deferFacts = []fact{f}
	s = w.call(call, pos, s)
	w.deferFacts = nil
	return s
}

type nilKnown int

const (
	unknownNil nilKnown = iota
	isNil
	notNil
)

// nilOrNot says whether v, an error a return gives, is nil, surely not
// nil (made here, or a value the walk's branches found not nil), or
// either.
func (w *walker) nilOrNot(v ssa.Value, s State) nilKnown {
	if n, known := nilness(v); known {
		if n {
			return isNil
		}
		return notNil
	}
	if w.testedNotNil(v, s) {
		return notNil
	}
	if c, ok := v.(*ssa.Call); ok && madeError(c) {
		return notNil
	}
	return unknownNil
}
