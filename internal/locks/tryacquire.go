package locks

import (
	"go/constant"
	"go/token"
	"go/types"
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// A function that takes a lock, releases it on every error path and
// returns holding it on success (bbolt's beginTx: the read lock goes with
// the transaction it returns) acquires on success, Clang's TRY_ACQUIRE:
// not a leak. Success is a nil error (the last result, of type error) or,
// without an error result, a non-nil first result. At call sites the lock
// is held exactly where the caller's test of that result says success.

// tryAcquire is a lock held after a call exactly when result Result is
// nil (Nil) or not nil.
type tryAcquire struct {
	Hold
	Result int
	Nil    bool
}

// nilConst stands for the nil constant in condition facts (cond.go).
var nilConst = constant.MakeString("\x00nil")

// successResult returns which result tells success and whether success
// is its being nil; ok is false for functions without such a result.
func successResult(sig *types.Signature) (int, bool, bool) {
	res := sig.Results()
	if res.Len() == 0 {
		return 0, false, false
	}
	last := res.At(res.Len() - 1).Type()
	if types.Identical(last, types.Universe.Lookup("error").Type()) {
		return res.Len() - 1, true, true
	}
	switch res.At(0).Type().Underlying().(type) {
	case *types.Pointer, *types.Interface:
		return 0, false, true
	}
	return 0, false, false
}

// tryAcquired returns the locks fn holds on its success returns and has
// released on its failure returns, every return being one or the other.
func (w *walker) tryAcquired() []tryAcquire {
	idx, successNil, ok := successResult(w.fn.Signature)
	if !ok || len(w.rets) < 2 {
		return nil
	}
	var out []tryAcquire
	// Candidates come from every return: a lock held on failure paths
	// only is none, and held on the first return is not all there is.
	for _, r := range w.rets {
		for _, cand := range r.state.holds {
			if _, atEntry := w.entry.find(cand.Path); atEntry || cand.Try || !portable(cand.Path) && !w.keyedEffect(cand) || hasTry(out, byClass(cand).Path) {
				continue
			}
			if w.heldOnSuccessOnly(cand.Path, idx, successNil) {
				h := byClass(cand) // a lock table's lock: by its class (keyed.go)
				h.Maybe, h.Loop = false, false
				h.untag()
				out = append(out, tryAcquire{Hold: h, Result: idx, Nil: successNil})
			}
		}
	}
	return out
}

func hasTry(ts []tryAcquire, path string) bool {
	for _, t := range ts {
		if t.Path == path {
			return true
		}
	}
	return false
}

// heldOnSuccessOnly reports whether on every return path the lock is held
// if and only if the function reports success, with at least one of each.
func (w *walker) heldOnSuccessOnly(path string, idx int, successNil bool) bool {
	succ, fail := 0, 0
	for _, r := range w.rets {
		success, failure, ok := outcome(r, idx, successNil)
		if !ok {
			return false
		}
		h, held := r.state.find(path)
		switch {
		case !held && failure && !forwardsCallResult(r, idx):
			fail++
		case held && !h.Maybe && success:
			succ++
		case held && h.Maybe && h.tagKey != "" && h.tagKey == w.condKey(r.ret.Results[idx]) &&
			h.tagNeg != successNil && sameConst(h.tagVal, nilConst):
			succ++ // a callee's try-acquire, passed on with its result
		default:
			return false
		}
	}
	return succ > 0 && fail > 0
}

// handedWithResult reports whether the walked function, which returns a
// handle and an error, holds path exactly on its success returns, path
// being a lock its callers cannot name (rancher's CacheFor read-locks an
// informer's stopMutex, looked up in a map, and returns the cache that
// holds the informer, whose Close lets it go): the lock goes with the
// handle, an acquire on success tryAcquired cannot record. A function
// that returns only an error hands nothing over: its returns must agree.
func (w *walker) handedWithResult(path string) bool {
	res := w.fn.Signature.Results()
	if res.Len() < 2 || portable(path) {
		return false
	}
	switch res.At(0).Type().Underlying().(type) {
	case *types.Pointer, *types.Interface:
	default:
		return false
	}
	idx, successNil, ok := successResult(w.fn.Signature)
	return ok && w.heldOnSuccessOnly(path, idx, successNil)
}

// declaredOnSuccess reports whether a declared acquire of path is missing
// exactly on failure returns (vfs.PrepareRenameDentry: `return EBUSY`
// before taking anything; on success `to.mu` only when to is not nil,
// which the declaration promises): held, or maybe held, on every other.
func (w *walker) declaredOnSuccess(path string) bool {
	idx, successNil, ok := successResult(w.fn.Signature)
	if !ok {
		return false
	}
	fail := 0
	for _, r := range w.rets {
		_, failure, ok := outcome(r, idx, successNil)
		if !ok {
			return false
		}
		_, held := r.state.find(path)
		switch {
		case !held && failure:
			fail++
		case !held:
			return false
		}
	}
	return fail > 0
}

// outcomeOf is outcome for fn's success result, ok false when fn has
// none.
func outcomeOf(fn *ssa.Function, r retState) (success, failure, ok bool) {
	idx, successNil, ok := successResult(fn.Signature)
	if !ok {
		return false, false, false
	}
	return outcome(r, idx, successNil)
}

// successReturn reports whether r reports success (see successResult): a
// lock still held there may be meant to go with what it returns, so only
// failure returns holding a lock other paths release are leaks.
func (w *walker) successReturn(r retState) bool {
	success, _, _ := outcomeOf(w.fn, r)
	return success
}

// releasedOnSuccess reports whether ret, which holds the lock at path
// and says success with a constant (`return nil`), is a leak because
// another return saying success has the lock released: no acquire on
// success, but a path that forgot the unlock (rosedb's merge returning
// nil with the lock held when there is nothing to merge, and nil after
// unlocking when there was). A result only known to be nil (an error
// every callee return gives as nil) is a dead failure check, no claim.
func (w *walker) releasedOnSuccess(ret retState, path string) bool {
	idx, _, ok := successResult(w.fn.Signature)
	if !ok || ret.ret == nil || idx >= len(ret.ret.Results) {
		return false
	}
	if _, isConst := objects.Underlying(resultSlotValue(ret.ret.Results[idx])).(*ssa.Const); !isConst {
		return false
	}
	for _, r := range w.rets {
		if _, held := r.state.find(path); !held && (w.successReturn(r) || forwardsCallResult(r, idx)) {
			return true
		}
	}
	return false
}

// forwardsCallResult reports whether return r gives, as its result idx,
// what a call of a function that may return nil there returns, unchecked
// (`return nil, c.notify(msg)`): success whenever the callee succeeds,
// so a return that keeps the lock and says success is no acquire on
// success when this one has let it go. A callee without a body here
// (`errors.New`) makes an error: a failure return, as before.
func forwardsCallResult(r retState, idx int) bool {
	if r.ret == nil || idx >= len(r.ret.Results) {
		return false
	}
	call, ok := objects.Underlying(resultSlotValue(r.ret.Results[idx])).(*ssa.Call)
	if !ok || call.Call.Signature().Results().Len() != 1 {
		return false
	}
	if callee := call.Call.StaticCallee(); callee == nil || len(callee.Blocks) == 0 || !returnsNil(callee, 0) {
		return false
	}
	for _, ref := range *call.Referrers() {
		switch ref.(type) {
		case *ssa.Return, *ssa.DebugRef:
		default:
			return false // tested: `if err != nil { return err }`
		}
	}
	return true
}

// outcome says whether return r reports success or failure by its result
// idx (see successResult): surely success when that result is known to be
// as success has it, failure when known otherwise or, for an error, not
// the nil constant (error paths return errors). ok is false for a return
// without that result.
func outcome(r retState, idx int, successNil bool) (success, failure, ok bool) {
	if r.ret == nil || idx >= len(r.ret.Results) {
		return false, false, false
	}
	isNil, known := nilness(r.ret.Results[idx])
	return known && isNil == successNil, !known && successNil || known && isNil != successNil, true
}

// nilness says whether v is the nil constant (isNil) or surely not nil
// (a fresh allocation); known is false otherwise. An error value that is
// not the nil constant counts as non-nil: error paths return errors.
func nilness(v ssa.Value) (isNil, known bool) {
	v = objects.Underlying(resultSlotValue(v))
	if c, ok := v.(*ssa.Const); ok {
		return c.IsNil(), c.IsNil()
	}
	switch v.(type) {
	case *ssa.Alloc, *ssa.MakeMap, *ssa.MakeChan, *ssa.MakeSlice, *ssa.MakeClosure:
		return false, true
	}
	if alwaysNilResult(v) {
		return true, true
	}
	return false, false
}

// alwaysNilResult reports whether v is a result of a call of a function
// whose every return gives the nil constant there: `s, err :=
// newSimulator()` where newSimulator always returns `s, nil`, so that
// the caller's `if err != nil { return err }` is no failure path
// leaving the lock newSimulator took held. A result passed on from such
// a call counts too (`tx, err := db.Begin(); return ctx, tx, err`), and
// so does a lone error result (helm's LockRelease, which locks the
// release and returns nil).
func alwaysNilResult(v ssa.Value) bool { return alwaysNilAt(v, 0) }

// alwaysNilTest evaluates cmp, `x == nil` or `x != nil`, when x is a
// result a callee always returns nil (alwaysNilResult): known, and
// whether the comparison holds.
func alwaysNilTest(cmp *ssa.BinOp) (holds, known bool) {
	x, y := cmp.X, cmp.Y
	if c, ok := x.(*ssa.Const); ok {
		x, y = y, c
	}
	if c, ok := y.(*ssa.Const); !ok || !c.IsNil() || !alwaysNilResult(x) {
		return false, false
	}
	return cmp.Op == token.EQL, true
}

// maxNilPassDepth bounds the calls an always-nil result is followed through.
const maxNilPassDepth = 3

func alwaysNilAt(v ssa.Value, depth int) bool {
	var call *ssa.Call
	index := 0
	switch u := v.(type) {
	case *ssa.Extract:
		call, _ = u.Tuple.(*ssa.Call)
		index = u.Index
	case *ssa.Call: // `if err := s.lock(name); err != nil`
		if u.Call.Signature().Results().Len() == 1 {
			call = u
		}
	}
	if call == nil {
		return false
	}
	callee := call.Call.StaticCallee()
	if callee == nil && call.Call.IsInvoke() {
		// The one implementation the package has (a CollectibleResource's
		// StartCollection that locks and cannot fail).
		callee = objects.SoleImplementation(call.Parent(), &call.Call)
	}
	if callee == nil || len(callee.Blocks) == 0 {
		return false
	}
	// Not the return of the recover block: a recovered panic's, whose
	// results are the slots' zero values unless the function names them.
	var results []ssa.Value
	for _, b := range callee.Blocks {
		if ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok && b != callee.Recover && index < len(ret.Results) {
			results = append(results, ret.Results[index])
		}
	}
	return len(results) > 0 && !slices.ContainsFunc(results, func(r ssa.Value) bool {
		r = objects.Underlying(resultSlotValue(r))
		if c, ok := r.(*ssa.Const); ok {
			return !c.IsNil()
		}
		return depth >= maxNilPassDepth || !alwaysNilAt(r, depth+1)
	})
}

// resultSlotValue is what a function with defers returns: SSA stores the
// result into a slot, runs the defers and returns a load of the slot; the
// value stored last before that load, in its block or the blocks that
// are its only way in (when no closure can change the slot), else v
// itself.
func resultSlotValue(v ssa.Value) ssa.Value {
	ld, ok := v.(*ssa.UnOp)
	if !ok || ld.Op != token.MUL || ld.Block() == nil {
		return v
	}
	slot, ok := ld.X.(*ssa.Alloc)
	if !ok || slot.Heap && closureStores(slot) {
		return v // a deferred closure may set it
	}
	b, end := ld.Block(), objects.InstrIndex(ld.Block(), ld)
	for range maxSlotBlocks {
		for i := end - 1; i >= 0; i-- {
			if st, ok := b.Instrs[i].(*ssa.Store); ok && st.Addr == slot {
				again, ok := st.Val.(*ssa.UnOp)
				if !ok || again.Op != token.MUL || again.X != slot {
					return st.Val
				}
				// `return err` with err the named result: what it held.
				if again.Block() != b {
					return v
				}
				i = objects.InstrIndex(b, again)
			}
		}
		if len(b.Preds) != 1 {
			break
		}
		b = b.Preds[0]
		end = len(b.Instrs)
	}
	return v
}

// maxSlotBlocks bounds the single-entry blocks searched for a slot's store.
const maxSlotBlocks = 8

// closureStores reports whether a closure capturing the variable cell
// slot may store into it (a named result a deferred closure sets), or the
// cell escapes otherwise.
func closureStores(slot *ssa.Alloc) bool {
	for _, r := range *slot.Referrers() {
		switch x := r.(type) {
		case *ssa.UnOp, *ssa.DebugRef:
		case *ssa.Store:
			if x.Addr != ssa.Value(slot) {
				return true // the cell itself stored away
			}
		case *ssa.MakeClosure:
			fn := x.Fn.(*ssa.Function)
			for i, b := range x.Bindings {
				if b != ssa.Value(slot) {
					continue
				}
				for _, use := range *fn.FreeVars[i].Referrers() {
					switch use.(type) {
					case *ssa.UnOp, *ssa.DebugRef: // a read
					default:
						return true
					}
				}
			}
		default:
			return true
		}
	}
	return false
}

// applyTryAcquires makes the callee's try-acquired locks maybe-held after
// the call, tagged with the result that tells success.
func (w *walker) applyTryAcquires(t *target, sum *funcInfo, call *ssa.Call, s State) State {
	for _, ta := range sum.tries {
		p, ok := w.calleePath(t, ta.Path)
		if !ok {
			continue
		}
		h := ta.Hold
		h.Path, h.Pos, h.Maybe, h.Loop, h.Obj = keyedAt(p, call.Pos()), call.Pos(), true, false, w.calleeObj(t, ta.Path)
		h.untag()
		if r := resultValue(call, ta.Result); r != nil {
			h.tagKey, h.tagVal, h.tagNeg = w.condKey(r), nilConst, !ta.Nil
		}
		s = s.with(h)
	}
	return s
}
