package locks

import (
	"go/token"

	"golang.org/x/tools/go/ssa"
)

// A callback's own branch counts as the caller's choice to call what lies
// behind it unless it tests what the callback was passed: a watcher that
// re-reads the store only for a progress event, an informer handler that
// looks the object up only for a tombstone, decide on the event, which
// the analysis does not follow (take.dynBranch). A hook branching on its
// own object's state or on time (an expiry check, a close action set or
// not) runs the rest whenever that state says so.

// Only a branch that comes before the take can decide it: the test of
// the error an export returned, after the export called back into the
// held lock, is no choice about making that call.

// maxArgBranchWalk bounds the values a branch condition is traced
// through.
const maxArgBranchWalk = 64

// branchesOnArgs reports whether some branch of fn from which the take
// at (an acquisition or call of fn's) can be reached tests a value
// derived from a parameter other than the receiver; any branch of fn
// when at is none of its instructions.
func (e *engine) branchesOnArgs(fn *ssa.Function, at token.Pos) bool {
	k := posIn{fn, at}
	if v, seen := e.argBranches[k]; seen {
		return v
	}
	if e.argBranches == nil {
		e.argBranches = map[posIn]bool{}
	}
	params := map[ssa.Value]bool{}
	for i, p := range fn.Params {
		if i == 0 && fn.Signature.Recv() != nil {
			continue
		}
		params[p] = true
	}
	before := blocksBefore(fn, at)
	found := false
	for _, b := range fn.Blocks {
		if len(b.Instrs) == 0 || found || before != nil && !before[b] {
			continue
		}
		if c, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If); ok {
			found = derivedFrom(c.Cond, params)
		}
	}
	e.argBranches[k] = found
	return found
}

// posIn names a position in one function (a memo key).
type posIn struct {
	fn  *ssa.Function
	pos token.Pos
}

// blocksBefore returns the blocks of fn from whose end the instruction
// at pos can be reached; nil when no instruction of fn is at pos.
func blocksBefore(fn *ssa.Function, pos token.Pos) map[*ssa.BasicBlock]bool {
	var stack []*ssa.BasicBlock
	for _, b := range fn.Blocks {
		for _, in := range b.Instrs {
			if pos.IsValid() && in.Pos() == pos {
				stack = append(stack, b)
				break
			}
		}
	}
	if len(stack) == 0 {
		return nil
	}
	before := map[*ssa.BasicBlock]bool{}
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, p := range b.Preds {
			if !before[p] {
				before[p] = true
				stack = append(stack, p)
			}
		}
	}
	return before
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
