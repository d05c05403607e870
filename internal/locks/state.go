package locks

import (
	"go/constant"
	"go/token"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Hold is one lock held at a program point.
type Hold struct {
	Path   string // symbolic path (see path.go)
	Class  string // lock class key, "" when the lock has no declaring field or var
	Name   string // short class name for messages ("Broker.mu")
	Shared bool   // held by RLock
	// twoModes: held by Lock on some paths into here and by RLock on
	// others: which unlock is right depends on the path.
	twoModes bool
	Pos      token.Pos
	// leaf: where a callee takes it (its Lock call), when Pos is the call
	// leading there and both are in this package; for related information.
	leaf token.Pos
	// Maybe: held on some incoming paths only. Maybe-held locks produce no
	// double-lock, leak or guard findings (a path-insensitive analysis
	// cannot tell `if c { mu.Lock() } ... if c { mu.Unlock() }` from a
	// bug); Loop marks the ones held only via a loop back-edge, which
	// a Lock in the loop body reports as a re-lock on the next iteration.
	Maybe, Loop bool
	// Lent: held by the caller that passes a closure to a call; the
	// closure probably runs now but may be kept for later, so the hold
	// (always Maybe too) satisfies guards and creates no finding or edge.
	Lent bool
	// Inferred: left held by a callee that does not declare it (a lock
	// helper found by inference): not counted in return-state checks.
	Inferred bool
	// Extra counts acquisitions beyond the first (already reported as a
	// double lock), so their unlocks are not reported again.
	Extra int
	// Try: taken by a successful TryLock. A function returning with it
	// held on one path only is a conditional acquire, not a leak.
	Try bool
	// Opaque: a sync.Locker interface value of unknown implementation
	// (RLocker's Lock is re-entrant): never reported as a double lock.
	Opaque bool
	// Fresh: taken inside a callee on an object the callee made and had
	// not yet handed to other code (take.fresh): it waits for no one and
	// makes no one wait, so it is the end of no edge.
	Fresh bool
	// Keyed: the lock of one key of a container (lockop.Keyed): a helper
	// leaving it held or releasing it does so by class (keyed.go).
	Keyed bool
	// writerAlong: taken shared by a call that also write-locks the same
	// lock on some path: a recursive read lock it makes waits behind
	// that writer on its own goroutine, whoever else runs.
	writerAlong bool
	// Sub refines the class by how the lock's struct was reached
	// (objects.Index.Via): the value struct field holding it ("Conn.in"
	// for c.in.mu), or the alias group of the pointer field it was loaded
	// from ("ptr:Node.wal" for n.wal.mu); "" when unknown. Locks of one
	// class under two different refinements are never the same lock.
	Sub string
	// elemOf names the container the lock's object was read from as one
	// element, in the walked function's paths ("p0.children"); "" when
	// none (tree.go).
	elemOf string
	// sym: how a lock the function takes itself is reached from its
	// parameters, nil when not (symmetric.go).
	sym *symSource
	// Obj is the allocation (or constructor call) of this function that
	// created the object holding the lock, nil when the object comes from
	// elsewhere. While that object is private (objects.Index.Private) no
	// other goroutine can hold its lock: it orders nothing.
	Obj ssa.Value
	// tagKey, tagVal, tagNeg: a maybe-hold held exactly where condition
	// tagKey equals tagVal (differs from it, with tagNeg); see cond.go.
	// "" when untagged.
	tagKey string
	tagVal constant.Value
	tagNeg bool
	// tag2Key, tag2Val, tag2Neg: a second condition that must hold too,
	// for a lock taken under `a && b` (tags.go); "" when none.
	tag2Key string
	tag2Val constant.Value
	tag2Neg bool
	// leaky: a maybe-hold that merges a path holding it for sure with one
	// that released it for sure (see oneSided).
	leaky bool
	// sureSide: a maybe-hold one of whose merged paths held it for sure
	// and another not at all (loopleak.go).
	sureSide bool
	// alias: held under this name because the walk took a branch where
	// this path and a held one compared equal (walker.sameObject); true
	// of the values the two expressions have now, not on the next turn
	// of a loop.
	alias bool
	// twin: the other name of the same lock after a phi move (phimoves.go):
	// letting go of either lets go of both.
	twin string
}

// deferred is one pending defer, replayed at RunDefers in reverse order.
type deferred struct {
	at    *ssa.Defer
	maybe bool // registered on some incoming paths only
}

// State is the lock state at one program point. It is a value: copying it
// forks it, and every change copies the slice it changes (copy on write),
// so branches share their parent's storage until one of them modifies it.
type State struct {
	holds    []Hold     // sorted by Path
	defers   []deferred // in registration order
	released []string   // sorted paths unlocked on every path so far and not retaken
	// outer: a lock held by the caller was released on this path; takes
	// after it are not reported as taken while the caller holds its locks.
	outer    bool
	outerRel []string // which caller's locks: their paths, sorted
	facts    []fact   // condition values the branches taken say (cond.go), sorted by key
	// took: lock classes taken on some path so far (if released since),
	// loop back-edges included, sorted: a channel operation after one may
	// wait for it first (chanOp.Before).
	took []string
}

// taking records that class was taken on the way here.
func (s State) taking(class string) State {
	if class == "" {
		return s
	}
	if i, found := slices.BinarySearch(s.took, class); !found {
		s.took = slices.Insert(slices.Clone(s.took), i, class)
	}
	return s
}

func (s State) find(path string) (Hold, bool) {
	i, ok := slices.BinarySearchFunc(s.holds, path, func(h Hold, p string) int { return strings.Compare(h.Path, p) })
	if !ok {
		return Hold{}, false
	}
	return s.holds[i], true
}

func (s State) with(h Hold) State {
	i, ok := slices.BinarySearchFunc(s.holds, h.Path, func(x Hold, p string) int { return strings.Compare(x.Path, p) })
	holds := slices.Clone(s.holds)
	if ok {
		holds[i] = h
	} else {
		holds = slices.Insert(holds, i, h)
	}
	s.holds = holds
	s.released = remove(s.released, h.Path)
	return s
}

func (s State) without(path string) State {
	i, ok := slices.BinarySearchFunc(s.holds, path, func(x Hold, p string) int { return strings.Compare(x.Path, p) })
	if ok {
		s.holds = slices.Delete(slices.Clone(s.holds), i, i+1)
	}
	if j, found := slices.BinarySearch(s.released, path); !found {
		s.released = slices.Insert(slices.Clone(s.released), j, path)
	}
	return s
}

// withoutAliases drops the holds known only by an equality test.
func (s State) withoutAliases() State {
	for _, h := range s.holds {
		if h.alias {
			s = s.drop(h.Path)
		}
	}
	return s
}

// releasedOuter records that the caller's lock at path was released on
// this path.
func (s State) releasedOuter(path string) State {
	s.outer = true
	if i, found := slices.BinarySearch(s.outerRel, path); !found {
		s.outerRel = slices.Insert(slices.Clone(s.outerRel), i, path)
	}
	return s
}

// union merges two sorted sets of paths.
func union(a, b []string) []string {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// drop forgets a hold that is not held on this path after all (a tagged
// maybe-hold on the branch where its condition fails).
func (s State) drop(path string) State {
	i, ok := slices.BinarySearchFunc(s.holds, path, func(x Hold, p string) int { return strings.Compare(x.Path, p) })
	if ok {
		s.holds = slices.Delete(slices.Clone(s.holds), i, i+1)
	}
	return s
}

func (s State) wasReleased(path string) bool {
	_, ok := slices.BinarySearch(s.released, path)
	return ok
}

func (s State) pushDefer(d *ssa.Defer) State {
	s.defers = append(slices.Clone(s.defers), deferred{at: d})
	return s
}

// join merges the states flowing into a block. back[i] says whether
// in[i] arrives over a loop back-edge.
func join(in []State, back []bool) State {
	if len(in) == 0 {
		return State{}
	}
	out := in[0]
	out.holds = slices.Clone(out.holds)
	for i := 1; i < len(in); i++ {
		out = join2(out, in[i], back[0] && i == 1, back[i])
	}
	if len(in) > 2 {
		out = tagFromEach(out, in)
	}
	return out
}

func join2(a, b State, aBack, bBack bool) State {
	var holds []Hold
	i, j := 0, 0
	for i < len(a.holds) || j < len(b.holds) {
		switch {
		case j == len(b.holds) || i < len(a.holds) && a.holds[i].Path < b.holds[j].Path:
			holds = append(holds, oneSided(a.holds[i], a, b, aBack))
			i++
		case i == len(a.holds) || b.holds[j].Path < a.holds[i].Path:
			holds = append(holds, oneSided(b.holds[j], b, a, bBack))
			j++
		default:
			h, o := a.holds[i], b.holds[j]
			if h.alias && !o.alias {
				h.Try, h.alias, h.twin = o.Try, false, o.twin // a real hold on one side
			}
			h.Maybe = h.Maybe || o.Maybe
			h.Loop = h.Loop || o.Loop
			h.Lent = h.Lent || o.Lent
			h.leaky = h.leaky || o.leaky
			h.sureSide = h.sureSide || o.sureSide
			h.twoModes = h.twoModes || o.twoModes || h.Shared != o.Shared
			h.Shared = h.Shared || o.Shared
			h.setConds(bothSidedConds(a.holds[i], a, o, b))
			holds = append(holds, h)
			i++
			j++
		}
	}
	out := State{holds: holds, outer: a.outer || b.outer, outerRel: union(a.outerRel, b.outerRel)}
	for _, p := range a.released {
		if b.wasReleased(p) {
			out.released = append(out.released, p)
		}
	}
	out.defers = joinDefers(a.defers, b.defers)
	out.took = union(a.took, b.took)
	for _, f := range a.facts {
		if v, ok := b.known(f.key); ok && sameConst(v, f.val) {
			out.facts = append(out.facts, f)
		}
	}
	return out
}

// oneSided is a hold that arrives from side in only: maybe-held, tagged
// with a condition whose value tells the sides apart, when there is one.
func oneSided(h Hold, in, other State, back bool) Hold {
	h.Loop = h.Loop || back
	// Held for sure here and unlocked for sure there: one of the merged
	// paths keeps a lock the other releases (a break out of a loop with
	// the lock held), not a guess (a hand-off or a maybe-defer).
	h.leaky = h.leaky || !h.Maybe && other.wasReleased(h.Path)
	h.sureSide = h.sureSide || !h.Maybe
	if h.Maybe && h.tagKey != "" {
		if other.fails(h) {
			return h // its condition fails on the other side too
		}
		// Tagged on the inner branch of `if a && b`: the other side
		// failed the outer test, which this side passed.
		if f, ok := telling(in, other); ok && h.tag2Key == "" && !h.Loop {
			h.setConds(append(h.conds(), cond{key: f.key, val: f.val}))
			return h
		}
	}
	h.Maybe = true
	h.untag()
	if h.Loop {
		return h
	}
	if f, ok := telling(in, other); ok {
		h.tagKey, h.tagVal = f.key, f.val
	}
	return h
}

// joinDefers keeps defers registered on both sides in order, and those
// registered on one side as maybe.
func joinDefers(a, b []deferred) []deferred {
	var out []deferred
	seen := map[*ssa.Defer]int{}
	for _, d := range a {
		seen[d.at]++
	}
	for _, d := range b {
		seen[d.at] += 2
	}
	add := func(d deferred) {
		for _, o := range out {
			if o.at == d.at {
				return
			}
		}
		d.maybe = d.maybe || seen[d.at] != 3
		out = append(out, d)
	}
	for _, d := range a {
		add(d)
	}
	for _, d := range b {
		add(d)
	}
	return out
}

func (s State) equal(t State) bool {
	return slices.Equal(s.holds, t.holds) && slices.Equal(s.released, t.released) &&
		slices.Equal(s.defers, t.defers) && s.outer == t.outer && slices.Equal(s.facts, t.facts) && slices.Equal(s.outerRel, t.outerRel) &&
		slices.Equal(s.took, t.took)
}

func remove(xs []string, x string) []string {
	if i, ok := slices.BinarySearch(xs, x); ok {
		return slices.Delete(slices.Clone(xs), i, i+1)
	}
	return xs
}
