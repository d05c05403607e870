package locks

import (
	"go/token"
	"go/types"
	"slices"
	"sort"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/facts"
	"github.com/confinelint/confinelint/internal/diag"
	"github.com/confinelint/confinelint/internal/directive"
	"github.com/confinelint/confinelint/internal/objects"
)

// declHold turns a declared lock of fn (requires, acquires...) into a hold
// at path relative to fn.
func declHold(sig *types.Signature, it facts.DeclItem, shared bool, pos token.Pos) (Hold, bool) {
	p := fromDeclPath(sig, it.Lock, it.LockClass, "")
	if p == "" {
		return Hold{}, false
	}
	name := shortClass(it.LockClass)
	if name == "" {
		name = it.LockText // a lock passed as a parameter has no class
	}
	return Hold{Path: p, Class: it.LockClass, Name: name, Shared: shared, Pos: pos}, true
}

// declaredEntry is the state fn starts in: the locks it requires or
// releases are held by its caller.
func (e *engine) declaredEntry(fn *ssa.Function) State {
	var s State
	for _, it := range items(e.p.FuncDecl(fn)) {
		switch directive.Verb(it.Verb) {
		case directive.Requires, directive.Releases, directive.RequiresShared, directive.ReleasesShared:
			shared := it.Verb == string(directive.RequiresShared) || it.Verb == string(directive.ReleasesShared)
			if h, ok := declHold(fn.Signature, it, shared, fn.Pos()); ok {
				s = s.with(h)
			}
		}
	}
	return s
}

// checkCallDecl checks a call against the callee's requires and excludes.
// A lock held on some paths only is not held (checklocks checks every
// path); one lent to a closure passed to a call is. On a
// +checklocksforce line a missing required lock counts as held from there.
func (w *walker) checkCallDecl(t *target, pos token.Pos, s State) State {
	obj, ok := t.fn.Object().(*types.Func)
	if !ok {
		return s
	}
	name := w.e.funcName(t.fn)
	for _, it := range items(w.e.p.Decl(obj)) {
		verb := directive.Verb(it.Verb)
		switch verb {
		case directive.Requires, directive.RequiresShared, directive.Excludes, directive.ExcludesWrite:
		default:
			continue
		}
		h, ok := declHold(t.fn.Signature, it, false, pos)
		if !ok {
			continue
		}
		p, ok := w.calleePath(t, h.Path)
		if !ok {
			continue
		}
		held, isHeld := s.find(p)
		surely := isHeld && (!held.Maybe || held.Lent)
		switch verb {
		case directive.Requires, directive.RequiresShared:
			exclusive := verb == directive.Requires
			if surely && (!exclusive || !held.Shared) {
				continue
			}
			if w.e.forced(pos) {
				h.Path, h.Shared = p, !exclusive
				s = s.with(h)
				continue
			}
			suffix := heldText(isHeld, held)
			if !exclusive && !isHeld {
				suffix = ""
			}
			w.e.find(pos, "requires", "call to "+name+" requires "+h.Name+requiredMode(exclusive)+suffix)
		case directive.Excludes:
			if isHeld && !held.Lent {
				w.e.find(pos, "excludes", "call to "+name+" while holding "+h.Name+" (taken at "+w.e.at(held.Pos)+maybeText(held)+"): it must not be held")
			}
		case directive.ExcludesWrite:
			if isHeld && !held.Lent && !held.Shared {
				w.e.find(pos, "excludes", "call to "+name+" while holding "+h.Name+" exclusively (taken at "+w.e.at(held.Pos)+maybeText(held)+")")
			}
		}
	}
	return s
}

func requiredMode(exclusive bool) string {
	if exclusive {
		return " held exclusively"
	}
	return " held (at least shared)"
}

func maybeText(h Hold) string {
	if h.Maybe {
		return ", on some paths"
	}
	return ""
}

