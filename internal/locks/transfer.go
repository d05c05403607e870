package locks

import (
	"go/token"
	"go/types"
	"slices"
	"strings"

	"github.com/confinelint/confinelint/internal/diag"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
	"github.com/confinelint/confinelint/internal/objects"
)

// instr applies one instruction to the state.
func (w *walker) instr(instr ssa.Instruction, s State) State {
	switch in := instr.(type) {
	case *ssa.Defer:
		w.checkBlocking(in, s)
		return s.pushDefer(in)
	case *ssa.Go:
		// Runs on another goroutine: no effect on this one's locks, except
		// that a goroutine unlocking our lock takes that unlock over: the
		// function started, or a closure it is given to run
		// (go withRecover(func() { defer b.lock.Unlock() ... })).
		return w.goHandOff(&in.Call, w.handOff(append([]ssa.Value{in.Call.Value}, in.Call.Args...), s, true))
	case *ssa.Call:
		if op, lv := w.e.classify(in.Common()); op != lockop.None {
			return w.lockOp(op, lv, in.Pos(), s)
		}
		w.checkBlocking(in, s)
		w.checkCalleePanic(in, s)
		w.checkDefersAtGoexit(in, s)
		s = w.checkAccess(in, s) // package vars passed to the call
		return w.resultAcquires(in, w.call(in.Common(), in.Pos(), s))
	case *ssa.RunDefers:
		return w.runDefers(in, s)
	case *ssa.Panic:
		w.checkPanicHeld(in, s)
	case *ssa.Return:
		// The recover block's return ends a panicking path: not a leak.
		var handed []releaseFunc
		if w.final {
			handed = w.returnedReleases(in, s)
		}
		s = w.handOff(in.Results, s, false)
		if w.final && in.Block() != w.fn.Recover {
			w.rets = append(w.rets, retState{pos: returnPos(w.fn, in), state: s, ret: in, implicit: !in.Pos().IsValid(), handed: handed})
		}
	case *ssa.MakeClosure:
		if w.report {
			w.e.recordClosureEntry(w.fn, in, s)
		}
	case *ssa.Store:
		s = w.collectedHeld(in, s)
	}
	w.checkBlocking(instr, s)
	w.noteGuardedStore(instr, s)
	return w.checkAccess(instr, s)
}

// collectedHeld hands over the locks of an object appended to a slice
// while they are held (`toDelete = append(toDelete, cr)` with cr.mu left
// locked, buildkit's prune): what releases them is a later loop over
// that slice, which the walk cannot pair with each element, so they are
// no longer this path's.
func (w *walker) collectedHeld(st *ssa.Store, s State) State {
	ia, ok := st.Addr.(*ssa.IndexAddr)
	if !ok {
		return s
	}
	if arr, ok := objects.Underlying(ia.X).(*ssa.Alloc); !ok || !appended(arr) {
		return s // not append's arguments: a call's variadic array (fmt's), a slice from elsewhere
	}
	obj := pathOf(w.fn, st.Val)
	if obj == "" {
		return s
	}
	for _, h := range s.holds {
		if rest, ok := strings.CutPrefix(h.Path, obj+"."); ok && inObject(st.Val.Type(), rest) {
			s = s.handedOff(h.Path)
		}
	}
	return s
}

// inObject reports whether the lock at path rest inside a value of type t
// is the object's own: reached through fields held by value, not through
// a pointer to another object (epoll's lists lock reached from a poll
// entry appended to its ready list stays the walk's to release).
func inObject(t types.Type, rest string) bool {
	names := strings.Split(rest, ".")
	for _, name := range names[:len(names)-1] {
		st, ok := derefStruct(t)
		if !ok {
			return false
		}
		var next types.Type
		for f := range st.Fields() {
			if f.Name() == name {
				next = f.Type()
			}
		}
		if next == nil {
			return false
		}
		if _, ptr := next.Underlying().(*types.Pointer); ptr {
			return false
		}
		t = next
	}
	return true
}

// appended reports whether arr, an array made here, holds the elements
// append adds to a slice: `append(s, x)`'s variadic arguments.
func appended(arr *ssa.Alloc) bool {
	for _, ref := range *arr.Referrers() {
		sl, ok := ref.(*ssa.Slice)
		if !ok {
			continue
		}
		for _, use := range *sl.Referrers() {
			if c, ok := use.(*ssa.Call); ok {
				if b, ok := c.Call.Value.(*ssa.Builtin); ok && b.Name() == "append" {
					return true
				}
			}
		}
	}
	return false
}

