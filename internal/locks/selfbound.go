package locks

import (
	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// A callback registered on the object it captured (c.onEvent = func()
// { c.mu.Lock() ... }, or the method value c.onEvent = c.handle) runs, when
// called through that field of an object, with that object: calling
// x.onEvent() while holding x.mu locks x.mu again. selfBound records, for
// such functions, which free variable (or, -1, the method receiver)
// holds the object whose field it was stored into.

// scanSelfBound finds the functions stored into a field of an object they
// capture, in every store of them: stored directly (x.F = func() {...})
// or through a setter (x.SetF(func() {...}), where SetF stores its
// parameter into a field of its receiver or another parameter).
func (e *engine) scanSelfBound() map[*ssa.Function]int {
	out := map[*ssa.Function]int{}
	bad := map[*ssa.Function]bool{}
	note := func(val, obj ssa.Value) {
		mc, ok := objects.Underlying(val).(*ssa.MakeClosure)
		if !ok {
			return
		}
		f, ok := mc.Fn.(*ssa.Function)
		if !ok {
			return
		}
		k := -2
		base := objects.Underlying(obj)
		for i, v := range mc.Bindings {
			if objects.Underlying(v) == base {
				k = i
			}
		}
		if m := e.boundMethod(f); m != nil {
			f = m
			if k == 0 {
				k = -1 // the receiver
			}
		}
		f = e.canonical(f)
		if old, seen := out[f]; k == -2 || seen && old != k {
			bad[f] = true
		}
		out[f] = k
	}
	setters := map[*ssa.Function][2]int{} // setter: indexes of the stored param and of the object
	for _, fn := range e.p.Funcs {
		for _, b := range fn.Blocks {
			for _, instr := range b.Instrs {
				st, ok := instr.(*ssa.Store)
				if !ok {
					continue
				}
				fa, ok := st.Addr.(*ssa.FieldAddr)
				if !ok {
					continue
				}
				if vp, op := paramIndexOf(fn, st.Val), paramIndexOf(fn, fa.X); vp >= 0 && op >= 0 && fn.Parent() == nil {
					setters[fn] = [2]int{vp, op}
					continue
				}
				note(st.Val, fa.X)
			}
		}
	}
	for fn, set := range setters {
		for _, c := range e.objs.CallsOf(fn) {
			if args := c.Common().Args; set[0] < len(args) && set[1] < len(args) {
				note(args[set[0]], args[set[1]])
			}
		}
	}
	for f := range bad {
		delete(out, f)
	}
	return out
}

// paramIndexOf is the index of the parameter v is (through conversions),
// -1 if it is none of fn's.
func paramIndexOf(fn *ssa.Function, v ssa.Value) int {
	p, ok := objects.Underlying(v).(*ssa.Parameter)
	if !ok {
		return -1
	}
	for i, q := range fn.Params {
		if q == p {
			return i
		}
	}
	return -1
}

// fieldTarget is the target for fn called through the field selected by
// fa (x.F()): bound to x when fn captured the object it was stored on.
func (w *walker) fieldTarget(fn *ssa.Function, fa *ssa.FieldAddr, args []ssa.Value, only bool) target {
	k, ok := w.e.selfBound[fn]
	if !ok {
		return target{fn: fn, vals: candidateArgs(fn, args), exact: only}
	}
	if k == -1 {
		return target{fn: fn, vals: append([]ssa.Value{fa.X}, args...), exact: only}
	}
	binds := make([]ssa.Value, len(fn.FreeVars))
	binds[k] = fa.X
	return target{fn: fn, vals: args, bindVals: binds, exact: only, objs: w.e.objs}
}

// candidateArgs are the values of fn's parameters when a func value
// holding fn is called with args. A method reached from a method value
// (x.OnItem = s.handle) has its receiver bound where the value was made:
// not known at the call, so no lock of it is named as the caller's.
func candidateArgs(fn *ssa.Function, args []ssa.Value) []ssa.Value {
	if fn.Signature.Recv() != nil && len(fn.Params) == len(args)+1 {
		return append([]ssa.Value{nil}, args...)
	}
	return args
}
