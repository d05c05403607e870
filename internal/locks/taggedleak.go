package locks

import (
	"go/constant"
	"go/types"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// A lock taken under a condition and released under the same test (`if
// cacheOn { c.Lock() } ... if cacheOn { c.Unlock() }`) is held, at a
// return between the two, exactly where the condition holds: a leak on
// that path, as for a lock held for sure (kubernetes' equivalence cache
// left locked by a predicate's error return). Not when the walk cannot
// tell it from the shapes that keep a lock on purpose: a deferred unlock
// (a conditional lock with its conditional defer), a lock returned with
// a value or whose root does not reach the return, a try-lock's success
// (a tag on an error being nil), a lock table's entry.

// taggedLeak reports whether h, held at return r, is held there exactly
// where its conditions hold and nothing but that return keeps it.
func (w *walker) taggedLeak(h Hold, r retState) bool {
	if !h.Maybe || h.tagKey == "" || h.Loop || h.Lent || h.Try || w.fresh(h.Path) || hasTry(w.info.tries, h.Path) {
		return false
	}
	if h.tagVal == nilConst || w.e.forced(h.Pos) || w.tableAcquire(h) || w.tryLocksAt(h.Path) {
		return false
	}
	return w.releasedUnderTag(h) && !w.relocked(h) && !w.deferredUnlock(h.Path) && !w.resultPaths(r)[h.Path] && !w.returned(h.Path, r) && w.rootReaches(h.Path, r)
}

// relocked reports whether h was taken after an unlock of the same lock
// that comes before it on every path: the caller's lock, let go around a
// callback and taken back on one branch (`if cb != nil { mu.Unlock();
// cb(); mu.Lock() }` in a function called with mu held), directly or by
// a helper at h's position.
func (w *walker) relocked(h Hold) bool {
	unlocks, takes, others := w.lockCalls(h.Path)
	for _, c := range others {
		if c.Pos() == h.Pos && w.releasesClass(&c.Call, h.Class) {
			return true
		}
	}
	for _, take := range takes {
		if take.Pos() != h.Pos {
			continue
		}
		for _, u := range unlocks {
			if u.Block() == take.Block() && objects.InstrIndex(u.Block(), u) < objects.InstrIndex(take.Block(), take) ||
				u.Block() != take.Block() && u.Block().Dominates(take.Block()) {
				return true
			}
		}
	}
	return false
}

// lockCalls sorts the walked function's calls: unlocks and locks of path,
// and calls that are no lock operation.
func (w *walker) lockCalls(path string) (unlocks, takes, others []*ssa.Call) {
	for _, b := range w.fn.Blocks {
		for _, instr := range b.Instrs {
			c, ok := instr.(*ssa.Call)
			if !ok {
				continue
			}
			op, lv := w.e.classify(&c.Call)
			switch {
			case op == 0:
				others = append(others, c)
			case w.e.lockPath(w.fn, lv) != path:
			case op.Acquires():
				takes = append(takes, c)
			default:
				unlocks = append(unlocks, c)
			}
		}
	}
	return unlocks, takes, others
}

// maxTagDepth bounds the dominators searched for a release's test.
const maxTagDepth = 4

// releasedUnderTag reports whether the walked function unlocks h's lock
// in a block that a branch on h's condition leads to: the same test that
// took it releases it. A lock left held by a break out of a loop and
// released under a flag the break set is tagged by the loop's test, not
// the flag's, and stays the join's guess.
func (w *walker) releasedUnderTag(h Hold) bool { return w.releasedOnSide(h, true) }

// releasedOnSide reports whether the walked function unlocks h's lock in
// a block that a test of h's condition leads to, on the side where the
// condition holds (holds) or fails.
func (w *walker) releasedOnSide(h Hold, holds bool) bool {
	unlocks, _, _ := w.lockCalls(h.Path)
	for _, u := range unlocks {
		for a, depth := u.Block().Idom(), 0; a != nil && depth < maxTagDepth; a, depth = a.Idom(), depth+1 {
			if ifi, ok := lastIf(a); ok {
				if side, tested := w.tagSide(ifi, u.Block(), h); tested && side == holds {
					return true
				}
			}
		}
	}
	return false
}

// condsText renders a hold's conditions with the walked function's
// names for parameters and captured variables ("ecache != nil").
func (w *walker) condsText(cs []cond) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = w.condText(c)
	}
	return strings.Join(parts, " and ")
}

