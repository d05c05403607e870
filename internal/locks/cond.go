package locks

import (
	"go/constant"
	"go/token"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"
)

// Branch conditions the walk follows (issue: correlated branches and
// constant arguments). The state carries what the branches taken so far
// say about condition values ("p1 is true", "v:t3 == 2"), keyed by the
// value's symbolic path so that two loads of one flag agree:
//
//   - a branch that contradicts what is known is dead: a constant
//     condition, a flag tested again, a parameter bound to a constant at a
//     call site (`c.allowed(s, true)` never reaches `if !locked { Lock }`);
//   - a lock held on one side of a join only is maybe-held, tagged with
//     the condition that told the sides apart; a later branch on the same
//     condition makes it definite on one side and drops it on the other,
//     so `if replaying { mu.Lock() } ... if replaying { mu.Unlock() }` is
//     balanced.

// fact is one known condition value.
type fact struct {
	key string
	val constant.Value
}

func factLess(a, b fact) int { return strings.Compare(a.key, b.key) }

// known returns the value known for key.
func (s State) known(key string) (constant.Value, bool) {
	i, ok := slices.BinarySearchFunc(s.facts, fact{key: key}, factLess)
	if !ok {
		return nil, false
	}
	return s.facts[i].val, true
}

// learn records key = val.
func (s State) learn(key string, val constant.Value) State {
	i, ok := slices.BinarySearchFunc(s.facts, fact{key: key}, factLess)
	fs := slices.Clone(s.facts)
	if ok {
		fs[i].val = val
	} else {
		fs = slices.Insert(fs, i, fact{key, val})
	}
	s.facts = fs
	return s
}

// test is what a branch condition tests: key == val (or, when eq is
// false, key != val).
type test struct {
	key string
	val constant.Value
	eq  bool
}

// condTest reads an If condition as a test, ok false when it is none the
// walk follows (or a constant, see constCond).
func (w *walker) condTest(cond ssa.Value) (test, bool) {
	cond, negated := stripNot(cond)
	t := test{eq: !negated}
	switch c := cond.(type) {
	case *ssa.BinOp:
		if c.Op != token.EQL && c.Op != token.NEQ {
			return test{}, false
		}
		x, k := c.X, c.Y
		if _, ok := x.(*ssa.Const); ok {
			x, k = k, x
		}
		kc, ok := k.(*ssa.Const)
		if !ok {
			return test{}, false
		}
		t.key, t.val = w.condKey(x), kc.Value
		if kc.Value == nil {
			t.val = nilConst
		}
		if c.Op == token.NEQ {
			t.eq = !t.eq
		}
	case *ssa.Const:
		return test{}, false
	default:
		t.key, t.val = w.condKey(c), constant.MakeBool(true)
	}
	return t, t.key != ""
}

// condKey names a condition value by its path and type ("" for none):
// paths see through loads, so a pointer and what it points to share one.
func (w *walker) condKey(v ssa.Value) string {
	switch v.(type) {
	case *ssa.Parameter, *ssa.FreeVar, *ssa.UnOp, *ssa.Phi, *ssa.Call, *ssa.Extract, *ssa.Field:
		return pathOf(w.fn, v) + "#" + v.Type().String()
	}
	return ""
}

// sameConst reports whether two condition values are equal; values of
// kinds that do not compare (a nil and a bool) are not.
func sameConst(a, b constant.Value) bool {
	if a == nil || b == nil {
		return a == b
	}
	ka, kb := a.Kind(), b.Kind()
	numeric := func(k constant.Kind) bool { return k == constant.Int || k == constant.Float || k == constant.Complex }
	if ka != kb && !(numeric(ka) && numeric(kb)) {
		return false
	}
	return constant.Compare(a, token.EQL, b)
}

// stripNot removes the ! around a condition, saying whether an odd
// number of them was removed.
func stripNot(cond ssa.Value) (ssa.Value, bool) {
	negated := false
	for {
		u, ok := cond.(*ssa.UnOp)
		if !ok || u.Op != token.NOT {
			return cond, negated
		}
		cond, negated = u.X, !negated
	}
}

// constCond evaluates a constant condition.
func constCond(cond ssa.Value) (bool, bool) {
	cond, negated := stripNot(cond)
	c, ok := cond.(*ssa.Const)
	if !ok || c.Value == nil || c.Value.Kind() != constant.Bool {
		return false, false
	}
	return constant.BoolVal(c.Value) != negated, true
}

// branch refines s along the edge of an If taken when the condition is
// taken (true: the first successor). ok is false for a dead edge.
func (w *walker) branch(ifi *ssa.If, taken bool, s State) (State, bool) {
	if v, ok := constCond(ifi.Cond); ok {
		return s, v == taken
	}
	t, ok := w.condTest(ifi.Cond)
	if !ok {
		return s, true
	}
	holds := t.eq == taken // on this edge, key == val holds (else key != val)
	if cur, ok := s.known(t.key); ok {
		same := sameConst(cur, t.val)
		if same != holds {
			return s, false // contradicts what is known
		}
	}
	// Tagged maybe-holds become definite where their condition holds and
	// disappear where it does not.
	for _, h := range s.holds {
		if !h.Maybe || h.tagKey != t.key {
			continue
		}
		// What this edge says of the tag's equation key == tagVal.
		var eq bool
		switch match := sameConst(h.tagVal, t.val); {
		case match:
			eq = holds
		case holds:
			eq = false // key is another value
		default:
			continue // key differs from t.val: says nothing of tagVal
		}
		if eq != h.tagNeg {
			h.Maybe, h.Loop, h.tagKey, h.tagVal, h.tagNeg = false, false, "", nil, false
			s = s.with(h)
		} else {
			s = s.drop(h.Path)
		}
	}
	if holds {
		s = s.learn(t.key, t.val)
	} else if t.val.Kind() == constant.Bool {
		s = s.learn(t.key, constant.MakeBool(!constant.BoolVal(t.val)))
	}
	return s, true
}
