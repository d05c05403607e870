package locks

import (
	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// A new object stored into a guarded container (`a.endpoints[k] = st`
// under a.mu) is found there only by code holding the container's guard:
// while this function keeps holding it, the object is still its own, and
// finishing its initialisation (`st.kind = k`) is construction.

// noteGuardedStore records a store or map update into a guarded field
// made with every guard of the field held exclusively.
func (w *walker) noteGuardedStore(instr ssa.Instruction, s State) {
	var fa *ssa.FieldAddr
	switch x := instr.(type) {
	case *ssa.Store:
		fa, _ = x.Addr.(*ssa.FieldAddr)
	case *ssa.MapUpdate:
		fa = fieldLoad(x.Map) // r.entries[k] = e: the map loaded from r.entries
	}
	if fa == nil {
		return
	}
	g := w.e.guardOf(lockop.FieldOf(fa))
	if g == nil {
		return
	}
	var holds []Hold
	for i := range g.locks {
		h, held := s.find(w.e.guardPath(w.fn, fa.X, &g.locks[i]))
		if !held || h.Maybe || h.Shared {
			delete(w.guardedPubs, instr)
			return
		}
		holds = append(holds, h)
	}
	if w.guardedPubs == nil {
		w.guardedPubs = map[ssa.Instruction][]Hold{}
	}
	w.guardedPubs[instr] = holds
}

// underGuard reports whether publication pub stored into a guarded field
// under guards that s still holds from the same acquisitions.
func (w *walker) underGuard(pub ssa.Instruction, s State) bool {
	holds, ok := w.guardedPubs[pub]
	if !ok {
		return false
	}
	for _, h := range holds {
		now, held := s.find(h.Path)
		if !held || now.Maybe || now.Shared || now.Pos != h.Pos {
			return false
		}
	}
	return true
}