// returnPos is where a return path ends: the return statement, or the
// closing brace of the function for the implicit one.
func returnPos(fn *ssa.Function, r *ssa.Return) token.Pos {
	if r.Pos().IsValid() {
		return r.Pos()
	}
	if syn := fn.Syntax(); syn != nil {
		return syn.End() - 1
	}
	return fn.Pos()
}

// classify is lockop.Classify, except that a call of a Locker's method
// whose effect is declared (//confined:acquires mu) or summarised (a Lock
// method that locks a field of its receiver) is a call: the effect says
// which lock it takes, where the Locker guess would only know the value.
// Calls through a sync.Locker interface stay lock operations.
func (e *engine) classify(call *ssa.CallCommon) (lockop.Op, ssa.Value) {
	op, lv := lockop.Classify(call)
	if op == lockop.None {
		if op, lv := e.boundLockOp(call); op != lockop.None {
			return op, lv
		}
		if op, lv := e.deferredCellOp(call); op != lockop.None {
			return op, lv
		}
		return e.nestedOp(call)
	}
	if call.IsInvoke() || !e.hasEffect(call.StaticCallee()) || e.guardWrapper(call.StaticCallee(), lv) {
		return op, lv
	}
	return lockop.None, nil
}

// hasEffect reports whether fn, a method outside package sync, declares
// or leaves an effect on the caller's locks.
func (e *engine) hasEffect(fn *ssa.Function) bool {
	if fn == nil || fn.Pkg == nil || fn.Pkg.Pkg.Path() == "sync" {
		return false
	}
	if e.declaresEffect(fn) {
		return true
	}
	sum := e.summaryOf(fn)
	return sum != nil && len(sum.acquires)+len(sum.releases)+len(sum.tries) > 0
}

func (w *walker) lockOp(op lockop.Op, lv ssa.Value, pos token.Pos, s State) State {
	switch op {
	case lockop.Lock, lockop.RLock:
		if edges := w.e.nilEdgesOf(w.fn, container(lv)); edges != nil {
			w.nilGuard = edges // `if in != nil { in.mu.Lock() }` (nilguard.go)
			defer func() { w.nilGuard = nil }()
		}
		h := w.holdOf(lv, op.Shared(), pos)
		w.noteMapOrder(h, lv, s)
		w.noteSliceOrder(h, elementKeys(lv), s)
		return w.acquire(h, s)
	case lockop.Unlock, lockop.RUnlock:
		return w.release(w.holdOf(lv, op.Shared(), pos), pos, s)
	case lockop.Downgrade:
		if old, held := s.find(w.holdOf(lv, false, pos).Path); held && !old.Shared {
			old.Shared = true
			return s.with(old)
		}
		return s
	}
	return s // TryLock: modelled on the branch of its result (edgeState)
}

// acquire takes h directly in this function.
func (w *walker) acquire(h Hold, s State) State {
	if w.condStep() > 0 && w.nilSideUnreached() {
		return s.with(h) // the nil side of a parameter no caller gives nil (nilarg.go)
	}
	if old, held := s.find(h.Path); held && w.report && !old.Opaque && !h.Opaque {
		w.reportRelock(old, h, h.Pos, "")
	} else if old, why := w.copiedAlias(s, h); why != "" && w.report {
		w.reportRelock(old, h, h.Pos, why)
	}
	if w.report {
		w.edgesTo(s, h, h.Pos, nil, true, false)
	}
	if w.final {
		step, branch := w.condStep(), w.branchStep()
		tk := take{Path: h.Path, Class: h.Class, Name: h.Name, Shared: h.Shared, Pos: h.Pos, At: w.e.at(h.Pos), leaf: h.Pos, afterRelease: s.outer, released: s.outerRel, cond: step, own: step, branch: branch, ownBranch: branch, test: w.e.inTest(h.Pos), Sub: h.Sub, elemOf: h.elemOf, fresh: w.private(h), leafSure: step == 0}
		if branch == 1 {
			tk.when = w.onlyWhen(w.blk)
			tk.failed, tk.failedOn = w.failureHere()
		}
		if branch > 0 {
			tk.nilPath = w.nilSideParam() // `if tx == nil { s.mu.Lock() ... }` (nilarg.go)
		}
		w.info.addTake(tk)
		w.noteSite(tk)
	}
	s = s.taking(h.Class).retaking(h.Path)
	if old, held := s.find(h.Path); held && !old.Maybe {
		w.doubled[h.Path] = true
		old.Extra++
		return s.with(old)
	}
	return s.with(h)
}

