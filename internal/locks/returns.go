package locks

import (
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// Locks named through a result (+checklocksacquire:t.mu on
// `func f() (t *T)`), and the same lock state on every return path.

// resultLock is a declared acquire rooted at a result: result index and
// the field path after it (".mu").
type resultLock struct {
	index  int
	rest   string
	hold   Hold
	shared bool
}

// resultLocks returns fn's declared acquires rooted at a result.
func (e *engine) resultLocks(fn *ssa.Function) []resultLock {
	obj, ok := fn.Object().(*types.Func)
	if !ok {
		return nil
	}
	var out []resultLock
	for _, it := range items(e.p.Decl(obj)) {
		verb := directive.Verb(it.Verb)
		if verb != directive.Acquires && verb != directive.AcquiresShared {
			continue
		}
		root, rest, _ := strings.Cut(it.Lock, ".")
		i, err := strconv.Atoi(strings.TrimPrefix(root, "result"))
		if !strings.HasPrefix(root, "result") || err != nil {
			continue
		}
		if rest != "" {
			rest = "." + rest
		}
		shared := verb == directive.AcquiresShared
		out = append(out, resultLock{index: i, rest: rest, shared: shared,
			hold: Hold{Class: it.LockClass, Name: shortClass(it.LockClass), Shared: shared}})
	}
	return out
}

// findAtReturn reports a finding about return path r: at the return
// statement, or, for the implicit return at the end of the body, at the
// function's name, as checklocks does, with the closing brace as the
// first related position (and an ignore there still silencing it).
func (w *walker) findAtReturn(r retState, rule, msg string, chain ...diag.Hop) {
	at := w.fn.Pos()
	if !r.implicit || !at.IsValid() {
		w.e.find(r.pos, rule, msg, chain...)
		return
	}
	hops := append([]diag.Hop{{Pos: r.pos, What: "the function returns here, at the end of its body"}}, chain...)
	w.e.findAlso(at, rule, msg+" (at the implicit return, "+w.e.at(r.pos)+")", []token.Pos{r.pos}, hops...)
}

// alsoLeakedAt adds return r to the lock-leak finding already made for
// path in this function, if there is one: early returns that all forget
// one unlock are one problem, fixed once (a deferred unlock).
func (w *walker) alsoLeakedAt(leakAt map[string]int, path string, r retState) bool {
	i, ok := leakAt[path]
	if !ok {
		return false
	}
	f := &w.e.findings[i]
	f.Also = append(f.Also, r.pos)
	f.Chain = append(f.Chain, diag.Hop{Pos: r.pos, What: alsoLeaked})
	more := 0
	for _, h := range f.Chain {
		if h.What == alsoLeaked {
			more++
		}
	}
	before, _, _ := strings.Cut(f.Message, " on this return path")
	_, after, _ := strings.Cut(f.Message, leakTail)
	f.Message = before + " on this return path and " + strconv.Itoa(more) + " more" + leakTail + after
	return true
}

const (
	leakTail   = " (other paths release it)" // ends a lock-leak message at a return
	alsoLeaked = "also still held on this return path"
)

// resultPaths returns the paths, at return r, of fn's locks declared
// through a result.
func (w *walker) resultPaths(r retState) map[string]bool {
	out := map[string]bool{}
	if r.ret == nil {
		return out
	}
	for _, rl := range w.e.resultLocks(w.fn) {
		if rl.index < len(r.ret.Results) {
			out[pathOf(w.fn, resultSlotValue(r.ret.Results[rl.index]))+rl.rest] = true
		}
	}
	return out
}

// checkResultLocks reports a return path on which a lock declared
// acquired through a result is not held.
func (w *walker) checkResultLocks() {
	for _, rl := range w.e.resultLocks(w.fn) {
		for _, r := range w.rets {
			if r.ret == nil || rl.index >= len(r.ret.Results) {
				continue
			}
			res := resultSlotValue(r.ret.Results[rl.index])
			if nilConstant(res) {
				continue // a nil result holds no lock
			}
			h, ok := r.state.find(pathOf(w.fn, res) + rl.rest)
			if through, named := objects.Through(w.fn, res, rl.rest, r.ret); !ok && named {
				h, ok = r.state.find(through) // h.ep.mu of h := &handshake{ep: e} is e.mu
			}
			if !ok || h.Maybe || rl.shared != h.Shared && !rl.shared {
				w.findAtReturn(r, "acquires", rl.hold.Name+" is declared acquired but is not held on this return path")
			}
		}
	}
}

// resultAcquires applies, after a call, the locks the callee declares
// acquired through its results: they are held in the call's value.
func (w *walker) resultAcquires(call *ssa.Call, s State) State {
	callee := call.Call.StaticCallee()
	if callee == nil {
		return s
	}
	for _, rl := range w.calleeResultLocks(w.e.canonical(callee)) {
		base := resultValue(call, rl.index)
		if base == nil {
			continue
		}
		h := rl.hold
		h.Path, h.Pos = pathOf(w.fn, base)+rl.rest, call.Pos()
		if returnsNil(callee, rl.index) {
			// A nil result holds no lock: held where the call reports
			// success (its error nil, or else the result not nil).
			h = w.heldOnSuccess(h, call, callee.Signature, base)
		}
		if through, ok := objects.Through(w.fn, base, rl.rest, call); ok {
			if _, held := s.find(through); held {
				continue // the callee names a lock its caller holds (gVisor's AssertLockHeld)
			}
			h.Path = through
		}
		s = s.with(h)
	}
	return s
}

// heldOnSuccess makes h, a lock in result value base of call, held
// exactly where the caller's test says the call succeeded, as a
// try-acquire (applyTryAcquires): its error is nil, or, for a function
// with one result, that result is not nil. With another kind of error
// result (gVisor's tcpip.Error) the test cannot be read: h is held, and a
// path that does not release it is no leak (Try).
func (w *walker) heldOnSuccess(h Hold, call *ssa.Call, sig *types.Signature, base ssa.Value) Hold {
	if idx, successNil, ok := successResult(sig); ok && successNil {
		if r := resultValue(call, idx); r != nil {
			h.Maybe, h.tagKey, h.tagVal, h.tagNeg = true, w.condKey(r), nilConst, false
			return h
		}
	}
	if sig.Results().Len() == 1 {
		h.Maybe, h.tagKey, h.tagVal, h.tagNeg = true, w.condKey(base), nilConst, true
		return h
	}
	h.Try = true
	return h
}

// returnsNil reports whether fn, a function with a body, returns the nil
// constant as its result i on some path.
func returnsNil(fn *ssa.Function, i int) bool {
	return slices.ContainsFunc(returnedAt(fn, i), nilConstant)
}

// returnedAt lists what fn's returns give as its result i.
func returnedAt(fn *ssa.Function, i int) []ssa.Value {
	var out []ssa.Value
	for _, b := range fn.Blocks {
		if ret, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok && i < len(ret.Results) {
			out = append(out, ret.Results[i])
		}
	}
	return out
}

// resultValue is the value of result i of call: the call itself, or the
// extraction of i from its tuple.
func resultValue(call *ssa.Call, i int) ssa.Value {
	if call.Call.Signature().Results().Len() == 1 {
		return call
	}
	for _, ref := range *call.Referrers() {
		if x, ok := ref.(*ssa.Extract); ok && x.Index == i {
			return x
		}
	}
	return nil
}

// checkReturnStates reports, once at the function, a lock held on some
// return paths and not on others (or on some paths into one return), as
// checklocks does, and returns those locks' paths. skip says which locks
// do not count.
func (w *walker) checkReturnStates(skip func(h Hold, r retState) bool) []string {
	if len(w.rets) == 0 {
		return nil
	}
	held := map[string]int{} // returns where the path is definitely held
	some := map[string]Hold{}
	maybe := map[string]bool{}
	for _, r := range w.rets {
		for _, h := range r.state.holds {
			if skip(h, r) {
				continue
			}
			if _, ok := some[h.Path]; !ok {
				some[h.Path] = h
			}
			if h.Maybe {
				maybe[h.Path] = true
			} else {
				held[h.Path]++
			}
			if h.Shared != some[h.Path].Shared || h.twoModes && w.e.guardsAnnotated(h.Class) {
				maybe[h.Path] = true // read-locked on one path, locked on another
			}
		}
	}
	var bad []string
	for p := range some {
		if maybe[p] || held[p] < w.returnsReached(p) {
			bad = append(bad, p)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	var names []string
	for _, p := range bad {
		names = append(names, some[p].Name+" (taken at "+w.e.at(some[p].Pos)+")")
	}
	w.e.find(w.fn.Pos(), "inconsistent-return", "the function returns with different locks held on different paths: "+
		strings.Join(names, ", ")+" held on some return paths only")
	return bad
}

// notReturnState says which holds checkReturnStates leaves out: locks
// taken by TryLock or by a function acquiring on success (conditional
// acquires), held over a loop's back-edge
// (lock-leak's business) or lent to a closure; a conditional lock whose
// unlock is conditional too (correlated branches); the caller's locks
// released and taken again, and locks whose state comes from the caller;
// locks left held by a callee without a declaration (inferred helpers),
// locks with a declared effect, declared through a result, already
// reported as leaked, of an object the function creates, or of a value
// that does not exist on every path to the return; locks a
// +checklocksforce asserts held; locks whose unlock is deferred (a
// lock-plus-conditional-defer pair); in a closure run in place, what its
// caller decides (callersChoice); and, in a goroutine, a lock handed to
// code of its family that unlocks it (handsOver).
func (w *walker) notReturnState(declared, leaked, outer map[string]bool) func(Hold, retState) bool {
	return func(h Hold, r retState) bool {
		if h.Try || h.Loop || h.Lent || h.Inferred || declared[h.Path] || leaked[h.Path] || outer[h.Path] || w.handsOver(h) {
			return true
		}
		if w.e.forced(h.Pos) {
			return true // asserted held by a +checklocksforce, not taken here
		}
		// Held exactly where a callee's success says, or acquired on
		// success here (tryacquire.go).
		if h.tagKey != "" && h.tagVal == nilConst || hasTry(w.info.tries, h.Path) || w.tableAcquire(h) || w.tryLocksAt(h.Path) || w.resultSaysHeld(h.Path) || w.handedWithResult(h.Path) {
			return true
		}
		if h.Maybe && w.unlocked[h.Path] {
			return true
		}
		if e, atEntry := w.entry.find(h.Path); atEntry && e.Maybe {
			return true
		}
		if w.inPlaceClosure() && w.callersChoice(h) {
			return true
		}
		if w.argumentChoice(h) || otherObjectTake(h, r.state) {
			return true
		}
		return w.resultPaths(r)[h.Path] || w.returned(h.Path, r) || !w.rootReaches(h.Path, r) || w.freshUndeclared(h.Path) || w.deferredUnlock(h.Path)
	}
}

// otherObjectTake reports whether h is held exactly where its object is
// not the one of another lock of its class held in s: the idiom that
// locks two objects without locking one twice (`a.mu.Lock(); if a != b {
// b.mu.Lock() }`, badger's lockLevels), which its unlock pairs with the
// same test.
func otherObjectTake(h Hold, s State) bool {
	if !h.Maybe || h.tagVal == nil || h.tagVal.Kind() != constant.Bool || constant.BoolVal(h.tagVal) != h.tagNeg {
		return false // not held exactly where the test is false
	}
	for _, o := range s.holds {
		if o.Path != h.Path && o.Class == h.Class && !o.Maybe && comparesObjects(h.tagKey, objectOf(h.Path), objectOf(o.Path)) {
			return true
		}
	}
	return false
}

// objectOf is the path of the object holding the lock at path p.
func objectOf(p string) string {
	if i := strings.LastIndexByte(p, '.'); i > 0 {
		return p[:i]
	}
	return p
}

// inPlaceClosure reports whether the walked function is a closure checked
// under its caller's state: called where it is made, deferred, or the
// body of a range-over-func loop.
func (w *walker) inPlaceClosure() bool {
	return w.fn.Parent() != nil && w.e.closureEntry[w.fn] != nil
}

// callersChoice reports whether h, at a return of a closure run in place,
// is held or not as its caller decides: a lock of the caller's state let
// go on some paths (an early return out of a range-over-func body that
// unlocks first), or one taken on a branch on a captured variable or a
// parameter (`lock := func() { if needLock { mu.Lock() } }`). The caller
// goes on with the closure's effect; its own returns are checked.
func (w *walker) callersChoice(h Hold) bool {
	if _, atEntry := w.entry.find(h.Path); atEntry {
		return true
	}
	if !h.Maybe || h.tagKey == "" || w.e.guardsAnnotated(h.Class) {
		return false // a lock annotations rely on: one state on every return
	}
	flag, _, _ := strings.Cut(h.tagKey, "#")
	return paramIndex(flag, "f") >= 0 || paramIndex(flag, "p") >= 0
}

// argumentChoice reports whether h, a lock no guard annotation names, is
// held at a return exactly where a parameter says so: `func (db *MemDB)
// Txn(write bool) *Txn { if write { db.writer.Lock() } ... }` acquires on
// request (go-memdb), the caller's choice as for a closure run in place;
// in a Locker's own Lock method, also where a flag of the receiver the
// method does not set says so, a mode the owner chose (logrus's
// MutexWrap: `if !mw.disabled { mw.lock.Lock() }`; any other function
// locking on a field's say is reported). A lock annotations rely on keeps
// checklocks' rule: one state on every return.
func (w *walker) argumentChoice(h Hold) bool {
	if !h.Maybe || h.tagKey == "" || h.tag2Key != "" || strings.Contains(h.tagKey, "==") || w.e.guardsAnnotated(h.Class) {
		return false // untagged, two conditions, a comparison of two values, annotated
	}
	return paramCond(h.tagKey) || lockerMethod(w.fn) && w.modeFlag(h.tagKey)
}

// returned reports whether path is a lock inside a value return r hands
// to the caller (find, lock and return it, or nil): it goes with the value.
func (w *walker) returned(path string, r retState) bool {
	if r.ret == nil {
		return false
	}
	for _, v := range r.ret.Results {
		if p := pathOf(w.fn, resultSlotValue(v)); strings.HasPrefix(path, p+".") {
			return true
		}
	}
	return false
}

// returnsReached counts the returns path's root value is defined at: a
// lock of a value made or looked up past an early return is not held
// there because it does not exist yet (helm's LockRelease, failing before
// it has the release's lock, then locking it on success).
func (w *walker) returnsReached(path string) int {
	n := 0
	for _, r := range w.rets {
		if w.rootReaches(path, r) {
			n++
		}
	}
	return n
}

// rootReaches reports whether path's root value is defined on every path
// to return r (a parameter, free variable or package var always is).
func (w *walker) rootReaches(path string, r retState) bool {
	v := w.rootValue(path)
	if v == nil || v.Block() == nil || r.ret == nil {
		return true
	}
	return v.Block().Dominates(r.ret.Block())
}

// deferredUnlock reports whether the function defers an unlock of path,
// or hands it to a closure it creates (a deferred or completion callback)
// whose summary releases it.
func (w *walker) deferredUnlock(path string) bool {
	if d, ok := w.deferUnlocks[path]; ok {
		return d
	}
	d := w.scanDeferredUnlock(path)
	if w.deferUnlocks == nil {
		w.deferUnlocks = map[string]bool{}
	}
	w.deferUnlocks[path] = d
	return d
}

func (w *walker) scanDeferredUnlock(path string) bool {
	for _, b := range w.fn.Blocks {
		for _, instr := range b.Instrs {
			switch x := instr.(type) {
			case *ssa.Defer:
				if op, lv := w.e.classify(x.Common()); (op == lockop.Unlock || op == lockop.RUnlock) && w.e.lockPath(w.fn, lv) == path {
					return true
				}
				if w.releasedBy(x.Common(), path) {
					return true // a deferred Unlock method with a release effect
				}
			case *ssa.MakeClosure:
				fn, ok := x.Fn.(*ssa.Function)
				if sum := w.e.summaryOf(fn); ok && sum != nil {
					binds := pathsOf(w.fn, x.Bindings)
					for _, rel := range sum.releases {
						if p, ok := rewrite(rel.Path, nil, binds); ok && p == path {
							return true
						}
					}
				}
			}
		}
	}
	return false
}

// releasedBy reports whether a call (run exactly) releases path.
func (w *walker) releasedBy(call *ssa.CallCommon, path string) bool {
	return w.releasesSome(call, func(p, _ string) bool { return p == path })
}

// releasesSome reports whether a call (run exactly) releases a lock, by
// its path in the caller's terms and class, that is matches.
func (w *walker) releasesSome(call *ssa.CallCommon, matches func(path, class string) bool) bool {
	for _, t := range w.targets(call) {
		if sum := w.e.summaryOf(t.fn); t.exact && sum != nil {
			for _, r := range sum.releases {
				if p, ok := w.calleePath(&t, r.Path); ok && matches(p, r.Class) {
					return true
				}
			}
		}
	}
	return false
}

// declaresAcquire reports whether fn declares a lock it leaves held.
func (e *engine) declaresAcquire(fn *ssa.Function) bool {
	for _, it := range items(e.p.FuncDecl(fn)) {
		if v := directive.Verb(it.Verb); v == directive.Acquires || v == directive.AcquiresShared {
			return true
		}
	}
	return false
}
