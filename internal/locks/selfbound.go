package locks

import (
	"go/token"
	"go/types"
	"strconv"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/objects"
)

// A callback registered on the object it captured (c.onEvent = func()
// { c.mu.Lock() ... }, or the method value c.onEvent = c.handle) runs, when
// called through that field of an object, with that object: calling
// x.onEvent() while holding x.mu locks x.mu again. The same holds for a
// field of a struct the object holds (c.hub.onAlive). selfBound records
// a selfBinding for each such function.

// A selfBinding is which free variable (or, -1, the method receiver) of
// a self-bound function holds the object, and the pointer or value
// fields, outermost first, from that object to the struct whose field
// holds the function (c.hub.onAlive = h: hub).
type selfBinding struct {
	k   int
	via string
}

// maxSelfHops bounds the fields between the captured object and the
// struct holding the callback (a handlers struct of the client).
const maxSelfHops = 2

// scanSelfBound finds the functions stored into a field of an object they
// capture, or of a struct reached from it through up to maxSelfHops
// fields, in every store of them: stored directly (x.F = func() {...})
// or through a setter (x.SetF(func() {...}), where SetF stores its
// parameter into a field of its receiver or another parameter, or of a
// struct one of them holds).
func (e *engine) scanSelfBound() map[*ssa.Function]selfBinding {
	out := map[*ssa.Function]selfBinding{}
	bad := map[*ssa.Function]bool{}
	note := func(val ssa.Value, holders []heldObject) {
		mc, ok := objects.Underlying(val).(*ssa.MakeClosure)
		if !ok {
			return
		}
		f, ok := mc.Fn.(*ssa.Function)
		if !ok {
			return
		}
		b := selfBinding{k: -2}
		for _, lv := range holders {
			for i, v := range mc.Bindings {
				if objects.Underlying(v) == objects.Underlying(lv.obj) && b.k == -2 {
					b = selfBinding{k: i, via: lv.via}
				}
			}
		}
		if m := e.boundMethod(f); m != nil {
			f = m
			if b.k == 0 {
				b.k = -1 // the receiver
			}
		}
		f = e.canonical(f)
		if old, seen := out[f]; b.k == -2 || seen && old != b {
			bad[f] = true
		}
		out[f] = b
	}
	type setter struct {
		val, obj int
		via      string
	}
	setters := map[*ssa.Function]setter{}
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
				if vp := paramIndexOf(fn, st.Val); vp >= 0 && fn.Parent() == nil {
					if lv, op := setterHolder(fn, fa.X); op >= 0 {
						setters[fn] = setter{vp, op, lv}
						continue
					}
				}
				note(st.Val, holderObjects(fa.X))
			}
		}
	}
	for fn, set := range setters {
		for _, c := range e.objs.CallsOf(fn) {
			args := c.Common().Args
			if set.val >= len(args) || set.obj >= len(args) {
				continue
			}
			holders := holderObjects(args[set.obj])
			for i := range holders {
				holders[i].via += set.via
			}
			note(args[set.val], holders)
		}
	}
	for f := range bad {
		delete(out, f)
	}
	return out
}

// A heldObject is a value the struct holding a callback's field was
// reached from, and the fields on the way.
type heldObject struct {
	obj ssa.Value
	via string
}

// holderObjects lists x itself and the objects it was reached from
// through field selections (a load of a pointer field, or a value
// field's address), up to maxSelfHops fields, nearest first.
func holderObjects(x ssa.Value) []heldObject {
	out := []heldObject{{obj: x}}
	via := ""
	for range maxSelfHops {
		fa := holderField(x)
		if fa == nil {
			break
		}
		via = fieldKey(fa) + "/" + via
		x = fa.X
		out = append(out, heldObject{obj: x, via: via})
	}
	return out
}

// holderField is the field selection x was read from: the address of a
// value field (&c.hub) or the load of a pointer field (c.hub).
func holderField(x ssa.Value) *ssa.FieldAddr {
	if u, ok := x.(*ssa.UnOp); ok && u.Op == token.MUL {
		x = u.X
	}
	fa, _ := x.(*ssa.FieldAddr)
	return fa
}

// fieldKey names the field fa selects, with its struct's type.
func fieldKey(fa *ssa.FieldAddr) string {
	return types.TypeString(fa.X.Type(), nil) + "." + strconv.Itoa(fa.Field)
}

// setterHolder reports which parameter of fn the struct x was reached
// from, and the fields on the way; -1 when none.
func setterHolder(fn *ssa.Function, x ssa.Value) (string, int) {
	for _, lv := range holderObjects(x) {
		if i := paramIndexOf(fn, lv.obj); i >= 0 {
			return lv.via, i
		}
	}
	return "", -1
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
	b, ok := w.e.selfBound[fn]
	if !ok {
		return target{fn: fn, vals: candidateArgs(fn, args), exact: only}
	}
	var obj ssa.Value
	for _, lv := range holderObjects(fa.X) {
		if lv.via == b.via && (b.via == "" || boundType(fn, b.k, lv.obj.Type())) {
			obj = lv.obj
		}
	}
	switch {
	case obj == nil: // the holder struct was not reached from its object
		return target{fn: fn, vals: candidateArgs(fn, args), exact: only}
	case b.k == -1:
		return target{fn: fn, vals: append([]ssa.Value{obj}, args...), exact: only}
	}
	binds := make([]ssa.Value, len(fn.FreeVars))
	binds[b.k] = obj
	return target{fn: fn, vals: args, bindVals: binds, exact: only, objs: w.e.objs}
}

// boundType reports whether fn's receiver (k -1) or free variable k can
// hold a value of type t (itself or, spilled, a pointer to it).
func boundType(fn *ssa.Function, k int, t types.Type) bool {
	var v types.Type
	switch {
	case k == -1 && len(fn.Params) > 0:
		v = fn.Params[0].Type()
	case k >= 0 && k < len(fn.FreeVars):
		v = fn.FreeVars[k].Type()
	default:
		return false
	}
	if p, ok := v.(*types.Pointer); ok && types.Identical(p.Elem(), t) {
		return true
	}
	return types.Identical(v, t)
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