// relockedNextTurn reports whether old, held over a loop's back-edge, is
// one this function lets go of (an unlock, or one deferred to its
// return: a defer in a loop body releases nothing until then) or took
// through a helper: taken again, it is a re-lock on the next iteration,
// not a lock handed to another goroutine to unlock.
func (w *walker) relockedNextTurn(old Hold) bool {
	return w.unlocked[old.Path] || old.Inferred || !strings.Contains(old.Path, "v:") && w.deferredUnlock(old.Path)
}

// reportRelock reports taking h while old (same path) is held.
// takenHops says where h was taken, and where a callee locked it when
// that is another place in this package.
func takenHops(h Hold) []diag.Hop {
	hops := []diag.Hop{{Pos: h.Pos, What: h.Name + " taken here"}}
	if h.leaf.IsValid() && h.leaf != h.Pos {
		hops = append(hops, diag.Hop{Pos: h.leaf, What: h.Name + " locked here"})
	}
	return hops
}

// takenInCallee reports whether h was locked in a callee of the call
// that holds it (its leaf is elsewhere).
func takenInCallee(h Hold) bool { return h.leaf.IsValid() && h.leaf != h.Pos }

func (w *walker) reportRelock(old, h Hold, at token.Pos, via string) {
	held := w.e.at(old.Pos)
	first := []diag.Hop{{Pos: old.Pos, What: h.Name + " first taken here"}}
	if old.leaf.IsValid() && old.leaf != old.Pos {
		first = append(first, diag.Hop{Pos: old.leaf, What: h.Name + " first locked here"})
	}
	if h.leaf.IsValid() && h.leaf != at && h.leaf != old.Pos && h.leaf != old.leaf {
		first = append(first, diag.Hop{Pos: h.leaf, What: h.Name + " locked again here"})
	}
	// A keyed lock a callee takes by a key of its own (tikv's latch slot,
	// the next one each turn) is not known to be the one the previous turn
	// took: no re-lock. One taken here by an index is (samecondition).
	loop := old.Maybe && old.Loop && w.relockedNextTurn(old) && !(old.Keyed && takenInCallee(old) && takenInCallee(h))
	if !loop && w.heldToReturn(old) {
		old.Maybe = false
		held += " where that branch ran (its unlock is deferred to the return)"
	}
	switch {
	case loop && old.Shared && h.Shared:
		// A read lock taken again on the next turn blocks only behind a
		// waiting writer (a benchmark read-locking N times has none).
		if wr := w.e.writerOf(h.Class); wr != "" {
			w.e.find(at, "lock-leak", h.Name+" may still be read-locked from the previous loop iteration (taken at "+held+"): RLock on the next iteration deadlocks behind a waiting writer ("+wr+" write-locks it)", first...)
		}
	case loop && !w.unlocked[h.Path] && !old.Inferred:
		// Unlocked only by a defer: held until the function returns.
		w.e.find(at, "lock-leak", h.Name+" is still held from the previous loop iteration (taken at "+held+"; its deferred unlock runs only when the function returns): Lock on the next iteration deadlocks", first...)
	case loop:
		w.e.find(at, "lock-leak", h.Name+" may still be held from the previous loop iteration (taken at "+held+"): Lock on the next iteration deadlocks", first...)
	case old.Maybe:
	case old.Shared && h.Shared && w.deferredTake:
		// Needs no writer: nothing releases either read lock, so the
		// next Lock, on any goroutine, blocks for good.
		w.e.findRelock(at, old.Pos, "double-lock", "RLock of "+h.Name+" deferred", " while already read-locked since "+held+": the function returns with it read-locked twice and nothing releases it (RUnlock was meant?)", first...)
	case old.Shared && h.Shared && !h.writerAlong && w.e.noWriterDuringTest(w.fn, h.Class, at):
		// A test's recursive read lock with no writer running meanwhile.
	case old.Shared && h.Shared && h.writerAlong:
		w.e.findRelock(at, old.Pos, "double-lock", "RLock of "+h.Name+via, " while already read-locked since "+held+": deadlocks behind a waiting writer (the call write-locks it too, on some path)", first...)
	case old.Shared && h.Shared:
		w.e.findRelock(at, old.Pos, "double-lock", "RLock of "+h.Name+via, " while already read-locked since "+held+": deadlocks behind a waiting writer", first...)
	case old.Shared:
		w.e.findRelock(at, old.Pos, "lock-upgrade", "Lock of "+h.Name+via, " while read-locked since "+held+": a read lock cannot be upgraded, this deadlocks", first...)
	default:
		w.e.findRelock(at, old.Pos, "double-lock", h.Name+" locked again"+via, " while held since "+held+": self-deadlock", first...)
	}
}

