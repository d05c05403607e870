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

// retaking drops, when lockPath was released on every path here and is
// taken again, what is known of the fields and elements of its object:
// while it was let go another goroutine could change them, so the check
// made again once it is held (`RLock; done := x.done; RUnlock; if done {
// return }; Lock; if x.done { return }`) may go either way. What was
// learned about them without ever letting that lock go (a caller's mode,
// `if !c.batched { c.lock.Lock() }`) stays.
func (s State) retaking(lockPath string) State {
	if !s.wasReleased(lockPath) {
		return s
	}
	object := objectOf(lockPath) + "."
	var kept []fact
	for i, f := range s.facts {
		if strings.HasPrefix(f.key, object) || strings.HasPrefix(f.key, "("+object) {
			if kept == nil {
				kept = slices.Clone(s.facts[:i])
			}
			continue
		}
		if kept != nil {
			kept = append(kept, f)
		}
	}
	if kept != nil {
		s.facts = kept
	}
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
		if _, ok := sentinelOf(x); ok {
			x, k = k, x
		}
		if sv, ok := sentinelOf(k); ok { // err == ErrShutdown (sentinel.go)
			t.key, t.val = w.condKey(x), sv
			if c.Op == token.NEQ {
				t.eq = !t.eq
			}
			return t, t.key != ""
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
	k := valueIn{w.fn, v}
	if key, ok := w.e.condKeys[k]; ok {
		return key
	}
	key := condKeyIn(w.fn, v)
	if w.e.condKeys == nil {
		w.e.condKeys = map[valueIn]string{}
	}
	w.e.condKeys[k] = key
	return key
}

// valueIn is a value as seen from a function walked (condKey's cache).
type valueIn struct {
	fn *ssa.Function
	v  ssa.Value
}

// condKeyIn is condKey for a value of fn: the key a walk of fn gives v,
// which a specialization of fn must use for the facts it starts with.
func condKeyIn(fn *ssa.Function, v ssa.Value) string {
	if x, ok := v.(*ssa.Extract); ok && x.Index == 1 {
		if ta, ok := x.Tuple.(*ssa.TypeAssert); ok {
			// _, ok := x.(T): the same test of the same value agrees.
			return pathOf(fn, ta.X) + ".(" + ta.AssertedType.String() + ")#ok"
		}
	}
	switch b := v.(type) {
	case *ssa.Parameter, *ssa.FreeVar, *ssa.UnOp, *ssa.Phi, *ssa.Call, *ssa.Extract, *ssa.Field:
		return pathOf(fn, v) + "#" + v.Type().String()
	case *ssa.BinOp:
		// Arithmetic of named values and constants, by its operands: the
		// stripe `ref & (size-1)` computed once and tested twice
		// (`if hash != ref { lock }` ... `if hash != ref { unlock }`).
		x, y := operandKey(fn, b.X), operandKey(fn, b.Y)
		if x == "" || y == "" {
			return ""
		}
		return "(" + x + b.Op.String() + y + ")#" + v.Type().String()
	case *ssa.Convert:
		if x := condKeyIn(fn, b.X); x != "" {
			return v.Type().String() + "(" + x + ")"
		}
	}
	return ""
}

// operandKey is condKeyIn for an operand of arithmetic, a constant's
// value for a constant.
func operandKey(fn *ssa.Function, v ssa.Value) string {
	if c, ok := v.(*ssa.Const); ok {
		if c.Value == nil {
			return ""
		}
		return c.Value.ExactString()
	}
	return condKeyIn(fn, v)
}

// paramCond reports whether a condition key is a parameter's own value
// (`if first {`): the caller's choice.
func paramCond(key string) bool {
	path, _, _ := strings.Cut(key, "#")
	return paramIndex(path, "p") >= 0
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

// condTests lists what an If condition tells on its edges: the test
// itself (condTest), and boolean facts derived from it so that a branch
// on one side of a comparison is remembered on the other: `k != nil` as
// the flag "k!=nil", and `x == y` of two values with paths as the flag
// "x==y". Either side of `if c.p != nil && c.p != me { Lock }` then tags
// the lock, and the same test later finds it.
func (w *walker) condTests(cond ssa.Value) []test {
	var out []test
	if t, ok := w.condTest(cond); ok {
		out = append(out, t)
		if t.val == nilConst {
			out = append(out, test{key: t.key + "!=nil", val: constant.MakeBool(true), eq: !t.eq})
		}
		return out
	}
	cond, negated := stripNot(cond)
	c, ok := cond.(*ssa.BinOp)
	if !ok || c.Op != token.EQL && c.Op != token.NEQ {
		return nil
	}
	kx, ky := w.condKey(c.X), w.condKey(c.Y)
	if kx == "" || ky == "" || kx == ky {
		return nil
	}
	if ky < kx {
		kx, ky = ky, kx
	}
	return append(out, test{key: kx + "==" + ky, val: constant.MakeBool(true), eq: (c.Op == token.EQL) != negated})
}

// branch refines s along the edge of an If taken when the condition is
// taken (true: the first successor). ok is false for a dead edge.
func (w *walker) branch(ifi *ssa.If, taken bool, s State) (State, bool) {
	if v, ok := constCond(ifi.Cond); ok {
		return s, v == taken
	}
	tests := w.condTests(ifi.Cond)
	for _, t := range tests {
		holds := t.eq == taken // on this edge, key == val holds (else key != val)
		if cur, ok := s.known(t.key); ok && sameConst(cur, t.val) != holds {
			return s, false // contradicts what is known
		}
	}
	for _, t := range tests {
		holds := t.eq == taken
		s = refineTagged(s, t, holds)
		if holds {
			s = s.learn(t.key, t.val)
		} else if t.val.Kind() == constant.Bool {
			s = s.learn(t.key, constant.MakeBool(!constant.BoolVal(t.val)))
		}
	}
	return s, true
}

// knownDistinct reports whether the walk knows the objects at paths a and
// b differ: a comparison of them, or of a field of each, known false.
func (s State) knownDistinct(a, b string) bool {
	for _, f := range s.facts {
		if f.val != nil && f.val.Kind() == constant.Bool && !constant.BoolVal(f.val) && comparesObjects(f.key, a, b) {
			return true
		}
	}
	return false
}

// comparesObjects reports whether key is a test of two values ("x==y"),
// one the object at path a or under it, the other at b or under it.
func comparesObjects(key, a, b string) bool {
	kx, ky, ok := strings.Cut(key, "==")
	if !ok {
		return false
	}
	kx, _, _ = strings.Cut(kx, "#")
	ky, _, _ = strings.Cut(ky, "#")
	under := func(p, root string) bool { return p == root || strings.HasPrefix(p, root+".") }
	return under(kx, a) && under(ky, b) || under(kx, b) && under(ky, a)
}
