package locks

import (
	"go/token"
	"sort"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/roots"
)

// A panic with a lock held leaves it locked when something recovers: the
// deferred calls run, no Unlock is among them, and the program goes on
// (hugo #7191: contentChangeMap.add panics on an unexpected bundle type
// under m.mu; the build recovers the panic as an error, and the
// watcher's next RLock blocks for good; the fix unlocks before the
// panic). Reported only when a function of the package that defers a
// recover reaches the panicking one through calls: without one the
// program dies of the panic, and nothing waits.

// checkPanicHeld reports the locks this function took that are still
// held at panic p once the pending defers have run.
func (w *walker) checkPanicHeld(p *ssa.Panic, s State) {
	if !w.report || !w.final || p.Block() == w.fn.Recover {
		return
	}
	rec, ok := w.e.recoveredBy(w.fn)
	if !ok {
		return
	}
	for _, h := range s.holds {
		if h.Maybe || h.Opaque || h.Lent || h.Class == "" || w.releasedByDefer(s, h.Path) {
			continue
		}
		if _, atEntry := w.entry.find(h.Path); atEntry {
			continue // the caller's lock: its caller's defers may release it
		}
		who := w.e.funcName(rec.fn) + " recovers the panic (at " + w.e.at(rec.at) + ")"
		where := "the panic recovered here"
		if rec.handler != "" {
			who = "net/http recovers the panic of " + w.e.funcName(rec.fn) + ", an " + rec.handler + " handler"
			where = w.e.funcName(rec.fn) + " is run by net/http from here"
		}
		msg := h.Name + " taken at " + w.e.at(h.Pos) + " is still held when this panics, and " + who +
			": the program goes on with " + h.Name + " locked, and its next Lock blocks for good"
		w.e.find(p.Pos(), "lock-leak", msg,
			diag.Hop{Pos: h.Pos, What: h.Name + " taken here"},
			diag.Hop{Pos: rec.at, What: where})
	}
}

// releasedByDefer reports whether a pending defer lets go of path.
func (w *walker) releasedByDefer(s State, path string) bool {
	for _, d := range s.defers {
		call := d.at.Common()
		if op, lv := w.e.classify(call); op == lockop.Unlock || op == lockop.RUnlock {
			if w.holdOf(lv, op.Shared(), d.at.Pos()).Path == path {
				return true
			}
			continue
		}
		if w.releasedBy(call, path) {
			return true
		}
	}
	return false
}

// recoverer is a function of the package that defers a recover, and
// where the recover is; or an HTTP handler, whose panics net/http's
// server recovers (logged, the connection closed, the server going on),
// and where it is registered.
type recoverer struct {
	fn      *ssa.Function
	at      token.Pos
	handler string // the root's API ("http.Handler.ServeHTTP"), for a handler
}

// recoveredBy returns the recoverer a panic in fn reaches: fn itself, or
// a function that calls fn, directly or not; ok is false when there is
// none in the package. Goroutines started on the way recover nothing
// for their starter.
func (e *engine) recoveredBy(fn *ssa.Function) (recoverer, bool) {
	if e.recovering == nil {
		e.recovering = map[*ssa.Function]recoverer{}
		var recs []recoverer
		for _, f := range e.p.Funcs {
			// A test that recovers a panic checks that it happens, and
			// drops what panicked (pebble's TestErrors, injecting faults
			// into one database after another): no program goes on. The
			// code a test exercises, written in its _test.go files, does.
			if rec := deferredRecover(f); rec != nil && !(e.inTest(f.Pos()) && roots.TestHarness(e.p.Pass.Fset, f)) {
				recs = append(recs, recoverer{fn: f, at: rec.Pos()})
			}
		}
		for _, r := range e.ctx.Roots {
			if r.Func != nil && strings.HasPrefix(r.Via, "http.") {
				recs = append(recs, recoverer{fn: r.Func, at: r.Pos, handler: r.Via})
			}
		}
		sort.SliceStable(recs, func(i, j int) bool { return recs[i].fn.Pos() < recs[j].fn.Pos() })
		for _, r := range recs {
			e.coverCalls(r.fn, r)
		}
	}
	rec, ok := e.recovering[fn]
	return rec, ok
}

// coverCalls marks fn and every function it calls, directly or not (not
// through go statements), as covered by rec.
func (e *engine) coverCalls(fn *ssa.Function, rec recoverer) {
	if _, seen := e.recovering[fn]; seen || !e.p.FuncSet[fn] {
		return
	}
	e.recovering[fn] = rec
	for _, b := range fn.Blocks {
		for _, in := range b.Instrs {
			c, ok := in.(*ssa.Call)
			if !ok {
				continue
			}
			if callee := c.Call.StaticCallee(); callee != nil {
				e.coverCalls(callee, rec)
			} else if mc, ok := c.Call.Value.(*ssa.MakeClosure); ok {
				if lit, ok := mc.Fn.(*ssa.Function); ok {
					e.coverCalls(lit, rec)
				}
			}
		}
	}
}

// deferredRecover returns the recover() call of a function fn defers, or
// nil.
func deferredRecover(fn *ssa.Function) *ssa.Call {
	for _, b := range fn.Blocks {
		for _, in := range b.Instrs {
			d, ok := in.(*ssa.Defer)
			if !ok {
				continue
			}
			var callee *ssa.Function
			switch v := d.Call.Value.(type) {
			case *ssa.Function:
				callee = v
			case *ssa.MakeClosure:
				callee, _ = v.Fn.(*ssa.Function)
			}
			if rec := recoverCall(callee); rec != nil {
				return rec
			}
		}
	}
	return nil
}

// recoverCall returns fn's call of the builtin recover, or nil.
func recoverCall(fn *ssa.Function) *ssa.Call {
	if fn == nil {
		return nil
	}
	for _, b := range fn.Blocks {
		for _, in := range b.Instrs {
			if c, ok := in.(*ssa.Call); ok {
				if bi, ok := c.Call.Value.(*ssa.Builtin); ok && bi.Name() == "recover" {
					return c
				}
			}
		}
	}
	return nil
}
