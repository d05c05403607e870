package locks

import (
	"go/token"
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// A loop over a map that locks each value's lock and keeps it held past
// the iteration (a deferred unlock, or none) holds them all at once,
// taken in map order, which Go changes from one range to the next: two
// goroutines running it at once each take one first and wait for the
// other's (ovn-kubernetes' WatchFactory.Shutdown locking every informer).
// A slice's order is the same for everyone, so only maps. Not when the
// lock is only read-locked, nor when the function holds another lock
// exclusively across the loop (the loops are serialized). Only a Lock
// the loop's body makes itself on the value.

// noteMapOrder reports h, acquired by the walked function's Lock call at
// pos on lv, when it is such a lock.
func (w *walker) noteMapOrder(h Hold, lv ssa.Value, s State) {
	if !w.report || h.Shared || h.Class == "" || w.private(h) {
		return
	}
	fa, ok := lv.(*ssa.FieldAddr)
	if !ok {
		return
	}
	elem, rng := mapRangeValue(fa.X)
	if rng == nil || releasedInBody(w.e, elem) || !loopsBack(w.blk, elem) {
		return
	}
	if serializedAcross(h, s, false) {
		return
	}
	what := "the values of " + mapName(rng.X)
	w.reportLoopOrder(h, rng.Pos(), "ranges over "+what, func(fname string) string {
		return "lock order by map iteration: " + fname + " takes the " + h.Name + " of each of " + what +
			" and holds them all, in map order, which changes from one range to the next: two calls at once deadlock"
	})
}

// serializedAcross reports whether s holds, for sure and exclusively, a
// lock of another class than h's across the loop taking h: two calls of
// the loop do not run at once. A key's lock of a table serializes only
// the calls for that key; with keyedApart it does not count.
func serializedAcross(h Hold, s State, keyedApart bool) bool {
	for _, o := range s.holds {
		if o.Class != h.Class && o.Class != "" && !o.Maybe && !o.Shared && !(keyedApart && o.Keyed) {
			return true
		}
	}
	return false
}

// reportLoopOrder reports h, taken in a loop (at loopPos, what loopHop
// says of it) and held past each turn, with the message msg gives for
// the walked function's name.
func (w *walker) reportLoopOrder(h Hold, loopPos token.Pos, loopHop string, msg func(fname string) string) {
	fname := w.e.funcName(w.fn)
	rule := "lock-order"
	if w.e.inTest(h.Pos) {
		rule = "lock-order-test"
	}
	w.e.find(h.Pos, rule, msg(fname), diag.Hop{Pos: loopPos, What: loopHop}, diag.Hop{Pos: h.Pos, What: fname + " takes " + h.Name + ", not released in the iteration"})
}

// mapRangeValue returns v as the value a range over a map yields, with
// that range; nil when it is not one.
func mapRangeValue(v ssa.Value) (*ssa.Extract, *ssa.Range) {
	for range maxSymDepth {
		switch u := v.(type) {
		case *ssa.UnOp:
			if u.Op != token.MUL {
				return nil, nil
			}
			v = u.X
			continue
		case *ssa.Extract:
			next, ok := u.Tuple.(*ssa.Next)
			if !ok || u.Index != 2 {
				return nil, nil
			}
			rng, ok := next.Iter.(*ssa.Range)
			if !ok {
				return nil, nil
			}
			if _, isMap := rng.X.Type().Underlying().(*types.Map); !isMap {
				return nil, nil
			}
			return u, rng
		}
		return nil, nil
	}
	return nil, nil
}

// loopsBack reports whether the loop body that elem is yielded into goes
// on to its next iteration from b: a lock taken only on the way out
// (`v.mu.Lock(); return v`) is one lock, held alone.
func loopsBack(b *ssa.BasicBlock, elem *ssa.Extract) bool {
	return loopsBackTo(b, elem.Tuple.(*ssa.Next).Block(), elem.Block())
}

// loopsBackTo reports whether the loop body entered at body goes on from
// b to the loop's header without leaving the body.
func loopsBackTo(b, header, body *ssa.BasicBlock) bool {
	seen := map[*ssa.BasicBlock]bool{}
	work := []*ssa.BasicBlock{b}
	for len(work) > 0 {
		cur := work[len(work)-1]
		work = work[:len(work)-1]
		for _, next := range cur.Succs {
			if next == header {
				return true
			}
			if !seen[next] && body.Dominates(next) {
				seen[next] = true
				work = append(work, next)
			}
		}
	}
	return false
}

// releasedInBody reports whether the loop body elem is yielded into
// releases something of it without a defer: an Unlock or RUnlock on it
// (classify), or a call given it whose summary releases a lock.
func releasedInBody(e *engine, elem *ssa.Extract) bool {
	return releasedIn(e, elem.Parent(), elem.Block(), func(c *ssa.CallCommon) bool { return usesValue(c, elem) })
}

// releasedIn reports whether the blocks body dominates make a call, one
// that uses says concerns the lock, that is an Unlock or RUnlock or
// whose summary releases a lock.
func releasedIn(e *engine, fn *ssa.Function, body *ssa.BasicBlock, uses func(*ssa.CallCommon) bool) bool {
	for _, b := range fn.Blocks {
		if !body.Dominates(b) {
			continue
		}
		for _, instr := range b.Instrs {
			call, ok := instr.(*ssa.Call)
			if !ok {
				continue
			}
			c := call.Common()
			if !uses(c) {
				continue
			}
			if op, _ := e.classify(c); op == lockop.Unlock || op == lockop.RUnlock {
				return true
			}
			if sum := e.summaryOf(c.StaticCallee()); sum != nil && len(sum.releases) > 0 {
				return true
			}
		}
	}
	return false
}

// usesValue reports whether a call's receiver or an argument is v or
// reached from it by field addresses and loads.
func usesValue(c *ssa.CallCommon, v ssa.Value) bool {
	args := c.Args
	if c.IsInvoke() {
		args = append([]ssa.Value{c.Value}, args...)
	}
	for _, a := range args {
		for range maxSymDepth {
			if a == v {
				return true
			}
			switch u := a.(type) {
			case *ssa.FieldAddr:
				a = u.X
				continue
			case *ssa.UnOp:
				a = u.X
				continue
			}
			break
		}
	}
	return false
}

// mapName renders the map a range is over: "wf.informers", a
// variable's name, or "a map".
func mapName(v ssa.Value) string {
	if u, ok := v.(*ssa.UnOp); ok && u.Op == token.MUL {
		if fa, ok := u.X.(*ssa.FieldAddr); ok {
			field := objects.FieldName(fa.X.Type(), fa.Field)
			if base := sourceName(fa.X); base != unnamed {
				return base + "." + field
			}
			return field
		}
	}
	if g, ok := v.(*ssa.Global); ok {
		return g.Name()
	}
	if name := sourceName(v); name != unnamed {
		return name
	}
	return "a map"
}
