package locks

import (
	"go/token"

	"golang.org/x/tools/go/ssa"
)

// A loop that takes a lock and releases it in each turn, but leaves by a
// `break` with it held (gitea's worker boost: Lock at the top of the
// turn, `if max reached { log; break }`, Unlock at the bottom), reaches
// the code after the loop holding the lock on one path and not at all on
// the other, the loop's normal exit. Neither side released it for sure
// (the exit includes the turn that never ran), so the merge is no leaky
// hold; yet each turn shows the function means to release what it takes.
// A lock taken on a branch and kept for the caller (`if need { mu.Lock()
// }`) has no such turn.

// loopTurnLeak reports whether h, maybe-held and held for sure on one of
// the merged paths, was taken inside a loop that also unlocks it.
func (w *walker) loopTurnLeak(h Hold) bool {
	unlocks := w.unlockBlocks[h.Path]
	if len(unlocks) == 0 {
		return false
	}
	taken := w.blockAt(h.Pos)
	if taken == nil {
		return false
	}
	for _, hdr := range w.fn.Blocks {
		latches := backEdgeSources(hdr)
		if len(latches) == 0 || !hdr.Dominates(taken) || !inLoop(taken, hdr, latches) {
			continue
		}
		for _, u := range unlocks {
			if hdr.Dominates(u) && inLoop(u, hdr, latches) {
				return true
			}
		}
	}
	return false
}

// blockAt returns the block of the walked function's call at pos.
func (w *walker) blockAt(pos token.Pos) *ssa.BasicBlock {
	if c := callAtPos(w.fn, pos, nil); c != nil {
		return c.Block()
	}
	return nil
}

// callAtPos returns fn's first call at pos that keep accepts (any, for a
// nil keep), nil when there is none.
func callAtPos(fn *ssa.Function, pos token.Pos, keep func(ssa.CallInstruction) bool) ssa.CallInstruction {
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if c, ok := instr.(ssa.CallInstruction); ok && c.Pos() == pos && (keep == nil || keep(c)) {
				return c
			}
		}
	}
	return nil
}
