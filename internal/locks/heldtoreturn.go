package locks

import (
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// A lock taken on a branch with its unlock deferred (`if bad { s.mu.Lock();
// defer s.mu.Unlock(); ... }`) is held on some paths only after the
// branch merges, but on each of those paths it stays held until the
// function returns: nothing else releases it. A take on every path after
// it is then a re-lock on the paths that took it (ingress-gce's
// operationInternal, whose commitTransaction locks syncLock again after
// the degraded-mode branch locked it). This is not the `if c {
// mu.Lock() } ... if c { mu.Unlock() }` pattern a maybe-hold otherwise
// stands for: there is no later unlock to pair.

// heldToReturn reports whether old, a maybe-hold met again in the block
// being walked, is such a lock: released by a deferred unlock, and by
// nothing that can run between its acquisition and here.
func (w *walker) heldToReturn(old Hold) bool {
	if !old.Maybe || old.Loop || old.Lent || old.Try || old.Inferred || old.Opaque || old.Class == "" || w.blk == nil {
		return false
	}
	if _, atEntry := w.entry.find(old.Path); atEntry {
		return false
	}
	rel, ok := w.toReturn[old.Path]
	if !ok {
		rel = w.scanReleases(old.Path)
		if w.toReturn == nil {
			w.toReturn = map[string]*releaseSites{}
		}
		w.toReturn[old.Path] = rel
	}
	if rel == nil {
		return false
	}
	from := callAtPos(w.fn, old.Pos, nil)
	if from == nil || w.at == nil || runsAfter(w.at, from) {
		return false // a loop's lock, carried into the next turn: the loop rules' (relockedNextTurn)
	}
	if _, running := w.at.(*ssa.Defer); running || !w.onEveryPathAfter(from) {
		// A deferred call run at a return, or a take on some paths after
		// the branch only: its condition may be the branch's own, told
		// apart by a value the walk does not follow (`if !running {
		// Lock; runPrefill = true } ... if !runPrefill { RLock }`).
		return false
	}
	for _, u := range rel.sites {
		if runsAfter(from, u) && runsAfter(u, w.at) {
			return false
		}
	}
	return true
}

// releaseSites: the instructions that may release a path other than by
// a defer; nil when no deferred unlock releases it at all.
type releaseSites struct{ sites []ssa.Instruction }

// scanReleases finds where the walked function may release path: a
// direct Unlock (or RUnlock) of it, a call or closure of one that
// releases a lock. It reads the instructions only (no call resolution:
// it runs while a call's targets are being applied).
func (w *walker) scanReleases(path string) *releaseSites {
	deferred := false
	var out releaseSites
	for _, b := range w.fn.Blocks {
		for _, instr := range b.Instrs {
			if mc, ok := instr.(*ssa.MakeClosure); ok {
				if fn, ok := mc.Fn.(*ssa.Function); ok && w.releases(fn) {
					out.sites = append(out.sites, instr)
				}
				continue
			}
			c, ok := instr.(ssa.CallInstruction)
			if !ok {
				continue
			}
			_, isDefer := instr.(*ssa.Defer)
			op, lv := w.e.classify(c.Common())
			if op == lockop.Unlock || op == lockop.RUnlock {
				if w.e.lockPath(w.fn, lv) != path {
					continue
				}
				if isDefer {
					deferred = true
				} else {
					out.sites = append(out.sites, instr)
				}
				continue
			}
			if fn := c.Common().StaticCallee(); fn != nil && !isDefer && w.releases(fn) {
				out.sites = append(out.sites, instr)
			}
		}
	}
	if !deferred {
		return nil
	}
	return &out
}

func (w *walker) releases(fn *ssa.Function) bool {
	sum := w.e.summaryOf(fn)
	return sum != nil && len(sum.releases) > 0
}

// onEveryPathAfter reports whether the instruction being walked runs on
// every path from from to a successful return (failing returns aside).
func (w *walker) onEveryPathAfter(from ssa.Instruction) bool {
	at := w.at.Block()
	if from.Block() == at {
		return true
	}
	if w.retBlocks == nil {
		w.retBlocks = successReturns(w.fn, returnBlocks(w.fn))
	}
	isAt := func(b *ssa.BasicBlock) bool { return b == at }
	return !objects.BlockReachesAny(from.Block().Succs, isAt, func(b *ssa.BasicBlock) bool { return slices.Contains(w.retBlocks, b) })
}

// runsAfter reports whether b can run after a.
func runsAfter(a, b ssa.Instruction) bool {
	if a.Block() == b.Block() && objects.InstrIndex(a.Block(), a) < objects.InstrIndex(b.Block(), b) {
		return true
	}
	return objects.BlockReaches(a.Block().Succs, b.Block(), nil)
}
