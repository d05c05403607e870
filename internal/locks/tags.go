package locks

import (
	"go/constant"
	"slices"
)

// A maybe-hold may carry up to two conditions (its tags) under which it
// is held: the values of branch conditions that told the paths holding
// it from the others (cond.go). Two cover a lock taken under `a && b`,
// whose paths meet three at a time or nested two at a time.

// cond is one tag: key equals val (differs from it, with neg).
type cond struct {
	key string
	val constant.Value
	neg bool
}

func (c cond) same(o cond) bool {
	return c.key == o.key && c.neg == o.neg && sameConst(c.val, o.val)
}

// holdsIn says whether s knows c true (known and true).
func (c cond) holdsIn(s State) (known, true_ bool) {
	v, ok := s.known(c.key)
	if !ok {
		return false, false
	}
	return true, sameConst(v, c.val) != c.neg
}

// conds lists h's tags.
func (h Hold) conds() []cond {
	var out []cond
	if h.tagKey != "" {
		out = append(out, cond{h.tagKey, h.tagVal, h.tagNeg})
	}
	if h.tag2Key != "" {
		out = append(out, cond{h.tag2Key, h.tag2Val, h.tag2Neg})
	}
	return out
}

// setConds makes cs (at most two) h's tags.
func (h *Hold) setConds(cs []cond) {
	h.untag()
	if len(cs) > 0 {
		h.tagKey, h.tagVal, h.tagNeg = cs[0].key, cs[0].val, cs[0].neg
	}
	if len(cs) > 1 {
		h.tag2Key, h.tag2Val, h.tag2Neg = cs[1].key, cs[1].val, cs[1].neg
	}
}

// untag forgets h's conditions.
func (h *Hold) untag() {
	h.tagKey, h.tagVal, h.tagNeg = "", nil, false
	h.tag2Key, h.tag2Val, h.tag2Neg = "", nil, false
}

// fails reports whether s knows one of h's conditions to be false.
func (s State) fails(h Hold) bool {
	for _, c := range h.conds() {
		if known, ok := c.holdsIn(s); known && !ok {
			return true
		}
	}
	return false
}

// satisfies reports whether s knows all of h's conditions true.
func (s State) satisfies(h Hold) bool {
	return h.tagKey != "" && s.satisfiesAll(h.conds())
}

func (s State) satisfiesAll(cs []cond) bool {
	for _, c := range cs {
		if _, ok := c.holdsIn(s); !ok {
			return false
		}
	}
	return true
}

// bothSidedConds are the tags of a hold arriving from both sides a and
// b: none when both hold it for sure; when one side holds it for sure,
// the other's if that side knows them true; when both are tagged, the
// union of their tags if each side knows true those it lacks (a side
// that tested one of the conditions again on its way carries one fewer).
func bothSidedConds(a Hold, as State, b Hold, bs State) []cond {
	switch {
	case !a.Maybe && !b.Maybe:
		return nil
	case !a.Maybe:
		if as.satisfies(b) {
			return b.conds()
		}
		return nil
	case !b.Maybe:
		if bs.satisfies(a) {
			return a.conds()
		}
		return nil
	case a.tagKey == "" || b.tagKey == "":
		return nil
	}
	union := a.conds()
	var aLacks, bLacks []cond
	for _, c := range b.conds() {
		if !slices.ContainsFunc(union, c.same) {
			union = append(union, c)
			aLacks = append(aLacks, c)
		}
	}
	for _, c := range a.conds() {
		if !slices.ContainsFunc(b.conds(), c.same) {
			bLacks = append(bLacks, c)
		}
	}
	if len(union) > 2 || !as.satisfiesAll(aLacks) || !bs.satisfiesAll(bLacks) {
		return nil
	}
	return union
}

// telling is a fact of in that other contradicts: a condition telling
// the two sides apart.
func telling(in, other State) (fact, bool) {
	for _, f := range in.facts {
		if v, ok := other.known(f.key); ok && !sameConst(v, f.val) {
			return f, true
		}
	}
	return fact{}, false
}

// tagFromEach tags the maybe-holds a pairwise join left untagged, looking
// at each incoming path on its own: a lock held for sure on some paths
// and absent on the others is held where up to two conditions hold that
// every holding path knows and each other path contradicts one of (the
// three paths out of `if a && b { mu.Lock() }`).
func tagFromEach(out State, in []State) State {
	for _, h := range out.holds {
		if !h.Maybe || h.Loop || h.tagKey != "" {
			continue
		}
		var holders, others []State
		mixed := false // a maybe on some path: no tag
		for _, s := range in {
			switch o, held := s.find(h.Path); {
			case !held:
				others = append(others, s)
			case o.Maybe:
				mixed = true
			default:
				holders = append(holders, s)
			}
		}
		if mixed || len(holders) == 0 || len(others) == 0 {
			continue
		}
		if cs, ok := splitting(holders, others); ok {
			h.setConds(cs)
			out = out.with(h)
		}
	}
	return out
}

// splitting picks up to two facts every holder knows, such that each of
// the others contradicts one of them.
func splitting(holders, others []State) ([]cond, bool) {
	var shared []cond
	for _, f := range holders[0].facts {
		if c := (cond{key: f.key, val: f.val}); everyKnows(holders, c) {
			shared = append(shared, c)
		}
	}
	var cs []cond
	for _, o := range others {
		var pick cond
		found := false
		for _, c := range shared {
			if known, ok := c.holdsIn(o); known && !ok {
				pick, found = c, true
				if slices.ContainsFunc(cs, c.same) {
					break
				}
			}
		}
		if !found {
			return nil, false
		}
		if !slices.ContainsFunc(cs, pick.same) {
			cs = append(cs, pick)
		}
	}
	return cs, len(cs) <= 2
}

func everyKnows(states []State, c cond) bool {
	for _, s := range states {
		if _, ok := c.holdsIn(s); !ok {
			return false
		}
	}
	return true
}

// refineTagged applies an edge where test t holds (or not) to the tagged
// maybe-holds: one whose conditions are now all true becomes definite,
// one with a condition now false disappears.
func refineTagged(s State, t test, holds bool) State {
	for _, h := range s.holds {
		if !h.Maybe || h.tagKey != t.key && h.tag2Key != t.key {
			continue
		}
		var left []cond
		dropped := false
		for _, c := range h.conds() {
			sat, decided := decides(t, holds, c)
			switch {
			case !decided:
				left = append(left, c)
			case !sat:
				dropped = true
			}
		}
		if dropped {
			s = s.drop(h.Path)
			continue
		}
		h.setConds(left)
		if len(left) == 0 {
			h.Maybe, h.Loop = false, false
		}
		s = s.with(h)
	}
	return s
}

// decides says whether an edge where test t holds (or not) decides c,
// and if so whether c is true there.
func decides(t test, holds bool, c cond) (sat, decided bool) {
	if c.key != t.key {
		return false, false
	}
	var eq bool
	switch match := sameConst(c.val, t.val); {
	case match:
		eq = holds
	case holds:
		eq = false // key is another value
	default:
		return false, false // key differs from t.val: says nothing of val
	}
	return eq != c.neg, true
}
