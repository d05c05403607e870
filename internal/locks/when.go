package locks

import (
	"go/constant"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// A lock taken under one condition in the caller and under the same
// condition in the callee: `if !c.batched { c.lock.Lock() }` in Stop and
// again in State, which Stop calls (through an error's implicit Error)
// while the lock may be held. Each take alone is conditional, so neither
// is a double lock by the usual rule; together, on the paths where the
// caller holds the lock the callee takes it too (podman's batched
// container operations). A take records the one branch condition that
// decides it (take.when), carried up through unconditional calls with
// its path rewritten to the caller's; a maybe-hold tagged with that same
// condition is then held exactly where the callee takes it.

// onlyWhen returns the condition under which a take in block b happens,
// when one branch decides it: b is on every path from one side of an If
// that every path of the function passes, and on no path from the other.
func (w *walker) onlyWhen(b *ssa.BasicBlock) *cond {
	for _, ib := range w.fn.Blocks {
		ifi, ok := lastIf(ib)
		if !ok || !ib.Dominates(b) || w.returnAvoiding(w.fn.Blocks[0], ib) {
			continue
		}
		t, ok := w.condTest(ifi.Cond)
		if !ok {
			continue
		}
		for side, s := range ib.Succs {
			if len(s.Preds) != 1 || !s.Dominates(b) || w.returnAvoiding(s, b) {
				continue
			}
			c := normalCond(cond{key: t.key, val: t.val, neg: t.eq != (side == 0)})
			return &c
		}
	}
	return nil
}

// lastIf returns b's If terminator.
func lastIf(b *ssa.BasicBlock) (*ssa.If, bool) {
	if len(b.Instrs) == 0 {
		return nil, false
	}
	ifi, ok := b.Instrs[len(b.Instrs)-1].(*ssa.If)
	return ifi, ok
}

// returnAvoiding reports whether a return is reachable from from without
// passing through avoid.
func (w *walker) returnAvoiding(from, avoid *ssa.BasicBlock) bool {
	if from == avoid {
		return false
	}
	seen := map[*ssa.BasicBlock]bool{}
	stack := []*ssa.BasicBlock{from}
	for len(stack) > 0 {
		b := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[b] || b == avoid {
			continue
		}
		seen[b] = true
		if len(b.Instrs) == 0 {
			continue
		}
		if _, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok {
			return true
		}
		stack = append(stack, b.Succs...)
	}
	return false
}

// normalCond states a boolean "differs from" as "equals" the other value,
// so that tags and take conditions compare.
func normalCond(c cond) cond {
	if c.neg && c.val != nil && c.val.Kind() == constant.Bool {
		c.val, c.neg = constant.MakeBool(!constant.BoolVal(c.val)), false
	}
	return c
}

// whenInCaller rewrites a callee take's condition to this function's
// paths, ok false when its path does not map.
func (w *walker) whenInCaller(t *target, c *cond) (cond, bool) {
	if c == nil {
		return cond{}, false
	}
	path, typ, found := strings.Cut(c.key, "#")
	if !found {
		return cond{}, false
	}
	p, ok := w.calleePath(t, path)
	if !ok {
		return cond{}, false
	}
	c2 := *c
	c2.key = p + "#" + typ
	return c2, true
}

// sameCondition reports whether the callee's take, conditional on its
// one branch only, happens wherever old is held: old is a maybe-hold
// tagged with that condition alone. The function must not store the
// field the condition reads (`c.batched = true` once locked turns the callee's
// take off).
func (w *walker) sameCondition(old Hold, tk take, t *target) (cond, bool) {
	c, ok := w.calleeCondition(tk, t)
	if !ok || w.storesField(c.key) {
		return cond{}, false
	}
	if old.Maybe {
		cs := old.conds()
		return c, len(cs) == 1 && normalCond(cs[0]).same(c) && !old.Loop
	}
	return c, false
}

// calleeCondition returns the one branch condition that decides the
// callee's take, in this function's paths, when the call runs that
// callee for sure and on every path of its own (sameCondition,
// decidedHere).
func (w *walker) calleeCondition(tk take, t *target) (cond, bool) {
	if tk.when == nil || tk.branch != 1 || t.cond != 0 || !t.exact {
		return cond{}, false
	}
	return w.whenInCaller(t, tk.when)
}

// storesField reports whether the function stores to a field named as
// the last element of key's path.
func (w *walker) storesField(key string) bool {
	path, _, _ := strings.Cut(key, "#")
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return true // not a field: a parameter or local the caller may set
	}
	return w.storesFieldNamed(path[i+1:])
}

