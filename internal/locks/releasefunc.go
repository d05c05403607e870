package locks

import (
	"go/token"

	"github.com/confinelint/confinelint/internal/objects"

	"golang.org/x/tools/go/ssa"
)

// A helper that locks and returns the function that unlocks
// (`func (m *M) rlock() func() { m.mu.RLock(); return m.mu.RUnlock }`)
// leaves its caller holding the lock until the caller runs that
// function: `defer m.rlock()()`, `unlock := m.lock(); ...; unlock()`, or
// `defer unlock(m.rlock())` through a function that calls its
// parameter. The helper itself hands the unlock over and holds nothing
// at its return (handOff); its summary says which result releases which
// lock. A caller holds the lock only when every use of that result runs
// it: one stored or returned may be run anywhere.

// releaseFunc is a lock a function returns held, with result Result the
// function that releases it.
type releaseFunc struct {
	Hold
	Result int
}

// returnedReleases lists the locks taken here that the return ret hands
// over through a returned function, before handOff drops them from s.
func (w *walker) returnedReleases(ret *ssa.Return, s State) []releaseFunc {
	var out []releaseFunc
	for i, r := range ret.Results {
		after := w.handOff([]ssa.Value{r}, s, false)
		for _, h := range s.holds {
			if _, still := after.find(h.Path); still || h.Maybe || h.Try || h.Class == "" || !portable(h.Path) {
				continue
			}
			if _, atEntry := w.entry.find(h.Path); atEntry {
				continue
			}
			out = append(out, releaseFunc{Hold: h, Result: i})
		}
	}
	return out
}

// summarizeReleaseFuncs keeps the release functions every return path
// hands back, through the same result.
func (w *walker) summarizeReleaseFuncs() {
	if len(w.rets) == 0 {
		return
	}
	for _, rf := range w.rets[0].handed {
		every := true
		for _, r := range w.rets[1:] {
			if !containsRelease(r.handed, rf) {
				every = false
			}
		}
		if every {
			rf.Maybe, rf.Loop = false, false
			w.info.releaseFuncs = append(w.info.releaseFuncs, rf)
		}
	}
}

func containsRelease(rs []releaseFunc, rf releaseFunc) bool {
	for _, r := range rs {
		if r.Path == rf.Path && r.Result == rf.Result && r.Shared == rf.Shared {
			return true
		}
	}
	return false
}

// applyReleaseFuncs holds, after call c of t, each lock t returns with
// its release function, when every use of that function runs it; the
// function value is remembered so that running it releases the lock.
func (w *walker) applyReleaseFuncs(t *target, sum *funcInfo, c *ssa.Call, s State) State {
	for _, rf := range sum.releaseFuncs {
		v := resultValue(c, rf.Result)
		if v == nil || !w.onlyRun(v) {
			continue
		}
		p, ok := w.calleePath(t, rf.Path)
		if !ok || p == "" {
			continue
		}
		h := rf.Hold
		h.Path, h.Pos, h.Obj, h.Inferred = p, c.Pos(), w.calleeObj(t, rf.Path), true
		if w.releasers == nil {
			w.releasers = map[ssa.Value]Hold{}
		}
		w.releasers[v] = h
		s = s.with(h)
	}
	return s
}

// onlyRun reports whether every use of the func value v runs it here: a
// call or defer of it, or an argument to a function that calls that
// parameter.
func (w *walker) onlyRun(v ssa.Value) bool {
	refs := v.Referrers()
	if refs == nil || len(*refs) == 0 {
		return false
	}
	for _, u := range *refs {
		call, ok := u.(ssa.CallInstruction)
		if !ok {
			return false
		}
		if _, isGo := u.(*ssa.Go); isGo {
			return false
		}
		if call.Common().Value == v {
			continue
		}
		if runsArg(call.Common(), v) < 0 {
			return false
		}
	}
	return true
}

// runsArg is the index of v among the arguments of a static call whose
// callee calls that parameter, -1 when there is none.
func runsArg(call *ssa.CallCommon, v ssa.Value) int {
	callee := call.StaticCallee()
	if callee == nil || len(callee.Params) != len(call.Args) {
		return -1
	}
	for i, a := range call.Args {
		if a != v {
			continue
		}
		for _, u := range *callee.Params[i].Referrers() {
			if c, ok := u.(ssa.CallInstruction); ok && c.Common().Value == callee.Params[i] {
				return i
			}
		}
	}
	return -1
}

// withStoredFuncs is vals and the func values stored into the fields of
// the objects among them made here (`return &Handle{release:
// s.mu.Unlock}, nil`): the object hands its release over with it.
func withStoredFuncs(vals []ssa.Value) []ssa.Value {
	out := vals
	for _, v := range vals {
		alloc, ok := objects.Underlying(v).(*ssa.Alloc)
		if !ok || !alloc.Heap {
			continue
		}
		for _, u := range *alloc.Referrers() {
			fa, ok := u.(*ssa.FieldAddr)
			if !ok {
				continue
			}
			for _, val := range storedAt(fa) {
				if _, isClosure := objects.Underlying(val).(*ssa.MakeClosure); isClosure {
					if len(out) == len(vals) {
						out = append([]ssa.Value(nil), vals...)
					}
					out = append(out, val)
				}
			}
		}
	}
	return out
}

// runReleasers releases the lock of each release function call runs:
// called itself, or handed to a function that calls it.
func (w *walker) runReleasers(call *ssa.CallCommon, pos token.Pos, s State) State {
	if len(w.releasers) == 0 {
		return s
	}
	release := func(h Hold) {
		if _, held := s.find(h.Path); held {
			w.noteUnlock(h.Path, pos)
			s = s.without(h.Path)
		}
	}
	if h, ok := w.releasers[call.Value]; ok {
		release(h)
	}
	for _, a := range call.Args {
		if h, ok := w.releasers[a]; ok && runsArg(call, a) >= 0 {
			release(h)
		}
	}
	return s
}
