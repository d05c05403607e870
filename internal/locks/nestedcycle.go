package locks

import (
	"go/token"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// A cycle one goroutine runs by itself: an edge x whose function takes
// x.To through a call (x.From held) that reaches, in place, functions
// witnessing every other edge of the cycle. The goroutine takes x.From,
// then the rest of the cycle nested under it, and comes back to x.From:
// where the two are one object it waits for itself (nats' block that
// rebuilds its store's state, which read-locks the block again; tidb's
// tracker whose exceed action formats the tracker). Such a cycle needs no
// second goroutine, so a test that runs it deadlocks whatever it starts.
// Only for cycles witnessed in the code of _test.go files other than a
// test's own holds: a test holding a lock on purpose is an interleaving
// it stages (teststaged), and production code nested over a test's fake
// (a transport delivering to another node in process) reaches other
// objects than the ones it holds.
//
// The two objects are not known to be one: nested in production code,
// the cycle is reported as any production cycle is, and this rule makes
// test code (a regression test that models the component in its own
// files) judged the same.

// nestedCycle reports whether some edge of c reaches the rest of c, in
// place, from the call that takes its To.
func (e *engine) nestedCycle(c cycle) bool {
	if slices.ContainsFunc(c.edges, func(x edge) bool { return !e.inTest(x.FromPos) || e.testHold(x) }) {
		return false
	}
	for i, x := range c.edges {
		reach := e.reachedFromCall(x.Fn, x.ToPos)
		if len(reach) == 0 {
			continue
		}
		nested := true
		for j, y := range c.edges {
			if j != i && !e.witnessedIn(y, reach) {
				nested = false
				break
			}
		}
		if nested {
			return true
		}
	}
	return false
}

// witnessedIn reports whether some function of fns witnesses an edge
// between y's classes (the cycle keeps one witness per pair, and one per
// function of test code: another may be the nested one).
func (e *engine) witnessedIn(y edge, fns map[string]bool) bool {
	for _, z := range e.edges {
		if z.From == y.From && z.To == y.To && fns[z.Fn] {
			return true
		}
	}
	for k := range e.testEdges { // each test function's witness
		if k.from == y.From && k.to == y.To && fns[k.fn] {
			return true
		}
	}
	return false
}

// reachedFromCall returns the functions the call at pos in the function
// named fn runs in place, transitively (goroutine starts left out); nil
// when pos is no call of the package's functions.
func (e *engine) reachedFromCall(fn string, pos token.Pos) map[string]bool {
	f := e.funcNamed(fn)
	if f == nil || !pos.IsValid() {
		return nil
	}
	var out map[string]bool
	var visit func(g *ssa.Function)
	visit = func(g *ssa.Function) {
		name := e.funcName(g)
		if out[name] {
			return
		}
		out[name] = true
		for _, c := range e.callees(g, false) {
			visit(c)
		}
	}
	for _, b := range f.Blocks {
		for _, instr := range b.Instrs {
			call, ok := instr.(ssa.CallInstruction)
			if !ok || call.Pos() != pos {
				continue
			}
			if _, isGo := call.(*ssa.Go); isGo {
				continue
			}
			if out == nil {
				out = map[string]bool{}
			}
			for _, c := range e.appendCallees(nil, f, instr, false) {
				visit(c)
			}
			// A function passed to the call may run in it (sync.Once.Do).
			for _, a := range call.Common().Args {
				if mc, ok := a.(*ssa.MakeClosure); ok {
					a = mc.Fn
				}
				if g, ok := a.(*ssa.Function); ok && e.p.FuncSet[e.canonical(g)] {
					visit(e.canonical(g))
				}
			}
		}
	}
	return out
}
