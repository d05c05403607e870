package locks

import (
	"slices"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/lockop"
)

// A call that ends the goroutine (t.Fatalf, t.FailNow, runtime.Goexit)
// runs the pending defers before the goroutine goes: a deferred call
// that locks a lock still held there blocks for good, and the test hangs
// instead of failing (grpc-go's keepalive test read-locking cc.mu, then
// t.Fatalf, with `defer cc.Close()` locking cc.mu). os.Exit and
// log.Fatal run no defers.

// goexitNames are the testing methods that end the goroutine through
// runtime.Goexit.
var goexitNames = map[string]bool{
	"FailNow": true, "Fatal": true, "Fatalf": true, "SkipNow": true, "Skip": true, "Skipf": true,
}

// maxGoexitDepth bounds the package calls endsGoroutine follows down.
const maxGoexitDepth = 2

// endsGoroutine reports whether call ends the calling goroutine with its
// defers run: runtime.Goexit, a testing method that calls it, a method
// of the package's one implementation of an interface (a test's own
// tester) or a package function whose every path ends in one.
func (e *engine) endsGoroutine(call *ssa.CallCommon, depth int) bool {
	if call.IsInvoke() {
		if pkg := call.Method.Pkg(); pkg != nil && pkg.Path() == "testing" && goexitNames[call.Method.Name()] {
			return true // testing.TB
		}
		impls := e.implementations(call)
		return len(impls) == 1 && depth < maxGoexitDepth && e.alwaysGoexits(impls[0], depth+1)
	}
	callee := call.StaticCallee()
	if callee == nil {
		return false
	}
	if callee.Pkg != nil {
		switch callee.Pkg.Pkg.Path() {
		case "runtime":
			return callee.Name() == "Goexit"
		case "testing":
			return goexitNames[callee.Name()]
		}
	}
	return depth < maxGoexitDepth && e.p.FuncSet[e.canonical(callee)] && e.alwaysGoexits(e.canonical(callee), depth+1)
}

// alwaysGoexits reports whether every path of fn reaches a call that ends
// the goroutine: none of its returns is reachable past one.
func (e *engine) alwaysGoexits(fn *ssa.Function, depth int) bool {
	if len(fn.Blocks) == 0 {
		return false
	}
	var exits []*ssa.BasicBlock
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			if c, ok := instr.(*ssa.Call); ok && e.endsGoroutine(&c.Call, depth) {
				exits = append(exits, b)
				break
			}
		}
	}
	if len(exits) == 0 {
		return false
	}
	// A return reached from the entry without running through an exit.
	seen := map[*ssa.BasicBlock]bool{}
	queue := []*ssa.BasicBlock{fn.Blocks[0]}
	for len(queue) > 0 {
		b := queue[0]
		queue = queue[1:]
		if seen[b] || slices.Contains(exits, b) {
			continue
		}
		seen[b] = true
		if _, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
			return false
		}
		queue = append(queue, b.Succs...)
	}
	return true
}

// checkDefersAtGoexit reports, at a call that ends the goroutine, the
// first pending deferred call that locks again, on every path, a lock
// still held exclusively when it runs (or write-locks one read-locked
// then). The defers run last registered first: an unlock deferred after
// the Close lets the lock go before the Close takes it.
func (w *walker) checkDefersAtGoexit(call *ssa.Call, s State) {
	if !w.final || !w.report || len(s.defers) == 0 || len(s.holds) == 0 || !w.e.endsGoroutine(&call.Call, 0) {
		return
	}
	for i := len(s.defers) - 1; i >= 0 && len(s.holds) > 0; i-- {
		d := s.defers[i]
		if op, lv := w.e.classify(d.at.Common()); op == lockop.Unlock || op == lockop.RUnlock {
			s = s.without(w.holdOf(lv, op.Shared(), d.at.Pos()).Path)
			continue
		} else if op != lockop.None {
			continue
		}
		for _, t := range w.deferTargets(d.at) {
			sum := w.e.summaryOf(t.fn)
			if sum == nil {
				continue
			}
			if !d.maybe && t.exact && w.reportDeferRelock(call, d, &t, sum, s) {
				return
			}
			for _, r := range sum.releases {
				if p, ok := w.calleePath(&t, r.Path); ok {
					s = s.without(p)
				}
			}
		}
	}
}

// reportDeferRelock reports the deferred call d, to t, that takes again a
// lock held in s, and says whether it did.
func (w *walker) reportDeferRelock(call *ssa.Call, d deferred, t *target, sum *funcInfo, s State) bool {
	for _, tk := range sum.takes {
		if tk.branch+tk.cond > 0 || tk.loose || tk.afterRelease || tk.Via.len() >= maxVia {
			continue
		}
		p, ok := w.calleePath(t, tk.Path)
		if !ok {
			continue
		}
		old, held := s.find(p)
		if !held || old.Maybe || old.Opaque || old.Shared && tk.Shared {
			continue
		}
		via := t.name(w.e)
		if tk.Via != nil {
			via += " -> " + tk.Via.text()
		}
		mode := " held"
		if old.Shared {
			mode = " read-locked"
		}
		w.e.find(call.Pos(), "double-lock", w.exitName(call)+" ends the goroutine with "+old.Name+mode+" (since "+w.e.at(old.Pos)+"), and the deferred "+via+" locks it again (at "+tk.At+"): the goroutine blocks in its defers instead of ending",
			diag.Hop{Pos: old.Pos, What: old.Name + " taken here"}, diag.Hop{Pos: d.at.Pos(), What: "deferred here"})
		return true
	}
	return false
}

// exitName names the call that ends the goroutine: its method for an
// interface call (Fatalf on a test's tester), else its callee.
func (w *walker) exitName(call *ssa.Call) string {
	if call.Call.IsInvoke() {
		return call.Call.Method.Name()
	}
	callee := call.Call.StaticCallee()
	if callee.Pkg != nil && callee.Pkg.Pkg.Path() == "testing" {
		return callee.Name() // Fatalf, not testing.common.Fatalf
	}
	return w.e.funcName(callee)
}

// deferTargets resolves a deferred call as the walk resolves a call made
// at the defer.
func (w *walker) deferTargets(d *ssa.Defer) []target {
	at := w.at
	w.at = d
	defer func() { w.at = at }()
	return append([]target(nil), w.targets(d.Common())...)
}