func heldText(isHeld bool, h Hold) string {
	switch {
	case isHeld && h.Maybe:
		return ", but it is held on some paths only"
	case isHeld && h.Shared:
		return ", but it is only read-locked here"
	}
	return ", but it is not held here"
}

// deferredLeak reports whether a lock held at a return, which no return
// path released, still shows that the function means to release it: it
// defers its unlock on some path (`if id != "" { p.mu.Lock(); if err :=
// f(); err != nil { return err }; defer p.mu.Unlock() }`, whose early
// return comes before the defer). Not when the lock was also taken a
// second time (a double lock, reported as that) or is one of outer, the
// caller's locks let go and taken back (`c.mu.RUnlock(); defer
// c.mu.RLock()`).
func (w *walker) deferredLeak(path string, outer map[string]bool) bool {
	return !w.doubled[path] && !outer[path] && w.deferredUnlock(path)
}

// finishReturns checks every return path of the function against its
// declared and inferred effects and records the summary's acquires.
//
// A lock taken here, definitely held on one return path and definitely
// released on another, is a leak on the first [lock-leak] (a lock handed
// to a callback for release, or taken by a TryLock, is not). One held on every return is
// the function's effect (a lock helper), inferred as if declared acquires.
func (w *walker) finishReturns() {
	decl := w.e.p.FuncDecl(w.fn)
	mustHold := map[string]Hold{}
	mustRelease := map[string]Hold{}
	mustKeep := map[string]Hold{} // requires: held on entry and on return
	for _, it := range items(decl) {
		h, ok := declHold(w.fn.Signature, it, false, w.fn.Pos())
		if !ok {
			continue
		}
		switch directive.Verb(it.Verb) {
		case directive.Acquires, directive.AcquiresShared:
			h.Shared = it.Verb == string(directive.AcquiresShared)
			mustHold[h.Path] = h
		case directive.Releases, directive.ReleasesShared:
			h.Shared = it.Verb == string(directive.ReleasesShared)
			mustRelease[h.Path] = h
		case directive.Requires, directive.RequiresShared:
			h.Shared = it.Verb == string(directive.RequiresShared)
			mustKeep[h.Path] = h
		}
	}
	count := map[string]int{}     // returns holding the path
	released := map[string]bool{} // some return path took and released it
	for _, r := range w.rets {
		for _, h := range r.state.holds {
			if _, atEntry := w.entry.find(h.Path); !h.Maybe && !atEntry {
				count[h.Path]++
			}
		}
		for _, p := range r.state.released {
			released[p] = true
		}
	}
	outer := map[string]bool{} // the caller's locks released here
	for _, r := range w.info.releases {
		outer[r.Path] = true
	}
	w.info.tries = w.tryAcquired()
	boolTry, _ := w.boolTryAcquired()
	w.reportHandleLeaks(count)
	leaked := map[string]bool{}
	leakAt := map[string]int{} // the lock-leak finding of each path
	for _, r := range w.rets {
		for _, h := range r.state.holds {
			_, atEntry := w.entry.find(h.Path)
			_, declared := mustHold[h.Path]
			if w.report && !h.Maybe && !h.Try && !atEntry && !declared && (released[h.Path] || w.deferredLeak(h.Path, outer) || w.loopBodyLeak(h, r)) && !w.fresh(h.Path) && !hasTry(w.info.tries, h.Path) && boolTry.path != h.Path && (!w.successReturn(r) || w.releasedOnSuccess(r, h.Path)) {
				if w.alsoLeakedAt(leakAt, h.Path, r) {
					continue
				}
				leaked[h.Path] = true
				n := len(w.e.findings)
				w.findAtReturn(r, "lock-leak", h.Name+" taken at "+w.e.at(h.Pos)+" is still held on this return path"+leakTail,
					takenHops(h)...)
				if len(w.e.findings) > n {
					leakAt[h.Path] = n
				}
			}
			if w.report && !atEntry && !declared && !leaked[h.Path] && (released[h.Path] || w.unlocked[h.Path]) && w.taggedLeak(h, r) {
				leaked[h.Path] = true
				w.findAtReturn(r, "lock-leak", h.Name+" taken at "+w.e.at(h.Pos)+" is still held on this return path where "+w.condsText(h.conds())+" (other paths release it)",
					takenHops(h)...)
			}
			// A lock let go on a caller's behalf and taken back on a
			// branch (`p.mu.RUnlock(); remove(p); p.mu.RLock()` for a
			// peer whose read lock the loop before took and a later
			// loop releases) is the caller's again, not a leak.
			retaken := slices.Contains(r.state.outerRel, h.Path)
			if w.report && h.Maybe && (h.leaky || h.sureSide && w.loopTurnLeak(h)) && !h.Loop && !h.Lent && (h.tagKey == "" || w.localTest(h)) && !h.Try && !atEntry && !declared && !leaked[h.Path] && !w.fresh(h.Path) && !retaken {
				leaked[h.Path] = true
				w.findAtReturn(r, "lock-leak", h.Name+" taken at "+w.e.at(h.Pos)+" is still held on some paths into this return and released on others",
					takenHops(h)...)
			}
			if d, ok := mustRelease[h.Path]; ok && w.report && !h.Maybe {
				w.findAtReturn(r, "releases", d.Name+" is declared released but is still held on this return path")
			}
		}
		_, tryWrapped := w.e.tryWrapper(w.fn) // acquires when it returns true
		for _, d := range sortedHolds(mustHold) {
			if h, ok := r.state.find(d.Path); w.report && !tryWrapped && (!ok || h.Maybe) {
				w.findAtReturn(r, "acquires", d.Name+" is declared acquired but is not held on this return path")
			}
		}
		for _, d := range sortedHolds(mustKeep) {
			if h, ok := r.state.find(d.Path); w.report && (!ok || h.Maybe && !h.Lent || h.Shared && !d.Shared) {
				w.findAtReturn(r, "requires", d.Name+" is required by the function and must still be"+requiredMode(!d.Shared)+" when it returns", w.releasedHere(d)...)
			}
		}
	}
	if w.report {
		w.reportUndeclaredAcquires(count, mustHold)
		w.goroutineLeaks(leaked)
		w.checkResultLocks()
		declared := map[string]bool{}
		for p := range mustHold {
			declared[p] = true
		}
		for p := range mustRelease {
			declared[p] = true
		}
		w.reportUndeclaredOnSome(w.checkReturnStates(w.notReturnState(declared, leaked, outer)))
	}
	// The summary: declared effects, plus locks held on every return. A
	// declared acquire the function makes exactly when it reports success
	// (vfs.PrepareDeleteDentry: `return EBUSY` before taking d.mu) goes to
	// callers as the try-acquire it is.
	for _, d := range sortedHolds(mustHold) {
		switch {
		case hasTry(w.info.tries, d.Path):
		case w.declaredOnSuccess(d.Path):
			idx, successNil, _ := successResult(w.fn.Signature)
			w.info.tries = append(w.info.tries, tryAcquire{Hold: d, Result: idx, Nil: successNil})
		default:
			w.info.acquires = append(w.info.acquires, d)
		}
	}
	if len(w.rets) > 0 {
		for _, h := range w.rets[0].state.holds {
			if _, declared := mustHold[h.Path]; !declared && w.leftHeld(h, count) {
				h.Maybe, h.Loop = false, false
				w.info.acquires = append(w.info.acquires, byClass(h))
			}
		}
	}
	w.summarizeReleaseFuncs()
	w.info.resultLocks = w.inferResultLocks(count)
	// A caller's lock released inside counts only if no return path holds
	// it again (release, work, re-acquire is no net effect).
	kept := w.info.releases[:0]
	for _, r := range w.info.releases {
		again := false
		for _, ret := range w.rets {
			if _, held := ret.state.find(r.Path); held {
				again = true
			}
		}
		if !again {
			kept = append(kept, r)
			if !w.releasedOnEveryReturn(r.Path) {
				w.info.partial = append(w.info.partial, r.Class)
			}
		}
	}
	w.info.releases = kept
	for _, d := range sortedHolds(mustRelease) {
		w.info.addRelease(d)
	}
}

