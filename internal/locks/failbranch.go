package locks

import "golang.org/x/tools/go/ssa"

// A callee that takes the caller's lock only where something fails (a
// listener's error report when a close fails, a link building its
// failure update when the balance is short) deadlocks its caller on that
// path, whatever the caller knows: failures are not state the caller
// rules out, and error paths are the least exercised (gocql's pool
// closing its conns under its lock, lnd's switch asking a link that
// calls back into the switch). So a take whose every branch step down
// from a callee is such a failure is a double lock "on the path where X
// fails", as a param call on a failure already was (failpath.go).

// failureHere returns the failure that is the only condition of the
// block being walked: a call's error found not nil (failureAt), or a
// branch of this function whose every way out returns a failure; ""
// when there is none. on is the path of the object whose state failed
// (the failing call's receiver, the function's own), "" when unknown.
func (w *walker) failureHere() (name, on string) {
	if w.blk == nil {
		return "", ""
	}
	if name, call := w.failureAt(w.blk); name != "" {
		if recv := receiverOf(call); recv != nil {
			return name, pathOf(w.fn, recv)
		}
		return name, ""
	}
	if name := w.failingBranchAt(w.blk); name != "" {
		if w.fn.Signature.Recv() != nil && len(w.fn.Params) > 0 {
			return name, pathOf(w.fn, w.fn.Params[0])
		}
		return name, ""
	}
	return "", ""
}

// receiverOf returns the value a method call is made on, nil for a
// function call.
func receiverOf(call *ssa.Call) ssa.Value {
	if call.Call.IsInvoke() {
		return call.Call.Value
	}
	if fn := call.Call.StaticCallee(); fn != nil && fn.Signature.Recv() != nil && len(call.Call.Args) > 0 {
		return call.Call.Args[0]
	}
	return nil
}

// failingBranchAt returns the walked function's name when b lies on one
// branch of an unconditional test, on every path of that branch, and the
// branch only returns failures.
func (w *walker) failingBranchAt(b *ssa.BasicBlock) string {
	for d := b.Idom(); d != nil; d = d.Idom() {
		for _, s := range d.Succs {
			if len(d.Succs) != 2 || len(s.Preds) != 1 || !s.Dominates(b) {
				continue
			}
			if w.stepAt(d) != 0 || avoidableUnder(s, b) || !onlyFails(w.fn, s) {
				return ""
			}
			return w.fn.Name()
		}
	}
	return ""
}

// onlyFails reports whether every path from s stays among the blocks s
// dominates and ends in a return that surely fails.
func onlyFails(fn *ssa.Function, s *ssa.BasicBlock) bool {
	if !returnsError(fn) {
		return false
	}
	seen := map[*ssa.BasicBlock]bool{s: true}
	work := []*ssa.BasicBlock{s}
	returns := 0
	for len(work) > 0 {
		cur := work[len(work)-1]
		work = work[:len(work)-1]
		if !s.Dominates(cur) || len(cur.Instrs) == 0 {
			return false
		}
		if _, ok := cur.Instrs[len(cur.Instrs)-1].(*ssa.Return); ok {
			if !failingReturn(cur) {
				return false
			}
			returns++
		}
		for _, n := range cur.Succs {
			if !seen[n] {
				seen[n] = true
				work = append(work, n)
			}
		}
	}
	return returns > 0
}

// failedTake sets what nt, the take through callee t of its take tk at
// the walked instruction, keeps of a failure (take.failed): the callee's,
// when its take branches only on failures, and this function's own
// branch to the call, if any, a failure too. site is failureHere for the
// call, computed once for all of its takes; nil when the call is not on
// a branch of ours or t.cond rules failures out.
func (w *walker) failedTake(nt *take, tk take, t *target, site func() (string, string)) {
	if t.cond != 0 || tk.branch > 0 && tk.failed == "" {
		return
	}
	here, on := "", ""
	if site != nil {
		if here, on = site(); here == "" {
			return
		}
	}
	if tk.failed != "" {
		here, on = tk.failed, ""
		if p, ok := w.calleePath(t, tk.failedOn); ok && tk.failedOn != "" {
			on = p
		}
	}
	nt.failed, nt.failedOn = here, on
}

// failedOnHeld reports whether the failure callee t's take tk happens on
// tests the state of the object whose lock old the caller holds: the
// caller may have made sure it does not fail (sarama's Produce connecting
// under the broker's lock before send, which locks it only when not
// connected).
func (w *walker) failedOnHeld(tk take, t *target, old Hold) bool {
	if tk.failedOn == "" {
		return false
	}
	p, ok := w.calleePath(t, tk.failedOn)
	if !ok || p == "" {
		return false
	}
	root, _ := rootOf(p)
	held, _ := rootOf(old.Path)
	return root == held
}

// failedText is what a double lock through callee t's take tk says of
// the failure it happens on, if that is its condition.
func failedText(tk take, t *target) string {
	if tk.branch+t.cond == 0 || tk.failed == "" {
		return ""
	}
	return ", on the path where " + tk.failed + " fails"
}
