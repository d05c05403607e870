package locks

import (
	"go/constant"
	"iter"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Hand-over-hand locking renames the held object: `prev.mu.Lock(); for
// cur := prev.next; cur != nil; cur = cur.next { cur.mu.Lock();
// prev.mu.Unlock(); prev = cur }` holds one lock at every loop header,
// first as l.head, then as the last turn's cur, and that lock is prev
// there. On the edge into a loop header, a hold rooted at the value a phi
// of the header receives on that edge is held as the phi's too: renamed
// when its old name was a phi of the header (which names the next value
// from there); otherwise the old name stays and the phi's is a second
// name for the turn (an alias, its twin).

// phiMoves applies the phis of b, a loop header, to the holds of s, the
// state on the edge from p. Only loop headers: after a plain branch the
// old name is the one the code goes on using (`e = x.(*T); e.Lock();
// defer e.Unlock()` on one side, `e = new(T)` on the other).
func (w *walker) phiMoves(p, b *ssa.BasicBlock, s State) State {
	idx := slices.Index(b.Preds, p)
	if idx < 0 || len(s.holds) == 0 || !loopHeader(b) {
		return s
	}
	s = w.phiConds(b, idx, s)
	type move struct {
		h   Hold
		old string
		phi bool // the old name is a phi of b: dropped
	}
	var moves []move
	for phi, in := range phiIns(b, idx) {
		from, to := w.e.lockPath(w.fn, in), w.e.lockPath(w.fn, phi)
		if from == "" || to == "" || from == to || !strings.HasPrefix(to, "v:") {
			continue
		}
		inPhi, _ := in.(*ssa.Phi)
		for _, h := range s.holds {
			rest, ok := pathUnder(h.Path, from)
			if !ok {
				continue
			}
			c := h
			c.Path = to + rest
			// A value reached from the phi itself (`i = i.parent`) names,
			// once the phi moves on, another object: its name is dropped
			// as a phi's is.
			_, fromPhi := pathUnder(from, to)
			moves = append(moves, move{h: c, old: h.Path, phi: inPhi != nil && inPhi.Block() == b || fromPhi})
		}
	}
	for _, m := range moves {
		if m.phi {
			s = s.without(m.old)
		}
	}
	for _, m := range moves {
		if _, held := s.find(m.h.Path); held {
			continue
		}
		if !m.phi {
			// The old name stays the lock's (a caller's declared lock
			// reached through tg.pidns, walked as ns): the phi's is a
			// second name for this turn, letting go of either lets go
			// of both.
			old, held := s.find(m.old)
			if !held {
				continue
			}
			old.twin = m.h.Path
			s = s.with(old)
			m.h.Try, m.h.alias, m.h.twin = true, true, m.old
		}
		s = s.with(m.h)
	}
	return s
}

// loopHeader reports whether b is entered by a back-edge.
func loopHeader(b *ssa.BasicBlock) bool { return len(backEdgeSources(b)) > 0 }

// dropMaybeTwins drops, after a join, a maybe-hold whose twin is held for
// sure: on the paths it came from it is that lock, on the others it was
// let go (l.head's lock, released in the loop as prev).
func dropMaybeTwins(s State) State {
	for _, h := range s.holds {
		if !h.Maybe || h.twin == "" {
			continue
		}
		if t, held := s.find(h.twin); held && !t.Maybe {
			s = s.without(h.Path)
		}
	}
	return s
}

// phiConds carries, on the edge idx into loop header b, what the state
// knows of the value each phi of b receives there over to the phi: a
// constant received, or a value the branches taken say, is known as the
// phi's value, and a maybe-hold tagged with the received value is tagged
// with the phi. The header's own test
// of the phi then decides the hold (`for popped := false; !popped; {
// n.Lock(); ...; if !popped { n.Unlock() } }`: held only when popped, so
// never on the next turn).
func (w *walker) phiConds(b *ssa.BasicBlock, idx int, s State) State {
	for phi, in := range phiIns(b, idx) {
		to := w.condKey(phi)
		if to == "" {
			continue
		}
		if c, ok := in.(*ssa.Const); ok && c.Value != nil && c.Value.Kind() != constant.Unknown {
			s = s.learn(to, c.Value)
			continue
		}
		from := w.condKey(in)
		if from == "" || from == to {
			continue
		}
		if v, ok := s.known(from); ok {
			s = s.learn(to, v)
		}
		for _, h := range s.holds {
			if !h.Maybe || h.tagKey != from && h.tag2Key != from {
				continue
			}
			if h.tagKey == from {
				h.tagKey = to
			}
			if h.tag2Key == from {
				h.tag2Key = to
			}
			s = s.with(h)
		}
	}
	return s
}

// phiIns yields each phi of b with the value it receives on the edge
// from b's predecessor idx.
func phiIns(b *ssa.BasicBlock, idx int) iter.Seq2[*ssa.Phi, ssa.Value] {
	return func(yield func(*ssa.Phi, ssa.Value) bool) {
		for _, instr := range b.Instrs {
			phi, ok := instr.(*ssa.Phi)
			if !ok {
				return
			}
			if idx < len(phi.Edges) && !yield(phi, phi.Edges[idx]) {
				return
			}
		}
	}
}
