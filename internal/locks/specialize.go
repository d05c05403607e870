package locks

import (
	"go/constant"
	"go/token"
	"go/types"
	"slices"
	"strings"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// Calls with constant arguments for parameters the callee branches on
// (`c.allowed(s, true)` reaching `if !locked { c.mu.Lock() }`) use a
// summary of the callee walked with those parameters known (cond.go): the
// branch the constant rules out is dead, and what the live path takes is
// taken for sure.

// summaryFor returns the summary of t's callee for this call under s:
// specialized by the arguments (and, for a closure, the captured values)
// the callee branches on, where they are constants or s knows their
// value (removeMsg(seq, false) reaching `lock := func() { if needLock {
// mu.Lock() } }`).
func (w *walker) summaryFor(t *target, s State) *funcInfo {
	if t.sum != nil {
		return t.sum
	}
	sum := w.e.summaryOf(t.fn)
	if sum == nil || !t.exact || !w.e.p.FuncSet[t.fn] {
		return sum
	}
	var known []fact
	for _, in := range w.e.testedInputs(t.fn) {
		vals := t.vals
		if in.free {
			vals = t.bindVals
		}
		if in.index >= len(vals) || vals[in.index] == nil {
			continue
		}
		if in.asserted != nil {
			if val, ok := assertedAtCall(vals[in.index], in.asserted); ok {
				known = append(known, fact{key: in.key, val: val})
			}
			continue
		}
		if val, ok := w.valueAtCall(vals[in.index], t.owner, s); ok {
			known = append(known, fact{key: in.key, val: val})
		}
	}
	known = append(known, w.deferFacts...) // a deferred literal's test of a result (resultdefer.go)
	if len(known) == 0 {
		return sum
	}
	return w.e.specialized(t.fn, known, sum)
}

// valueAtCall is the value v has at a call made under s: a constant, or
// what the branches taken so far say of it. owner is the function v
// lives in when it is not the walked one (then only a constant counts).
func (w *walker) valueAtCall(v ssa.Value, owner *ssa.Function, s State) (constant.Value, bool) {
	v = cellValue(v)
	if c, ok := objects.Underlying(v).(*ssa.Const); ok {
		if c.IsNil() {
			return nilConst, true // `closeWithError(nil)` reaching `if err != nil`
		}
		return c.Value, c.Value != nil && c.Value.Kind() != constant.Unknown
	}
	if owner != nil && owner != w.fn {
		return nil, false
	}
	if key := w.condKey(v); key != "" {
		return s.known(key)
	}
	return nil, false
}

// assertedAtCall says whether v, an interface argument made here from a
// value of a concrete type, holds a asserted: a handler's type switch on
// the event it is passed (`case *ConnEnd:`) takes the case the caller's
// `&ConnEnd{}` picks.
func assertedAtCall(v ssa.Value, asserted types.Type) (constant.Value, bool) {
	mi, ok := cellValue(v).(*ssa.MakeInterface)
	if !ok || types.IsInterface(mi.X.Type()) {
		return nil, false
	}
	dyn := mi.X.Type()
	if iface, ok := asserted.Underlying().(*types.Interface); ok {
		return constant.MakeBool(types.Implements(dyn, iface)), true
	}
	return constant.MakeBool(types.Identical(dyn, asserted)), true
}

// specialized walks fn with known parameter values, once per set of
// values; generic is the answer inside a recursion.
func (e *engine) specialized(fn *ssa.Function, known []fact, generic *funcInfo) *funcInfo {
	slices.SortFunc(known, factLess)
	var key strings.Builder
	for _, f := range known {
		key.WriteString(f.key + "=" + f.val.ExactString() + ";")
	}
	k := specKey{fn, key.String()}
	if info, ok := e.specials[k]; ok {
		return info
	}
	if e.specializing[fn] {
		return generic
	}
	e.specializing[fn] = true
	defer delete(e.specializing, fn)
	entry := e.declaredEntry(fn)
	entry.facts = known
	info := &funcInfo{}
	cur := e.cur
	e.walk(fn, info, entry, false)
	e.cur = cur
	e.specials[k] = info
	return info
}

type specKey struct {
	fn    *ssa.Function
	known string
}

// input is a parameter or free variable a function branches on, with the
// key its conditions have inside it (condKey).
type input struct {
	free  bool
	index int
	key   string
	// asserted: the input is tested by a type assertion to this type
	// (key names the assertion's ok), not compared to a constant.
	asserted types.Type
}

// testedInputs lists the parameters and free variables fn branches on
// directly (`if p`, `if !p`, `if p == K`, `if p != K`; a captured
// variable read from its cell), and the parameters it captures for
// closures it makes that branch on them.
func (e *engine) testedInputs(fn *ssa.Function) []input {
	if ins, ok := e.tested[fn]; ok {
		return ins
	}
	e.tested[fn] = nil // ends a recursion through capturedTested
	var out []input
	add := func(in input) {
		if in.index >= 0 && !slices.Contains(out, in) {
			out = append(out, in)
		}
	}
	for _, v := range branchedOn(fn) {
		in := input{index: -1, key: condKeyIn(fn, v)}
		if x, ok := v.(*ssa.Extract); ok && x.Index == 1 {
			if ta, ok := x.Tuple.(*ssa.TypeAssert); ok {
				in.asserted, v = ta.AssertedType, ta.X // `_, ok := p.(T)`, a type switch's case
			}
		}
		if u, ok := v.(*ssa.UnOp); ok && u.Op == token.MUL {
			if fv, ok := u.X.(*ssa.FreeVar); ok {
				v = fv // a captured variable's cell
			}
		}
		switch x := v.(type) {
		case *ssa.Parameter:
			in.index = slices.Index(fn.Params, x)
		case *ssa.FreeVar:
			in.free, in.index = true, slices.Index(fn.FreeVars, x)
		}
		add(in)
	}
	for _, b := range fn.Blocks {
		for _, instr := range b.Instrs {
			switch x := instr.(type) {
			case *ssa.MakeClosure:
				for _, i := range e.capturedTested(fn, x) {
					add(input{index: i, key: condKeyIn(fn, fn.Params[i])})
				}
			case *ssa.Call:
				for _, i := range e.passedTested(fn, x) {
					add(input{index: i, key: condKeyIn(fn, fn.Params[i])})
				}
			}
		}
	}
	e.tested[fn] = out
	return out
}

// passedTested lists the parameters of fn that it passes on, as they are,
// to a static callee of the package that branches on them (nats-server's
// pubAllowedFullCheck(subject, fullCheck, hasLock) handing both flags to
// pubAllowedWithResp): a caller's constant for them decides the callee's
// branch too.
func (e *engine) passedTested(fn *ssa.Function, call *ssa.Call) []int {
	callee := call.Call.StaticCallee()
	if callee == nil || !e.p.FuncSet[callee] {
		return nil
	}
	var out []int
	for _, in := range e.testedInputs(callee) {
		if in.free || in.index >= len(call.Call.Args) {
			continue
		}
		if p, ok := call.Call.Args[in.index].(*ssa.Parameter); ok {
			if i := slices.Index(fn.Params, p); i >= 0 {
				out = append(out, i)
			}
		}
	}
	return out
}

// capturedTested lists the parameters of fn that closure mc captures
// (in a cell stored once) and branches on.
func (e *engine) capturedTested(fn *ssa.Function, mc *ssa.MakeClosure) []int {
	cl, ok := mc.Fn.(*ssa.Function)
	if !ok {
		return nil
	}
	var out []int
	for _, in := range e.testedInputs(cl) {
		if !in.free || in.index >= len(mc.Bindings) {
			continue
		}
		if p, ok := cellValue(mc.Bindings[in.index]).(*ssa.Parameter); ok {
			if i := slices.Index(fn.Params, p); i >= 0 {
				out = append(out, i)
			}
		}
	}
	return out
}

// cellValue is what v holds: the one value stored into v when it is a
// captured variable's cell, else v.
func cellValue(v ssa.Value) ssa.Value {
	if a, ok := v.(*ssa.Alloc); ok {
		if stored := objects.StoredOnce(a); stored != nil {
			return stored
		}
	}
	return v
}

// branchedOn lists the values fn's If conditions test against constants
// or for truth, with the !s removed.
func branchedOn(fn *ssa.Function) []ssa.Value {
	var out []ssa.Value
	for _, b := range fn.Blocks {
		ifi, ok := lastIf(b)
		if !ok {
			continue
		}
		cond, _ := stripNot(ifi.Cond)
		if bin, ok := cond.(*ssa.BinOp); ok && (bin.Op == token.EQL || bin.Op == token.NEQ) {
			out = append(out, bin.X, bin.Y)
			continue
		}
		out = append(out, cond)
	}
	return out
}