// releasedHere points at where the function unlocks d's lock, if it does.
func (w *walker) releasedHere(d Hold) []diag.Hop {
	if pos, ok := w.unlockAt[d.Path]; ok {
		return []diag.Hop{{Pos: pos, What: d.Name + " released here"}}
	}
	return nil
}

func sortedHolds(m map[string]Hold) []Hold {
	var out []Hold
	for _, h := range m {
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// checkBefore reports taking h while holding o when h's lock is declared
// //confined:before o's.
func (w *walker) checkBefore(o, h Hold, pos token.Pos) bool {
	v := w.e.classVars[h.Class]
	if v == nil {
		return false
	}
	for _, it := range items(w.e.p.Decl(v)) {
		if it.Verb == string(directive.Before) && it.LockClass == o.Class {
			if w.report {
				w.e.find(pos, "before-order", h.Name+" is declared before "+o.Name+" but is taken while "+o.Name+" is held (since "+w.e.at(o.Pos)+")")
			}
			return true
		}
	}
	return false
}

// checkDeclarations is the place for declaration-level checks.
func (e *engine) checkDeclarations() { e.checkAliasRedundancy() }

// items is d's items; a nil Decl (no directive) has none.
func items(d *facts.Decl) []facts.DeclItem {
	if d == nil {
		return nil
	}
	return d.Items
}

// fresh reports whether path is rooted at an object this function
// creates (objects.Index.Origin). Its lock left held on an error return
// dies with the object (deflate_test's syncBuffer) or goes with it to
// whoever the object is handed to; neither is a leak of anyone's lock.
func (w *walker) fresh(path string) bool { return w.freshOrigin(path) != nil }

// freshOrigin is the instruction that created the object path is rooted
// at, when this function created it (objects.Index.Origin); nil if not.
func (w *walker) freshOrigin(path string) ssa.Value {
	root := w.rootValue(path)
	if root == nil {
		return nil
	}
	return w.e.objs.Origin(w.fn, root.(ssa.Value))
}

// loopBodyLeak reports whether return r, a failure (an error result),
// leaves a lock held that a loop body takes and unlocks each turn before
// going round: the return leaves from the middle of the body with the
// lock its own unlock was to let go (thrift's AcceptLoop returning the
// accept error with p.mu held, so that Stop blocks for good). No other
// return need release it.
func (w *walker) loopBodyLeak(h Hold, r retState) bool {
	if !w.unlocked[h.Path] || h.Maybe {
		return false
	}
	if _, failure, ok := outcomeOf(w.fn, r); !ok || !failure {
		return false
	}
	take := callAtPos(w.fn, h.Pos, nil)
	return take != nil && objects.OnCycle(take.Block())
}

// freshUndeclared is fresh, but not for an object a constructor returns
// with a lock it declares held (+checklocksacquire on its result): that
// lock is the caller's to release on every path, as checklocks checks.
func (w *walker) freshUndeclared(path string) bool {
	o := w.freshOrigin(path)
	if ex, ok := o.(*ssa.Extract); ok {
		o = ex.Tuple
	}
	if c, ok := o.(*ssa.Call); ok && w.e.declaresAcquire(c.Call.StaticCallee()) {
		return false
	}
	return o != nil
}

// throughStored reports whether the lock at rest inside v is named through
// a field stored with a named value (objects.Through).
func throughStored(fn *ssa.Function, v ssa.Value, rest string, at ssa.Instruction) bool {
	_, ok := objects.Through(fn, v, rest, at)
	return ok
}

// releasedOnEveryReturn reports whether every return of the function
// follows the release of the caller's lock at path.
func (w *walker) releasedOnEveryReturn(path string) bool {
	for _, ret := range w.rets {
		if !ret.state.wasReleased(path) {
			return false
		}
	}
	return true
}