func (w *walker) release(h Hold, pos token.Pos, s State) State {
	old, held := s.find(h.Path)
	s = w.releaseOne(h, pos, s)
	if _, still := s.find(h.Path); held && old.twin != "" && !still {
		s = s.without(old.twin) // the same lock under its other name
	}
	return s
}

func (w *walker) releaseOne(h Hold, pos token.Pos, s State) State {
	w.noteUnlock(h.Path, pos)
	if old, held := s.find(h.Path); held {
		if old.Extra > 0 {
			old.Extra--
			return s.with(old)
		}
		if old.Maybe { // unknown afterwards: not "definitely released"
			if w.final {
				w.info.addUnlock(byClass(h)) // on some paths, maybe the caller's
			}
			s = s.without(h.Path)
			s.released = remove(s.released, h.Path)
			if _, atEntry := w.entry.find(h.Path); old.Loop && !atEntry {
				// Held only from the previous iteration: on the first one
				// this lets go of the caller's lock (raft's isCurrent:
				// Unlock, sleep, Lock, in a loop, under the caller's lock).
				if w.final {
					w.info.addRelease(byClass(h))
				}
				s = s.releasedOuter(h.Path)
			}
			return s
		}
		s = s.without(h.Path)
		if e, atEntry := w.entry.find(h.Path); atEntry && e.Pos == old.Pos {
			// The caller's lock, declared held on entry, let go here: what
			// is taken next is not taken under it (ptraceSignalLocked
			// drops the signal mutex before locking the TaskSet).
			s = s.releasedOuter(h.Path)
		}
		return s
	}
	if o, ok := s.underOtherName(h); ok {
		return s.without(o.Path)
	}
	if s.wasReleased(h.Path) && !h.Opaque {
		if w.report && !w.maybeDefer && !w.startedTakes(h) {
			w.e.find(pos, "unlock-not-held", h.Name+" unlocked but not held: it was already unlocked on every path here")
		}
		return s
	}
	// Never taken here: the caller's lock, released on its behalf.
	if w.final {
		w.info.addRelease(byClass(h))
		w.info.addUnlock(byClass(h))
	}
	s = s.without(h.Path)
	s = s.releasedOuter(h.Path)
	return s
}

// noteUnlock records that this function unlocks path at pos.
func (w *walker) noteUnlock(path string, pos token.Pos) {
	w.unlocked[path] = true
	if w.blk != nil && !slices.Contains(w.unlockBlocks[path], w.blk) {
		if w.unlockBlocks == nil {
			w.unlockBlocks = map[string][]*ssa.BasicBlock{}
		}
		w.unlockBlocks[path] = append(w.unlockBlocks[path], w.blk)
	}
	if old, ok := w.unlockAt[path]; pos.IsValid() && (!ok || pos < old) {
		w.unlockAt[path] = pos
	}
}

// copiedAlias finds a held lock that h is probably under another path: the
// same class reached through the same pointer field group, whose objects
// the package hands from one to another (child.tree = parent.tree: the
// tree of a node and of its child are one tree). why says so for the
// message, "" when there is none.
func (w *walker) copiedAlias(s State, h Hold) (Hold, string) {
	if h.Class == "" || h.Opaque {
		return Hold{}, ""
	}
	for _, o := range s.holds {
		if o.Class != h.Class || o.Sub != h.Sub || o.Maybe || o.Opaque || o.Path == h.Path {
			continue
		}
		if at, ok := w.e.objs.Copied(h.Sub); ok {
			field := shortClass(strings.TrimPrefix(h.Sub, "ptr:"))
			return o, ", the same lock through " + field + ", which the package copies from object to object (at " + w.e.at(at) + "),"
		}
		if why := w.linkedOwner(o.Path, h.Path); why != "" {
			return o, why
		}
		if why := w.siblingAlias(s, o.Path, h.Path, h.Class); why != "" {
			return o, why
		}
	}
	return w.singletonHeld(s, h)
}