func (w *walker) condText(c cond) string {
	path, typ, _ := strings.Cut(c.key, "#")
	path = w.sourcePath(path)
	if strings.HasSuffix(typ, "!=nil") { // the flag `x != nil`
		if c.neg == (c.val != nil && c.val.ExactString() == "true") {
			return path + " == nil"
		}
		return path + " != nil"
	}
	if c.val == nilConst {
		if c.neg {
			return path + " != nil"
		}
		return path + " == nil"
	}
	return condText(cond{key: path, val: c.val, neg: c.neg})
}

// sourcePath replaces a path's root ("p3", "f0") by the name it has in
// the walked function's source.
func (w *walker) sourcePath(path string) string {
	root, rest := rootOf(path)
	var v ssa.Value
	if i := paramIndex(root, "p"); i >= 0 && i < len(w.fn.Params) {
		v = w.fn.Params[i]
	} else if i := paramIndex(root, "f"); i >= 0 && i < len(w.fn.FreeVars) {
		v = w.fn.FreeVars[i]
	}
	if v == nil {
		if name := w.resultName(root); name != "" {
			return name + rest
		}
		return path
	}
	return v.Name() + rest
}

// resultName names a root ("v:t46") that is a result of a call, as "the
// error of CreateUser" or "the result of lookup"; "" for another root.
func (w *walker) resultName(root string) string {
	name, ok := strings.CutPrefix(root, "v:")
	if !ok {
		return ""
	}
	var call *ssa.CallCommon
	var typ types.Type
	switch v := w.valueNamed(name).(type) {
	case *ssa.Extract:
		c, ok := v.Tuple.(*ssa.Call)
		if !ok {
			return ""
		}
		call, typ = &c.Call, v.Type()
	case *ssa.Call:
		call, typ = &v.Call, v.Type()
	default:
		return ""
	}
	callee := ""
	if f := call.StaticCallee(); f != nil {
		callee = f.Name()
	} else if call.IsInvoke() {
		callee = call.Method.Name()
	}
	if callee == "" {
		return ""
	}
	if types.Identical(typ, types.Universe.Lookup("error").Type()) {
		return "the error of " + callee
	}
	return "the result of " + callee
}

// tagSide says whether h's condition holds on the side of ifi that leads
// to b; tested is false when ifi does not test it or b is on no one side.
func (w *walker) tagSide(ifi *ssa.If, b *ssa.BasicBlock, h Hold) (holds, tested bool) {
	succs := ifi.Block().Succs
	var taken bool
	switch {
	case succs[0].Dominates(b):
		taken = true
	case succs[1].Dominates(b):
		taken = false
	default:
		return false, false
	}
	for _, t := range w.condTests(ifi.Cond) {
		if t.key != h.tagKey {
			continue
		}
		val := t.val // on this side, key == val...
		if t.eq != taken {
			if val.Kind() != constant.Bool {
				continue // ...or only differs from it
			}
			val = constant.MakeBool(!constant.BoolVal(val))
		}
		if sameConst(val, h.tagVal) != h.tagNeg {
			return true, true
		}
		tested = true
	}
	return false, tested
}

// releasesClass reports whether the static callee of c releases a lock of
// class (the caller's, which it then takes back: pebble's rotateWAL).
func (w *walker) releasesClass(c *ssa.CallCommon, class string) bool {
	sum := w.e.summaryOf(c.StaticCallee())
	if sum == nil {
		return false
	}
	for _, r := range sum.releases {
		if r.Class == class {
			return true
		}
	}
	for _, t := range sum.takes {
		if t.afterRelease && t.Class == class {
			return true // taken back after letting the caller's lock go
		}
	}
	return false
}

// localTest reports whether h, a lock one merged path keeps and the
// other let go, is told apart by a test of a value the function computed
// itself (vault's `if exp := resp.Secret.ExpirationTime(); !exp.IsZero()
// { ...; unlock() }`): no caller chose it, as with a parameter or a
// captured flag, and no success result says it, as with an error's
// nil-ness or a pointer's (no object there, no lock to keep: internal/
// sync's HashTrieMap unlocks the node find returned only `if i != nil`),
// so the path that skips the unlock leaks. The value is no
// merge of paths (a flag a break out of a loop set: the join's guess),
// and the unlock sits on the side of its test where the lock is not
// kept.
func (w *walker) localTest(h Hold) bool {
	path, typ, _ := strings.Cut(h.tagKey, "#")
	if h.tagVal == nilConst || strings.HasSuffix(typ, "!=nil") || h.tag2Key != "" {
		return false // a nil test: no object, no lock (`if i != nil { i.mu.Unlock() }`)
	}
	instr := w.rootValue(path)
	if instr == nil {
		return false
	}
	if _, merged := instr.(*ssa.Phi); merged {
		return false
	}
	return w.releasedOnSide(h, false)
}