// storesFieldNamed reports whether the function stores to a field of
// that name.
func (w *walker) storesFieldNamed(name string) bool {
	for _, b := range w.fn.Blocks {
		for _, instr := range b.Instrs {
			if st, ok := instr.(*ssa.Store); ok {
				if fa, ok := st.Addr.(*ssa.FieldAddr); ok && fieldName(fa) == name {
					return true
				}
			}
		}
	}
	return false
}

// fieldName names the field fa addresses.
func fieldName(fa *ssa.FieldAddr) string {
	if f := lockop.FieldOf(fa); f != nil {
		return f.Name()
	}
	return ""
}

// condText says a condition in words for a finding: "batched is false".
func condText(c cond) string {
	path, _, _ := strings.Cut(c.key, "#")
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		path = path[i+1:]
	}
	op := " is "
	if c.neg {
		op = " is not "
	}
	val := "nil"
	if name := sentinelName(c.val); name != "" {
		val = name
	} else if c.val != nil {
		val = c.val.ExactString()
	}
	return path + op + val
}

// decidedHere returns the callee's take condition, in this function's
// paths, when the walk knows it true at the call: the callee takes the
// lock only where err is not nil, and the caller passes err where it
// tested it not nil (thanos' SyncMultiError.Add calling itself instead
// of its inner list's Add). A field the function stores may have
// changed since it was tested.
func (w *walker) decidedHere(tk take, t *target, s State) (cond, bool) {
	c, ok := w.calleeCondition(tk, t)
	if !ok || !condKnown(c, s) && !sentinelFailure(c, s) {
		return cond{}, false
	}
	if path, _, _ := strings.Cut(c.key, "#"); strings.Contains(path, ".") && w.storesField(c.key) {
		return cond{}, false
	}
	return c, true
}

// condKnown says whether s knows c true; a nil test is also known from
// the walk's "!=nil" fact.
func condKnown(c cond, s State) bool {
	if known, holds := c.holdsIn(s); known {
		return holds
	}
	if c.val != nilConst {
		return false
	}
	if c.neg && holdsInside(s, c.key) {
		return true
	}
	v, ok := s.known(c.key + "!=nil")
	return ok && v.Kind() == constant.Bool && constant.BoolVal(v) == c.neg
}

// decidedText says why c, a callee's condition, holds here: "a != nil,
// as it is here", or, for a nil test known from a lock held inside the
// object, "the Account is not nil, as its lock held here shows".
func (w *walker) decidedText(c cond, s State) string {
	if name := sentinelName(c.val); name != "" && !condKnown(c, s) {
		path, _, _ := strings.Cut(c.key, "#")
		return w.sourcePath(path) + " is " + name + ", a failure it may be here, where it is not nil"
	}
	if !(c.val == nilConst && c.neg && holdsInside(s, c.key)) {
		return w.condText(c) + ", as it is here"
	}
	path, typ, _ := strings.Cut(c.key, "#")
	name := w.sourcePath(path)
	if strings.ContainsAny(name, ":[]()") {
		typ = strings.TrimLeft(typ, "*")
		name = "the " + typ[strings.LastIndexByte(typ, '.')+1:]
	}
	return name + " is not nil, as its lock held here shows"
}

// holdsInside reports whether s holds a lock inside the object at path
// key: a lock of a nil pointer's struct cannot have been taken, so key
// is not nil (a method's `if a == nil { return }` guard, called on the
// account whose lock the caller holds).
func holdsInside(s State, key string) bool {
	path, _, _ := strings.Cut(key, "#")
	for _, h := range s.holds {
		if !h.Maybe && path != "" && strings.HasPrefix(h.Path, path+".") {
			return true
		}
	}
	return false
}

// onlyHere reports whether the walked block runs exactly where c holds:
// a call on that branch keeps its callee's take under the one condition
// (a function calling itself under the test its own take is under).
func (w *walker) onlyHere(c cond) bool {
	own := w.onlyWhen(w.blk)
	return own != nil && own.same(c)
}