// siblingAlias explains why two paths that differ in one field of one
// object (cd.thisLevel.mu, cd.nextLevel.mu) are one lock: the package
// stores one of the fields into the other on an object (badger's Lmax to
// Lmax compaction, `cd.nextLevel = cd.thisLevel`, then read-locking both
// levels). Not where the walk knows the two differ (`if cd.thisLevel !=
// cd.nextLevel`, or a field of each compared unequal).
func (w *walker) siblingAlias(s State, a, b, class string) string {
	ca, cb := strings.Split(a, "."), strings.Split(b, ".")
	if len(ca) != len(cb) {
		return ""
	}
	i := -1
	for k := range ca {
		if ca[k] != cb[k] {
			if i >= 0 {
				return ""
			}
			i = k
		}
	}
	if i <= 0 || !token.IsIdentifier(ca[i]) || !token.IsIdentifier(cb[i]) {
		return ""
	}
	at, ok := w.e.objs.SiblingCopy(ca[i], cb[i], class)
	if !ok || s.knownDistinct(strings.Join(ca[:i+1], "."), strings.Join(cb[:i+1], ".")) {
		return ""
	}
	return ", the same lock where " + cb[i] + " is " + ca[i] + ", as the package makes it (at " + w.e.at(at) + "),"
}

// underOtherName finds the hold an unlock of h releases when h's path is
// not held: a lock reached through a value with no symbolic path (a call
// result, a phi: tx.db.mu for the db the caller locked) may be the one
// held under another name, matched by class.
func (s State) underOtherName(h Hold) (Hold, bool) {
	if _, held := s.find(h.Path); held || h.Class == "" {
		return Hold{}, false
	}
	if o, ok := s.heldByClass(h.Class); ok {
		return o, true // one key's lock a helper left held (keyed.go)
	}
	if portable(h.Path) {
		return Hold{}, false
	}
	for _, o := range s.holds {
		if o.Class == h.Class {
			return o, true
		}
	}
	return Hold{}, false
}

// runDefers replays the pending defers, last registered first.
func (w *walker) runDefers(at *ssa.RunDefers, s State) State {
	ds := s.defers
	s.defers = nil
	blk := w.blk
	defer func() { w.blk, w.maybeDefer = blk, false }()
	for i := len(ds) - 1; i >= 0; i-- {
		d := ds[i]
		before := s
		w.blk = d.at.Block()
		w.maybeDefer = d.maybe
		call := d.at.Common()
		if v := deferredCellValue(call, at); v != nil {
			call = &ssa.CallCommon{Value: v} // what the variable holds here
		}
		if w.final {
			// defer wg.Done(), defer close(ch): done at exit, after
			// whatever the function took on the way.
			ops, _ := w.callOps(call)
			for _, op := range ops {
				op.Before = s.took
				w.info.addChan(op)
			}
		}
		s = w.checkDeferredFields(d.at, s)
		if op, lv := w.e.classify(call); op != lockop.None {
			w.deferredTake = true
			s = w.lockOp(op, lv, d.at.Pos(), s)
			w.deferredTake = false
		} else if g, ok := w.resultGuardOf(d.at, w.at); ok {
			s = w.guardedDeferCall(call, g, d.at.Pos(), s)
		} else {
			s = w.call(call, d.at.Pos(), s)
		}
		if d.maybe {
			s = maybeApplied(before, s)
		}
	}
	return s
}

// maybeApplied merges the states before and after a defer that may not
// have been registered: released locks become maybe-held.
func maybeApplied(before, after State) State {
	for _, h := range before.holds {
		if _, still := after.find(h.Path); !still {
			h.Maybe = true
			h.leaky, h.sureSide = false, false // the defer registered on some paths explains it
			after = after.with(h)
		}
	}
	return after
}
