package locks

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// A function given a callback may call it on a branch: a registry that
// calls a watcher inline when the value is already there, a loader run
// on a cache miss. Which branch runs depends on state its caller may
// rule out, so such a call stays edges only against the caller's locks
// (ok27watchbranch). A call on the path where an operation fails is not
// like that: failures happen whatever the caller knows, and error paths
// are the least exercised, which is where such deadlocks ship (grpc-go's
// WatchRouteConfig calling the watcher inline on an unknown authority
// while the watcher's caller holds its lock). So a param call whose only
// condition is one failure (`if err != nil` on a call's error result)
// names that failure, and the double lock is reported on that path.

// failureAt returns the name of the call whose failure is the only
// condition under which b runs in the walked function ("findAuthority"),
// or "" when b runs under other conditions too; and the call.
func (w *walker) failureAt(b *ssa.BasicBlock) (string, *ssa.Call) {
	if b == nil {
		return "", nil
	}
	for d := b.Idom(); d != nil; d = d.Idom() {
		onFail, call := failureBranch(d)
		if onFail == nil || !onFail.Dominates(b) {
			continue
		}
		// The failure must be the one condition: the test itself runs
		// on every path, and b on every path of the failure branch.
		if w.stepAt(d) != 0 || avoidableUnder(onFail, b) {
			return "", nil
		}
		return callName(call), call
	}
	return "", nil
}

// failureBranch returns the successor of d taken when d tests a call's
// error result against nil and it is not nil, with the call.
func failureBranch(d *ssa.BasicBlock) (*ssa.BasicBlock, *ssa.Call) {
	x, onNonNil := nilTest(d)
	if x == nil {
		return nil, nil
	}
	call := failingCall(x)
	if callName(call) == "" {
		return nil, nil
	}
	return onNonNil, call
}

// nilTest returns the value d's branch compares with nil and the
// successor taken when it is not nil; nil when d ends in no such test.
func nilTest(d *ssa.BasicBlock) (ssa.Value, *ssa.BasicBlock) {
	if len(d.Instrs) == 0 || len(d.Succs) != 2 {
		return nil, nil
	}
	ifInstr, ok := d.Instrs[len(d.Instrs)-1].(*ssa.If)
	if !ok {
		return nil, nil
	}
	cmp, ok := ifInstr.Cond.(*ssa.BinOp)
	if !ok || cmp.Op != token.NEQ && cmp.Op != token.EQL {
		return nil, nil
	}
	x := cmp.X
	if objects.NilConstant(x) {
		x = cmp.Y
	} else if !objects.NilConstant(cmp.Y) {
		return nil, nil
	}
	if cmp.Op == token.NEQ {
		return x, d.Succs[0]
	}
	return x, d.Succs[1]
}

// failingCall returns the call whose error result v is, or nil.
func failingCall(v ssa.Value) *ssa.Call {
	if !types.Identical(v.Type(), types.Universe.Lookup("error").Type()) {
		return nil
	}
	if ex, ok := v.(*ssa.Extract); ok {
		v = ex.Tuple
	}
	call, _ := v.(*ssa.Call)
	return call
}

// callName is the name of the method or function call calls, "" when it
// has none (a func value).
func callName(call *ssa.Call) string {
	if call == nil {
		return ""
	}
	if call.Call.IsInvoke() {
		return call.Call.Method.Name()
	}
	if fn := call.Call.StaticCallee(); fn != nil {
		return fn.Name()
	}
	return ""
}

// avoidableUnder reports whether some path from under leaves the blocks
// it dominates, or returns, without passing through b.
func avoidableUnder(under, b *ssa.BasicBlock) bool {
	seen := map[*ssa.BasicBlock]bool{under: true}
	work := []*ssa.BasicBlock{under}
	for len(work) > 0 {
		cur := work[len(work)-1]
		work = work[:len(work)-1]
		if cur == b {
			continue
		}
		if !under.Dominates(cur) || len(cur.Succs) == 0 {
			return true
		}
		for _, s := range cur.Succs {
			if !seen[s] {
				seen[s] = true
				work = append(work, s)
			}
		}
	}
	return false
}
