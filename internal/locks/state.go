package locks

import (
	"go/token"
	"slices"

	"golang.org/x/tools/go/ssa"
)

// Hold is one lock held at a program point.
type Hold struct {
	Path   string // symbolic path (see path.go)
	Class  string // lock class key, "" when the lock has no declaring field or var
	Name   string // short class name for messages ("Broker.mu")
	Shared bool   // held by RLock
	Pos    token.Pos
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
	// Sub refines the class: the key of the value (non-pointer) struct
	// field that holds the lock's struct, as Conn.in for c.in.mu, "" when
	// the lock is reached through a pointer. Locks of one class under two
	// different value fields are never the same lock.
	Sub string
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
	outer bool
}

func (s State) find(path string) (Hold, bool) {
	i, ok := slices.BinarySearchFunc(s.holds, path, func(h Hold, p string) int { return cmp(h.Path, p) })
	if !ok {
		return Hold{}, false
	}
	return s.holds[i], true
}

func (s State) with(h Hold) State {
	i, ok := slices.BinarySearchFunc(s.holds, h.Path, func(x Hold, p string) int { return cmp(x.Path, p) })
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
	i, ok := slices.BinarySearchFunc(s.holds, path, func(x Hold, p string) int { return cmp(x.Path, p) })
	if ok {
		s.holds = slices.Delete(slices.Clone(s.holds), i, i+1)
	}
	if j, found := slices.BinarySearch(s.released, path); !found {
		s.released = slices.Insert(slices.Clone(s.released), j, path)
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
	return out
}

func join2(a, b State, aBack, bBack bool) State {
	var holds []Hold
	i, j := 0, 0
	for i < len(a.holds) || j < len(b.holds) {
		switch {
		case j == len(b.holds) || i < len(a.holds) && a.holds[i].Path < b.holds[j].Path:
			h := a.holds[i]
			h.Maybe, h.Loop = true, h.Loop || aBack
			holds = append(holds, h)
			i++
		case i == len(a.holds) || b.holds[j].Path < a.holds[i].Path:
			h := b.holds[j]
			h.Maybe, h.Loop = true, h.Loop || bBack
			holds = append(holds, h)
			j++
		default:
			h := a.holds[i]
			h.Maybe = h.Maybe || b.holds[j].Maybe
			h.Loop = h.Loop || b.holds[j].Loop
			h.Lent = h.Lent || b.holds[j].Lent
			h.Shared = h.Shared || b.holds[j].Shared
			holds = append(holds, h)
			i++
			j++
		}
	}
	out := State{holds: holds, outer: a.outer || b.outer}
	for _, p := range a.released {
		if b.wasReleased(p) {
			out.released = append(out.released, p)
		}
	}
	out.defers = joinDefers(a.defers, b.defers)
	return out
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
		slices.Equal(s.defers, t.defers) && s.outer == t.outer
}

func remove(xs []string, x string) []string {
	if i, ok := slices.BinarySearch(xs, x); ok {
		return slices.Delete(slices.Clone(xs), i, i+1)
	}
	return xs
}

func cmp(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
