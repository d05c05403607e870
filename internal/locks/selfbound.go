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
// capture, in every store of them.
func (e *engine) scanSelfBound() map[*ssa.Function]int {
	out := map[*ssa.Function]int{}
	bad := map[*ssa.Function]bool{}
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
				mc, ok := objects.Underlying(st.Val).(*ssa.MakeClosure)
				if !ok {
					continue
				}
				f, ok := mc.Fn.(*ssa.Function)
				if !ok {
					continue
				}
				k := -2
				base := objects.Underlying(fa.X)
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
		}
	}
	for f := range bad {
		delete(out, f)
	}
	return out
}

// fieldTarget is the target for fn called through the field selected by
// fa (x.F()): bound to x when fn captured the object it was stored on.
func (w *walker) fieldTarget(fn *ssa.Function, fa *ssa.FieldAddr, args []ssa.Value, only bool) target {
	k, ok := w.e.selfBound[fn]
	if !ok {
		return target{fn: fn, vals: args}
	}
	if k == -1 {
		return target{fn: fn, vals: append([]ssa.Value{fa.X}, args...), exact: only}
	}
	binds := make([]ssa.Value, len(fn.FreeVars))
	binds[k] = fa.X
	return target{fn: fn, vals: args, bindVals: binds, exact: only, objs: w.e.objs}
}
