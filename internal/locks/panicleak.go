package locks

import (
	"go/constant"
	"go/token"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
	"github.com/confinelint/confinelint/internal/roots"
)

// A panic with a lock held leaves it locked when something recovers: the
// deferred calls run, no Unlock is among them, and the program goes on
// (hugo #7191: contentChangeMap.add panics on an unexpected bundle type
// under m.mu; the build recovers the panic as an error, and the
// watcher's next RLock blocks for good; the fix unlocks before the
// panic). Reported only when a function of the package that defers a
// recover reaches the panicking one through calls: without one the
// program dies of the panic, and nothing waits. A panic raised in a
// function of the package the holder calls (up to maxPanicDepth calls
// down) unwinds through the holder the same way (etcd's Txn holding the
// batch lock across txn, whose failed write panics), and so does a
// function passed in and called with the lock held (bolt's Update running
// fn between taking its writer lock and committing). A write to a nil
// map is a panic too, one the source does not spell.

// checkPanicHeld reports the locks this function took that are still
// held at panic p once the pending defers have run.
func (w *walker) checkPanicHeld(p *ssa.Panic, s State) {
	if !w.report || !w.final || p.Block() == w.fn.Recover || exits(p) {
		return
	}
	if call := noReturnCall(p); call != nil {
		if at, _ := w.calledPanic(call); at.IsValid() {
			return // a package function that always panics: checkCalleePanic says which
		}
	}
	w.reportPanicHeld(p.Pos(), "this panics", s, true)
}

// noReturnCall returns the call before p when p is the panic SSA places
// after a call that cannot return (the vet tool builds with ctrlflow's
// no-return facts), nil for a panic of the source.
func noReturnCall(p *ssa.Panic) *ssa.Call {
	mi, ok := p.X.(*ssa.MakeInterface)
	if !ok {
		return nil
	}
	c, ok := mi.X.(*ssa.Const)
	if !ok || c.Value == nil || c.Value.Kind() != constant.String || constant.StringVal(c.Value) != "noreturn" {
		return nil
	}
	instrs := p.Block().Instrs
	i := slices.Index(instrs, ssa.Instruction(p)) - 1
	if i >= 0 && instrs[i] == ssa.Instruction(mi) {
		i-- // the panic's operand is made between the call and the panic
	}
	if i < 0 {
		return nil
	}
	call, _ := instrs[i].(*ssa.Call)
	return call
}

// exits reports whether p follows a call that ends the program or the
// goroutine (os.Exit, log.Fatal, a logger's Fatal, runtime.Goexit,
// t.FailNow): no caller recovers anything. A call that cannot return
// because it panics (a Must helper) is a panic still.
func exits(p *ssa.Panic) bool {
	call := noReturnCall(p)
	if call == nil {
		return false
	}
	name := ""
	if call.Call.IsInvoke() {
		name = call.Call.Method.Name()
	} else if f := call.Call.StaticCallee(); f != nil {
		name = f.Name()
	}
	return exitNames[name]
}

// exitNames are the names of functions and methods that end the program
// or the goroutine rather than panic.
var exitNames = map[string]bool{
	"Exit": true, "Fatal": true, "Fatalf": true, "Fatalln": true, "Fatalw": true,
	"Goexit": true, "FailNow": true, "SkipNow": true, "Skip": true, "Skipf": true,
}

// checkCalleePanic reports the locks this function took that are still
// held when a function of the package it calls panics (etcd's Txn, whose
// txn panics on a failed write while Txn holds the backend's batch lock
// until txnWrite.End): the panic unwinds through here with them held.
func (w *walker) checkCalleePanic(call *ssa.Call, s State) {
	if !w.report || !w.final || call.Block() == w.fn.Recover {
		return
	}
	if at, fn := w.calledPanic(call); at.IsValid() {
		// Not where only net/http recovers: its recovery covers every
		// handler's reach, so every panic under any lock down there would
		// count (nats' gateway lock held over a json.Marshal that cannot
		// fail): a panic of the holder's own is evidence enough there.
		w.reportPanicHeld(call.Pos(), w.e.funcName(fn)+" panics (at "+w.e.at(at)+")", s, false)
	}
}

