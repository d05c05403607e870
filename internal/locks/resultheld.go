package locks

import (
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// A function that returns an object with its lock left held (a store's
// putIntent that makes, locks and publishes an intent; a lookup that
// locks the entry it found) hands that lock to its caller in the call's
// value, as a declared +checklocksacquire:result.mu does (returns.go).
// The engine infers it from the returns: on each that gives the result
// not nil, a lock inside that result is held. Callers hold it Inferred,
// so the ones that keep it (the transaction that commits later) get
// edges from it and no return-state finding. Package-local: no fact
// carries it.

// inferResultLocks lists fn's locks held on every non-nil return inside
// the object returned as one result; none when some are declared. count
// is finishReturns': how many returns hold each path.
func (w *walker) inferResultLocks(count map[string]int) []resultLock {
	if w.fn.Signature.Results().Len() == 0 || len(w.rets) == 0 || len(w.e.resultLocks(w.fn)) > 0 {
		return nil
	}
	var out []resultLock
	for i := range w.fn.Signature.Results().Len() {
		out = append(out, w.resultHeldAt(i, count)...)
	}
	return out
}

// resultHeldAt is inferResultLocks for result i: the locks, by their
// path inside the result, that every return giving a non-nil i holds.
func (w *walker) resultHeldAt(i int, count map[string]int) []resultLock {
	var common []resultLock
	some := false
	for _, r := range w.rets {
		if r.ret == nil || i >= len(r.ret.Results) {
			return nil
		}
		v := resultSlotValue(r.ret.Results[i])
		if nilConstant(v) {
			continue
		}
		here := w.heldInside(r, v, i, count)
		if !some {
			common, some = here, true
			continue
		}
		common = slices.DeleteFunc(common, func(rl resultLock) bool {
			return !slices.ContainsFunc(here, func(o resultLock) bool { return o.rest == rl.rest && o.hold.Class == rl.hold.Class })
		})
	}
	return common
}

// heldInside lists the locks r holds for sure inside v, taken here; not
// one the summary's acquires already carry (a parameter's lock, or one
// key's, held on every return).
func (w *walker) heldInside(r retState, v ssa.Value, i int, count map[string]int) []resultLock {
	base := pathOf(w.fn, v)
	if base == "" {
		return nil
	}
	var out []resultLock
	for _, h := range r.state.holds {
		rest, ok := strings.CutPrefix(h.Path, base)
		if h.Maybe || h.Class == "" || !ok || !strings.HasPrefix(rest, ".") {
			continue
		}
		if _, atEntry := w.entry.find(h.Path); atEntry || w.leftHeld(h, count) {
			continue
		}
		out = append(out, resultLock{index: i, rest: rest, shared: h.Shared,
			hold: Hold{Class: h.Class, Name: h.Name, Shared: h.Shared, Sub: h.Sub, Inferred: true}})
	}
	return out
}

// calleeResultLocks is what a call's value holds when it returns: the
// callee's declared result locks, else the ones its summary infers.
func (w *walker) calleeResultLocks(callee *ssa.Function) []resultLock {
	if rls := w.e.resultLocks(callee); len(rls) > 0 {
		return rls
	}
	if sum := w.e.infos[callee]; sum != nil {
		return sum.resultLocks
	}
	return nil
}

// leftHeld reports whether h, held on every return (count: how many
// returns hold each path), is a lock the function leaves its callers
// holding under a name they know: a parameter's or a package var's, or
// one key's by class (keyed.go). Such a lock is in the summary's
// acquires.
func (w *walker) leftHeld(h Hold, count map[string]int) bool {
	return count[h.Path] == len(w.rets) && (portable(h.Path) || w.keyedEffect(h))
}
