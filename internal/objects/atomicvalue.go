package objects

import (
	"go/types"

	"golang.org/x/tools/go/ssa"

	"github.com/confinelint/confinelint/internal/lockop"
)

// A field of type sync/atomic.Value is a container of one element: what
// Store puts there, Load gives back (type-asserted), as for a slice
// field; so is an atomic.Pointer (a *func stored by Store(&fn), called
// as `(*p.Load())()`). A callback kept in one
// (`s.updateCallback.Store(cb)`, then `cb, ok :=
// s.updateCallback.Load().(func(...))`) is followed as one kept in a
// plain field.

// atomicValueField returns the field whose atomic.Value the method call
// c (Store or Load, by name) is made on, or nil.
func atomicValueField(c *ssa.CallCommon, name string) *types.Var {
	callee := c.StaticCallee()
	if callee != nil && callee.Origin() != nil {
		callee = callee.Origin() // atomic.Pointer[T]'s methods
	}
	if callee == nil || callee.Name() != name || callee.Pkg == nil || callee.Pkg.Pkg.Path() != "sync/atomic" || len(c.Args) == 0 {
		return nil
	}
	recv := callee.Signature.Recv()
	if recv == nil || NamedOf(recv.Type()) == nil {
		return nil
	}
	if n := NamedOf(recv.Type()).Obj().Name(); n != "Value" && n != "Pointer" {
		return nil
	}
	fa, ok := c.Args[0].(*ssa.FieldAddr)
	if !ok {
		return nil
	}
	return lockop.FieldOf(fa)
}

// atomicStored returns the value a Store call puts into a field's
// atomic.Value (its interface conversion undone), with the field's key.
func atomicStored(c *ssa.CallCommon) (any, ssa.Value) {
	f := atomicValueField(c, "Store")
	if f == nil || len(c.Args) != 2 {
		return nil, nil
	}
	v := c.Args[1]
	if mi, ok := v.(*ssa.MakeInterface); ok {
		v = mi.X
	}
	return elem(f), v
}

// atomicLoaded returns the key of the field whose atomic.Value v was
// loaded from, or nil: v is the Load call, or its type assertion
// (Underlying goes from the one to the other).
func atomicLoaded(v ssa.Value) any {
	switch u := v.(type) {
	case *ssa.TypeAssert:
		v = u.X
	case *ssa.Extract:
		if ta, ok := u.Tuple.(*ssa.TypeAssert); ok && u.Index == 0 {
			v = ta.X
		}
	}
	c, ok := v.(*ssa.Call)
	if !ok {
		return nil
	}
	if f := atomicValueField(&c.Call, "Load"); f != nil {
		return elem(f)
	}
	return nil
}