// calledPanic returns where the package function call runs panics, and
// that function; NoPos when it does not, or is no package function.
func (w *walker) calledPanic(call *ssa.Call) (token.Pos, *ssa.Function) {
	callee := call.Call.StaticCallee()
	if callee == nil {
		if call.Call.IsInvoke() {
			return token.NoPos, nil
		}
		// A func value: the package functions it may be (a callback
		// passed in, bolt's Update running fn); one that panics unwinds
		// through here.
		for _, f := range w.e.funcsOf(w.fn, call.Call.Value) {
			if at := w.e.panicsAtCached(f); at.IsValid() {
				return at, f
			}
		}
		return token.NoPos, nil
	}
	fn := w.e.canonical(callee)
	if !w.e.p.FuncSet[fn] {
		return token.NoPos, nil
	}
	return w.e.panicsAtCached(fn), fn
}

// panicsAtCached is panicsAt(fn, 0), computed once per function.
func (e *engine) panicsAtCached(fn *ssa.Function) token.Pos {
	at, ok := e.panicCache[fn]
	if !ok {
		at = e.panicsAt(fn, 0)
		if e.panicCache == nil {
			e.panicCache = map[*ssa.Function]token.Pos{}
		}
		e.panicCache[fn] = at
	}
	return at
}

// maxPanicDepth bounds the calls panicsAt follows down.
const maxPanicDepth = 2

// panicsAt returns where fn, or a package function it calls, panics
// (outside a recover's block and outside a function that recovers
// itself); NoPos when nowhere.
func (e *engine) panicsAt(fn *ssa.Function, depth int) token.Pos {
	if fn.Recover != nil || len(fn.Blocks) == 0 {
		return token.NoPos
	}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			switch in := instr.(type) {
			case *ssa.Panic:
				if !exits(in) {
					return in.Pos()
				}
			case *ssa.MapUpdate:
				if c, ok := in.Map.(*ssa.Const); ok && c.IsNil() {
					return in.Pos() // a write to a nil map
				}
			case *ssa.Call:
				callee := in.Call.StaticCallee()
				if depth >= maxPanicDepth || callee == nil || callee == fn || !e.p.FuncSet[e.canonical(callee)] {
					continue
				}
				if at := e.panicsAt(e.canonical(callee), depth+1); at.IsValid() {
					return at
				}
			}
		}
	}
	return token.NoPos
}

// reportPanicHeld reports each lock held in s, not let go by a pending
// defer, at pos where a panic leaves the function (what says what
// panics), when a function of the package recovers it, or net/http
// (byHandler).
func (w *walker) reportPanicHeld(pos token.Pos, what string, s State, byHandler bool) {
	rec, ok := w.e.recoveredBy(w.fn)
	if !ok || rec.handler != "" && !byHandler {
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
		msg := h.Name + " taken at " + w.e.at(h.Pos) + " is still held when " + what + ", and " + who +
			": the program goes on with " + h.Name + " locked, and its next Lock blocks for good"
		w.e.find(pos, "lock-leak", msg,
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
		// The hold under the name the call gives it (a transaction's End
		// releasing the batch lock its Write took through a getter).
		if w.releasesSome(call, func(p, class string) bool {
			o, ok := s.underOtherName(Hold{Path: p, Class: class})
			return p == path || ok && o.Path == path
		}) {
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

// recoverCall returns fn's call of the builtin recover, or nil; nil too
// when fn panics again with what it recovered (pebble's Open frees its
// memory on a panic and re-panics): the panic goes on up.
func recoverCall(fn *ssa.Function) *ssa.Call {
	if fn == nil {
		return nil
	}
	var rec *ssa.Call
	for _, b := range fn.Blocks {
		for _, in := range b.Instrs {
			if c, ok := in.(*ssa.Call); ok && rec == nil {
				if bi, ok := c.Call.Value.(*ssa.Builtin); ok && bi.Name() == "recover" {
					rec = c
				}
			}
		}
	}
	if rec == nil {
		return nil
	}
	for _, b := range fn.Blocks {
		for _, in := range b.Instrs {
			if p, ok := in.(*ssa.Panic); ok && objects.Underlying(p.X) == ssa.Value(rec) {
				return nil
			}
		}
	}
	return rec
}
