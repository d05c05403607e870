package locks

import (
	"golang.org/x/tools/go/ssa"
)

// A callback's own branch counts as the caller's choice to call what lies
// behind it unless it tests what the callback was passed: a watcher that
// re-reads the store only for a progress event, an informer handler that
// looks the object up only for a tombstone, decide on the event, which
// the analysis does not follow (take.dynBranch). A hook branching on its
// own object's state or on time (an expiry check, a close action set or
// not) runs the rest whenever that state says so.

// maxArgBranchWalk bounds the values a branch condition is traced
// through.
const maxArgBranchWalk = 64

// branchesOnArgs reports whether some branch of fn tests a value derived
// from a parameter other than the receiver.
func (e *engine) branchesOnArgs(fn *ssa.Function) bool {
	if v, seen := e.argBranches[fn]; seen {
		return v
	}
	if e.argBranches == nil {
		e.argBranches = map[*ssa.Function]bool{}
	}
	params := map[ssa.Value]bool{}
	for i, p := range fn.Params {
		if i == 0 && fn.Signature.Recv() != nil {
			continue
		}
		params[p] = true
	}
	found := false
	for _, b := range fn.Blocks {
		if len(b.Instrs) == 0 || found {
			continue
		}
		if c, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If); ok {
			found = derivedFrom(c.Cond, params)
		}
	}
	e.argBranches[fn] = found
	return found
}

// derivedFrom reports whether v is computed from one of params, through
// the operands of the instructions that compute it (loads, field and
// index selections, calls given such a value, type assertions, phis,
// and the stores into a local it is read from).
func derivedFrom(v ssa.Value, params map[ssa.Value]bool) bool {
	seen := map[ssa.Value]bool{}
	stack := []ssa.Value{v}
	for len(stack) > 0 && len(seen) < maxArgBranchWalk {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if v == nil || seen[v] {
			continue
		}
		seen[v] = true
		if params[v] {
			return true
		}
		if a, ok := v.(*ssa.Alloc); ok { // a parameter spilled to a local
			for _, r := range *a.Referrers() {
				if st, ok := r.(*ssa.Store); ok && st.Addr == a {
					stack = append(stack, st.Val)
				}
			}
			continue
		}
		instr, ok := v.(ssa.Instruction)
		if !ok {
			continue
		}
		var ops [8]*ssa.Value
		for _, op := range instr.Operands(ops[:0]) {
			if *op != nil {
				stack = append(stack, *op)
			}
		}
	}
	return false
}
