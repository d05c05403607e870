package objects

import (
	"go/types"

	"golang.org/x/tools/go/ssa"
)

// Results of calls: an accessor (`func (r *T) Notify() <-chan bool {
// return r.ch }`) or a factory of callbacks (`func (r *T) Up() func() {
// return func() { r.down() } }`) hands out a value the caller then uses;
// following the value back through the call's returns finds where it
// comes from.

// Callees returns the package functions a call may run whose results can
// be followed: the static callee, or for an interface call the package's
// methods of that name on types implementing the interface. Nil when none
// is a package function.
func (x *Index) Callees(c *ssa.CallCommon) []*ssa.Function {
	if !c.IsInvoke() {
		callee := c.StaticCallee()
		if callee == nil {
			return nil
		}
		if o := callee.Origin(); o != nil {
			callee = o
		}
		if !x.funcSet[callee] {
			return nil
		}
		return []*ssa.Function{callee}
	}
	iface, ok := c.Value.Type().Underlying().(*types.Interface)
	if !ok {
		return nil
	}
	var out []*ssa.Function
	for _, fn := range x.funcs {
		recv := fn.Signature.Recv()
		if recv == nil || fn.Name() != c.Method.Name() || fn.Parent() != nil {
			continue
		}
		if types.Implements(recv.Type(), iface) {
			out = append(out, fn)
		}
	}
	return out
}

// ReturnedValues returns, for a single-result function, the value each of
// its returns gives.
func ReturnedValues(fn *ssa.Function) []ssa.Value {
	if fn.Signature.Results().Len() != 1 {
		return nil
	}
	var out []ssa.Value
	for _, b := range fn.Blocks {
		if r, ok := b.Instrs[len(b.Instrs)-1].(*ssa.Return); ok && len(r.Results) == 1 {
			out = append(out, r.Results[0])
		}
	}
	return out
}
