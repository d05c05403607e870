package locks

import (
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// A take inside a loop body is conditional (the loop may run no
// iteration), but not like a branch: a callee that locks, in a loop over
// its listeners, the lock its caller holds deadlocks whenever there is a
// listener (libp2p's notifiees under the swarm's read lock), where a
// branch may test the very state that makes the take impossible there,
// or hold the unlock that the take undoes (pebble's
// handleIngestAsFlushable). take.branch counts only the branches: a
// block run on every iteration of a loop that runs on every path is not
// one. It decides double locks; everything else keeps cond.

// branchStep is condStep, except that a block run on every iteration of
// a loop that is itself unconditional (or run on every iteration of one,
// nested) counts as unconditional.
func (w *walker) branchStep() int {
	if w.condStep() == 0 {
		return 0
	}
	if w.blk == nil {
		return 1
	}
	if step, ok := w.branchSteps[w.blk]; ok && w.nilGuard == nil {
		return step
	}
	step := 1
	for b := w.blk; b != nil; {
		h := iteratedBy(b)
		if h == nil {
			break
		}
		if w.stepAt(h) == 0 {
			step = 0
			break
		}
		b = h
	}
	if w.nilGuard != nil {
		return step // true of this call only
	}
	if w.branchSteps == nil {
		w.branchSteps = map[*ssa.BasicBlock]int{}
	}
	w.branchSteps[w.blk] = step
	return step
}

// iteratedBy returns the header of the innermost loop holding b when b
// runs on every iteration of it that goes round (b dominates every source
// of its back edges), nil otherwise: b outside every loop, or on a branch,
// after a continue, of its innermost loop.
func iteratedBy(b *ssa.BasicBlock) *ssa.BasicBlock {
	for h := b.Idom(); h != nil; h = h.Idom() {
		latches := backEdgeSources(h)
		if len(latches) == 0 || !inLoop(b, h, latches) {
			continue
		}
		for _, l := range latches {
			if !b.Dominates(l) {
				return nil
			}
		}
		return h
	}
	return nil
}

// backEdgeSources returns the predecessors of h that h dominates: h is a
// loop header when there is any.
func backEdgeSources(h *ssa.BasicBlock) []*ssa.BasicBlock {
	var out []*ssa.BasicBlock
	for _, p := range h.Preds {
		if h.Dominates(p) {
			out = append(out, p)
		}
	}
	return out
}

// inLoop reports whether b, dominated by the header h, reaches one of
// h's back-edge sources without passing through h: it is in h's loop.
func inLoop(b, h *ssa.BasicBlock, latches []*ssa.BasicBlock) bool {
	notHeader := func(x *ssa.BasicBlock) bool { return x == h }
	return slices.ContainsFunc(latches, func(l *ssa.BasicBlock) bool {
		return objects.BlockReaches([]*ssa.BasicBlock{b}, l, notHeader)
	})
}
